// `harness` with no arguments, or `harness tour`: every demo, one after another, in plain sentences.
//
// The tour is the first thing a new user runs, so its output alone must teach the library: what a
// collection, a storage key and a defaults domain are, what is validated, who is notified, how values
// are shared, and where the files are. It works in a fresh private temporary directory (or --directory)
// and exits 0.

import Foundation
import PrefsTool

enum Tour: Subcommand {
    static let name = "tour"
    static let summary = "every demo below, one after another, explained (what `harness` alone runs)"

    static let usage = """
        usage: harness [tour] [--directory PATH]

        Runs every demo of the harness, one after another, explaining each step: settings-bridge, bindings,
        share and defaults. Everything is written to a fresh private temporary directory, removed at the
        end; with --directory PATH it is written there instead and kept, to be looked at afterwards with
        `harness defaults --directory PATH read`. Your own preferences under ~/.config are never touched.
        """

    /// The entry point of `harness tour` (and of `harness` alone).
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        try arguments.finish { "unexpected argument '\($0)'; run 'harness --help' for the subcommands" }
        let workspace = try Workspace.make(context)
        defer { workspace.finish() }
        workspace.pointLibraryHere()

        heading("RVS_PersistentPrefs: a tour")
        explain("RVS_PersistentPrefs keeps an app's preferences as one dictionary, its collection. The collection is stored under a storage key in a defaults domain, which is a property-list file. Reads go through a search list of domains, the way Apple's defaults system reads. An app subclasses RVS_PersistentPrefs and declares each entry once, as an @Entry property with its name, type and default; those names make up keys, the entry names the collection allows. Every write is checked first; every operation tells its outcome in lastError, nil after a success; observers hear about successful writes.")
        Console.say()
        explain("This tour runs every demo of the harness. Everything it writes goes to \(workspace.isTemporary ? "a fresh private temporary directory" : "the directory you gave"):")
        Console.say("    " + workspace.path)
        explain("It told the library so by setting RVS_PREFS_DIRECTORY, and named the application domain with RVS_PersistentPrefs.applicationDomainName = \"\(Workspace.applicationDomainName)\", so its file is \(Workspace.applicationDomainName).plist there. Your own preferences under ~/.config are never touched.")

        section(1, "settings-bridge", "flat settings and the nested collection")
        try SettingsBridge.demonstrate(in: workspace)

        section(2, "bindings", "typed entries, validation and observers")
        try Bindings.demonstrate(in: workspace)

        section(3, "share", "two processes, one group suite")
        try Share.demonstrate(in: workspace)

        section(4, "defaults", "looking at the files")
        try inspect(workspace)

        heading("The end")
        if workspace.isTemporary {
            explain("The tour's temporary directory has been removed. To keep the files, run `harness --directory PATH`, then look at them with `harness defaults --directory PATH read`.")
        } else {
            explain("The files are still in \(workspace.path): look at them with `harness defaults --directory \(shellQuoted(workspace.path)) read`.")
        }
        explain("Each demo also runs on its own: `harness settings-bridge`, `harness bindings` (a prompt you can type at), `harness share` (or `--role app` and `--role helper` in two terminals) and `harness defaults`. `harness --help` lists them.")
    }

    /// The defaults part: the inspector at work on the files the other demos left.
    static func inspect(_ workspace: Workspace) throws {
        explain("`harness defaults` reads and edits domain files as the macOS `defaults` command does, and goes through FileDomainStorage, the type the library stores with: each change is a read-modify-write under the file's lock, written to a temporary file and renamed into place, so a running app loses nothing. Here it is at work on the files of the demos above (each command is shown as typed; --directory is left out):")
        let domain = Workspace.applicationDomainName
        let exportPath = workspace.path + "/exported-\(domain).xml"
        let commands: [(note: String, arguments: [String])] = [
            ("The domains in the directory (the global domain and the group container are not among them):", ["domains"]),
            ("A whole domain, in the OpenStep form `defaults` prints (Booleans show as 1 and 0):", ["read", domain]),
            ("A value typed on the command line, then read back one key at a time:", ["write", domain, "launchCount", "-int", "42"]),
            ("", ["read", domain, "launchCount"]),
            ("", ["read-type", domain, "launchCount"]),
            ("Property-list text stores a nested value; OpenStep text has no numbers, so use the typed forms for them:", ["write", domain, "window", "{frame = \"0 0 800 600\"; title = Main;}"]),
            ("", ["write", domain, "recentFiles", "-array", "notes.txt", "-int", "7"]),
            ("", ["read", domain, "recentFiles"]),
            ("The global domain, shared by every app of the user, read after the app's own domain:", ["write", "-g", "AppleLanguages", "-array", "en", "fr"]),
            ("", ["read", "-g"]),
            ("Export writes an XML property list (to a file, or - for standard output); import reads XML or binary back, replacing the whole domain under its lock:", ["export", domain, exportPath]),
            ("", ["delete", domain, "window"]),
            ("", ["import", domain, exportPath]),
            ("", ["read", domain, "window"]),
            ("Bad input is refused with one line on standard error and a non-zero exit status, and nothing on disk changes:", ["write", domain, "broken", "{unbalanced = yes"]),
            ("", ["read", "com.example.missing"]),
        ]
        for (note, arguments) in commands {
            if !note.isEmpty {
                Console.say()
                explain(note)
            }
            Console.say("$ harness defaults " + arguments.map(shellQuoted).joined(separator: " "))
            do {
                try DefaultsInspector.execute(arguments, directory: workspace.path)
            } catch {
                // Shown in the transcript rather than on standard error: the tour itself did not fail.
                Console.say("harness defaults: \(error.message)   [standard error, exit status \(error.status)]")
            }
        }
        Console.say()
        explain("Other tools read the same files: they are binary property lists, so `plutil -p FILE` and Python's plistlib.load work on them.")
    }

    private static func heading(_ title: String) {
        Console.say()
        Console.say(title)
        Console.say(String(repeating: "=", count: title.count))
    }

    private static func section(_ number: Int, _ name: String, _ subject: String) {
        let title = "\(number). harness \(name): \(subject)"
        Console.say()
        Console.say(title)
        Console.say(String(repeating: "-", count: title.count))
    }
}
