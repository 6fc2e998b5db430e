// The same public API, compiled in the Swift 5 language mode (see Package.swift), since apps ported from
// Apple platforms often still use it: an untyped subclass, typed entries, observation, an atomic update.
import Foundation
import RVS_PersistentPrefs

final class LegacyPreferences: RVS_PersistentPrefs {
    override var keys: [String] { ["appearance"] }
    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }
}

final class Settings: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("volume") var volume: Float = 0.5
}

let legacy = LegacyPreferences(key: "swift5.legacy")
var heard: [String] = []
let token = legacy.observe(\.appearance, options: [.new]) { _, change in heard.append(change.newValue ?? "-") }
legacy.appearance = "dark"
precondition(legacy.lastError == nil && heard == ["dark"], "untyped subclass in Swift 5 mode: \(heard)")

let settings = Settings(key: "swift5.settings")
settings.volume = 0.8
settings.modify(\.$launchCount) { $0 += 1 }
precondition(settings.lastError == nil, "typed entries in Swift 5 mode: \(String(describing: settings.lastError))")
precondition(Settings(key: "swift5.settings").volume == 0.8, "a Float entry reads back equal")
precondition(legacy["appearance"] as? String == "dark")
withExtendedLifetime(token) {}
print("Swift5Mode: behaves as written")
