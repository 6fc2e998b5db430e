// The `bindings` prompt: a typed subclass, its observer, and the commands typed at it.

import Foundation
import RVS_PersistentPrefs
import PrefsTool

/// A typed subclass: each entry declared once, with its name, type and default. `keys` lists the four
/// `@Entry` names by itself, so the subscript refuses every other name.
final class BindingsPreferences: RVS_PersistentPrefs {
    static let storageKey = "Bindings"

    @Entry("userName") var userName = "Anonymous"
    @Entry("launchCount") var launchCount = 0
    @Entry("darkMode") var darkMode = false
    /// Constrained (SPEC §14): a write outside 0…1 is refused, and the range is in the class's schema.
    @Entry("volume", range: 0.0...1.0, description: "Playback volume, from 0 (silent) to 1 (full)") var volume = 0.5
}

/// One prompt session: the preferences, their observer, and the commands.
final class BindingsSession {
    let preferences: BindingsPreferences
    private var observation: PrefsObservation?

    init() throws {
        preferences = BindingsPreferences(key: BindingsPreferences.storageKey)
        try preferences.throwIfFailed()
        // Runs after every successful write through `preferences`, and never after a rejected one.
        observation = preferences.observe(\.values, options: [.old, .new]) { _, change in
            Self.printChanges(from: change.oldValue ?? [:], to: change.newValue ?? [:])
        }
    }

    deinit { observation?.invalidate() }

    /// One `old → new` line per entry that changed; a write that changed nothing says so, since the
    /// observer hears every successful write.
    static func printChanges(from old: [String: Any], to new: [String: Any]) {
        let before = PropertyListValue(old)?.dictionaryValue ?? [:]
        let after = PropertyListValue(new)?.dictionaryValue ?? [:]
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        guard !changed.isEmpty else {
            Console.say("  ↳ saved; every entry is as it was")
            return
        }
        for name in changed {
            let describe = { (value: PropertyListValue?) in value.map(PropertyListPrinter.readable) ?? "(none)" }
            Console.say("  ↳ \(name): \(describe(before[name])) → \(describe(after[name]))")
        }
    }

    /// Carries out one command line; returns `false` when the session should end.
    func handle(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return true }
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        switch (parts[0], parts.count) {
        case ("quit", 1), ("exit", 1):
            return false
        case ("help", 1):
            Console.say(Bindings.commandHelp)
        case ("show", 1):
            show()
        case ("set", 3):
            set(parts[1], to: Self.unquoted(parts[2]))
        case ("remove", 2):
            preferences[parts[1]] = nil
            reportRejection()
        case ("clear", 1):
            preferences.clear()
            reportRejection()
        case ("set", _), ("remove", _), ("show", _), ("clear", _), ("help", _), ("quit", _), ("exit", _):
            Console.complain("usage: \(Self.usage(of: parts[0]))")
        default:
            Console.complain("unknown command '\(parts[0])'; type help for the commands")
        }
        return true
    }

    private static func usage(of command: String) -> String {
        switch command {
        case "set": return "set KEY VALUE"
        case "remove": return "remove KEY"
        default: return command
        }
    }

    /// A value typed in quotes means the text inside them.
    private static func unquoted(_ text: String) -> String {
        for quote in ["\"", "'"] where text.count >= 2 && text.hasPrefix(quote) && text.hasSuffix(quote) {
            return String(text.dropFirst().dropLast())
        }
        return text
    }

    /// Writes through the typed property when there is one, so that the value has its type; any other
    /// name goes through the subscript, where the library checks it against `keys`.
    private func set(_ key: String, to text: String) {
        switch key {
        case "userName":
            preferences.userName = text
        case "launchCount":
            guard let count = Int(text) else { return reject("launchCount takes a whole number such as 3, not \(PropertyListPrinter.quoted(text))") }
            preferences.launchCount = count
        case "darkMode":
            switch text.lowercased() {
            case "yes", "true", "on", "1": preferences.darkMode = true
            case "no", "false", "off", "0": preferences.darkMode = false
            default: return reject("darkMode takes yes or no, not \(PropertyListPrinter.quoted(text))")
            }
        case "volume":
            guard let volume = Double(text), volume.isFinite else { return reject("volume takes a number such as 0.8, not \(PropertyListPrinter.quoted(text))") }
            preferences.volume = volume
        default:
            let value: PropertyListValue
            do {
                value = try ValueParser.untyped(text)
            } catch {
                return reject(error.message)
            }
            preferences[key] = value.nativeValue
        }
        reportRejection()
    }

    private func reject(_ reason: String) {
        Console.say("  rejected: \(reason); nothing was written")
    }

    /// The library tells the outcome of the last operation in `lastError`: `nil` after a success.
    private func reportRejection() {
        if let error = preferences.lastError {
            Console.say("  lastError: \(error); nothing was written")
        }
    }

    private func show() {
        let stored = preferences.values
        if let error = preferences.lastError { return Console.say("  lastError: \(error)") }
        let collection = PropertyListValue(stored) ?? .dictionary([:])
        Console.say("  \(BindingsPreferences.storageKey) = \(PropertyListPrinter.readable(collection))")
        let properties: [(String, String)] = [
            ("userName", PropertyListPrinter.quoted(preferences.userName)),
            ("launchCount", String(preferences.launchCount)),
            ("darkMode", String(preferences.darkMode)),
            ("volume", String(preferences.volume)),
        ]
        for (name, value) in properties {
            let note = stored[name] == nil ? "   (nothing stored: the typed property's default)" : ""
            Console.say("  " + name.padding(toLength: 12, withPad: " ", startingAt: 0) + "= " + (note.isEmpty ? value : value.padding(toLength: max(value.count, 11), withPad: " ", startingAt: 0)) + note)
        }
    }
}
