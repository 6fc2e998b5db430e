// `harness bindings`: an interactive prompt on a typed RVS_PersistentPrefs subclass, with an observer
// that prints `old → new` after every successful write, the command-line counterpart of the macOS
// harness app that binds the preferences to controls through key-value observing.
//
// It reads commands from standard input, so it works typed by a person (with a prompt, shown only when
// standard input is a terminal) and with commands piped in (the end of the input ends the session).

import Foundation
import Glibc
import RVS_PersistentPrefs

enum Bindings: Subcommand {
    static let name = "bindings"
    static let summary = "an interactive prompt on a typed subclass; an observer prints old → new for each write"

    static let usage = """
        usage: harness bindings [--directory PATH]

        An interactive prompt on BindingsPreferences, a typed subclass of RVS_PersistentPrefs whose entries
        are userName (text), launchCount (a whole number), darkMode (yes or no) and volume (a number). An
        observer registered with observe(\\.values, options: [.old, .new]) prints `old → new` after every
        successful write, and nothing after a rejected one.

        \(commandHelp)

        Commands are read from standard input: type them, or pipe them in, for example
            printf 'set userName Ada\\nshow\\n' | harness bindings
        The session ends with quit or at the end of the input, with exit status 0.

        Without --directory the demo works in a fresh temporary directory and removes it at the end.
        """

    static let commandHelp = """
        Commands:
          show             the stored collection and the typed properties
          set KEY VALUE    a write through the typed property (userName, launchCount, darkMode, volume);
                           any other KEY goes through the subscript, and the library rejects it
          remove KEY       removes one entry (the typed property falls back to its default)
          clear            removes the whole collection
          help             this list
          quit             ends the session (so does the end of the input)
        """

    /// The entry point of `harness bindings`.
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        try arguments.finish { "unexpected argument '\($0)'; the commands are read from standard input (see --help)" }
        let workspace = try Workspace.make(context)
        defer { workspace.finish() }
        workspace.pointLibraryHere()
        let interactive = Console.inputIsTerminal
        if interactive {
            let lifetime = workspace.isTemporary ? " (a temporary directory, removed when the session ends; use --directory PATH to keep the file)" : ""
            explain("BindingsPreferences keeps userName, launchCount, darkMode and volume in the collection \(BindingsPreferences.storageKey) of \(workspace.applicationDomainFile)\(lifetime). Type help for the commands.")
        }
        let session = try BindingsSession()
        while true {
            if interactive { Console.write("bindings> ") }
            guard let line = readLine(strippingNewline: true) else {
                if interactive { Console.say() }
                break
            }
            guard session.handle(line) else { break }
        }
        withExtendedLifetime(session) {}
    }

    /// The tour's part: a scripted session, each command shown after the prompt as if typed.
    static func demonstrate(in workspace: Workspace) throws {
        workspace.pointLibraryHere()
        explain("BindingsPreferences is a subclass with four typed properties over its collection, such as `var launchCount: Int { get { self[\"launchCount\"] as? Int ?? 0 } set { self[\"launchCount\"] = newValue } }`. Its keys allow exactly those four names. One observer, `observe(\\.values, options: [.old, .new])`, prints what changed after each successful write; the lines it prints start with ↳. Here is a session, as typed at the prompt of `harness bindings`:")
        let session = try BindingsSession()
        let script = [
            "show",
            "set userName Ada",
            "set launchCount 1",
            "set launchCount 1",
            "set launchCount one",
            "set colour blue",
            "set darkMode yes",
            "remove userName",
            "show",
            "clear",
            "set volume 0.7",
        ]
        for command in script {
            Console.say("bindings> " + command)
            _ = session.handle(command)
        }
        explain("Every accepted write was followed by the observer's line, even one that changed nothing. The two rejected ones wrote nothing and the observer stayed silent: \"one\" never reached the library, since the typed property takes an Int, while colour did, and the library refused it before writing, telling why in lastError. The collection stays in the domain file under its storage key, \(BindingsPreferences.storageKey), beside the other demos' keys.")
    }
}

/// A typed subclass: the names it allows, and a typed property for each, with its default.
final class BindingsPreferences: RVS_PersistentPrefs {
    static let storageKey = "Bindings"

    override var keys: [String] { ["userName", "launchCount", "darkMode", "volume"] }

    var userName: String {
        get { self["userName"] as? String ?? "Anonymous" }
        set { self["userName"] = newValue }
    }

    var launchCount: Int {
        get { self["launchCount"] as? Int ?? 0 }
        set { self["launchCount"] = newValue }
    }

    var darkMode: Bool {
        get { self["darkMode"] as? Bool ?? false }
        set { self["darkMode"] = newValue }
    }

    var volume: Double {
        get { self["volume"] as? Double ?? 0.5 }
        set { self["volume"] = newValue }
    }
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
