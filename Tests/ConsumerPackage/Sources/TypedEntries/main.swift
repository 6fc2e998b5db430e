import RVS_PersistentPrefs

enum Appearance: String, Codable, Sendable { case system, light, dark }
struct WindowFrame: Codable, Equatable, Sendable { var x = 0.0, y = 0.0, width = 800.0, height = 600.0 }

final class Settings: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("appearance") var appearance = Appearance.system
    @Entry("window") var window = WindowFrame()
    @Entry("volume") var volume: Float = 0.5
    @Entry("lastOpened") var lastOpened: Date? = nil
}

let settings = Settings(key: "com.example.settings")
settings.launchCount += 1
settings.appearance = .dark
settings.window.width = 1024          // one locked update of the "window" entry
settings.lastOpened = nil             // removes the entry
print(settings.keys)                  // ["appearance", "lastOpened", "launchCount", "volume", "window"]

// ---- End of the example. What follows checks that it behaves as written. ----

import Foundation

@MainActor func check(_ condition: Bool, _ message: String) {
    precondition(condition, message + " (lastError: \(String(describing: settings.lastError)))")
}

check(settings.lastError == nil, "the example's last operation failed")
check(settings.keys == ["appearance", "lastOpened", "launchCount", "volume", "window"], "keys does not list every @Entry name, sorted")

// What the example wrote, read back by a new instance, which shares nothing in memory with the first.
let reloaded = Settings(key: "com.example.settings")
check(reloaded.launchCount >= 1, "launchCount was not stored")
check(reloaded.appearance == .dark, "appearance did not read back as .dark")
check(reloaded.window == WindowFrame(width: 1024), "the in-place change of window did not read back")
check(reloaded.volume == 0.5, "an absent Float entry did not read as its default")
check(reloaded.lastOpened == nil, "lastOpened is not nil")

// Stored as readable property lists: the enum as its raw value, the struct as its structure, nothing for
// the entries left at their defaults (reading a default writes nothing), and no entry for the nil Optional.
let stored = reloaded.values
check(stored["appearance"] as? String == "dark", "appearance is not stored as its raw value")
let window = stored["window"] as? [String: Any]
check(window?["width"] as? Double == 1024 && window?["height"] as? Double == 600, "window is not stored as a dictionary")
check(stored["volume"] == nil && stored["lastOpened"] == nil, "a default or nil entry was written")

// A date set and removed again.
let now = Date()
settings.lastOpened = now
check(reloaded.lastOpened == now, "lastOpened did not read back")
check(reloaded.values["lastOpened"] is Date, "a Date entry is not stored as a date")
settings.lastOpened = nil
check(reloaded.values["lastOpened"] == nil, "setting an Optional entry to nil did not remove it")

// An increment that no other process can interleave with.
let before = settings.launchCount
settings.modify(\.$launchCount) { $0 += 1 }
check(reloaded.launchCount == before + 1, "modify did not increment launchCount")

// A value of the wrong shape reads as the default, and says so.
settings["window"] = "not a frame"
check(reloaded.window == WindowFrame(), "an undecodable window did not read as the default")
if case .invalidStoredEntry(let entry, _)? = reloaded.lastError {
    check(entry == "window", "lastError names the wrong entry")
} else {
    preconditionFailure("an undecodable entry did not set lastError: \(String(describing: reloaded.lastError))")
}
settings.window = WindowFrame()
check(reloaded.window == WindowFrame() && reloaded.lastError == nil, "writing the entry did not replace the undecodable value")
print("TypedEntries: behaves as written")
