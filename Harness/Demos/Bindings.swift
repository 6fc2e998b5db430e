// `harness bindings`: an interactive prompt on a typed RVS_PersistentPrefs subclass, with an observer
// that prints `old → new` after every successful write, the command-line counterpart of the macOS
// harness app that binds the preferences to controls through key-value observing.
//
// It reads commands from standard input, so it works typed by a person (with a prompt, shown only when
// standard input is a terminal) and with commands piped in (the end of the input ends the session).

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

enum Bindings: Subcommand {
    static let name = "bindings"
    static let summary = "an interactive prompt on a typed subclass; an observer prints old → new for each write"

    static let usage = """
        usage: harness bindings [--directory PATH]
               harness bindings --schema

        An interactive prompt on BindingsPreferences, a subclass of RVS_PersistentPrefs with four @Entry
        properties: userName (text), launchCount (a whole number), darkMode (yes or no) and volume (a number). An
        observer registered with observe(\\.values, options: [.old, .new]) prints `old → new` after every
        successful write, and nothing after a rejected one.

        \(commandHelp)

        Commands are read from standard input: type them, or pipe them in, for example
            printf 'set userName Ada\\nshow\\n' | harness bindings
        The session ends with quit or at the end of the input, with exit status 0.

        Without --directory the demo works in a fresh temporary directory and removes it at the end.

        With --schema, it prints BindingsPreferences' schema (prefs.schema.propertyListData(): each entry's
        type, default, range and description) and exits: what an app's package installs, here as
        DIR/RVS_PersistentPrefs/schemas/\(Workspace.applicationDomainName).plist for a DIR of $XDG_DATA_DIRS, so that
        prefsctl list-keys, describe and range read it, and prefsctl write refuses `volume 2` as the app does.
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
        var arguments = arguments
        let schema = arguments.flag("--schema")
        try arguments.finish { "unexpected argument '\($0)'; the commands are read from standard input (see --help)" }
        if schema {
            // From an instance over a suite in memory: printing the schema reads and writes no domain.
            let preferences = BindingsPreferences(key: BindingsPreferences.storageKey, suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []))
            Console.write(try preferences.schema.propertyListData())
            return
        }
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
        explain("BindingsPreferences is a subclass that declares four typed entries, each once, with its name and default, such as `@Entry(\"launchCount\") var launchCount = 0`. Its keys list exactly those four names, so the collection allows no other. One observer, `observe(\\.values, options: [.old, .new])`, prints what changed after each successful write; the lines it prints start with ↳. Here is a session, as typed at the prompt of `harness bindings`:")
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
