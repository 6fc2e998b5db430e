// `harness settings-bridge`: flat settings, as a settings tool writes them, bridged both ways to the one
// nested collection an app keeps with RVS_PersistentPrefs.
//
// A settings dialog, or an administrator's tool such as `harness defaults write`, writes each setting as
// a top-level key of the app's domain (one key per setting, as a GSettings schema lays them out), while an
// RVS_PersistentPrefs subclass keeps all of them in one dictionary under its storage key. The bridge
// copies between the two shapes. Here the flat keys and the collection live side by side in the
// application domain, the settings are described by Harness/SettingsSchema.plist, and the schema's
// defaults go into the registration domain, so that removing a value shows the default again.

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

enum SettingsBridge: Subcommand {
    static let name = "settings-bridge"
    static let summary = "flat settings described by a schema, bridged both ways to a nested collection"

    static let usage = """
        usage: harness settings-bridge [--directory PATH] [-KEY VALUE ...]

        Shows a settings schema (Harness/SettingsSchema.plist: each setting's key, the title a settings
        dialog shows, the kind of control, which fixes the value's type, and the default) bridged both
        ways to the nested collection an app keeps with RVS_PersistentPrefs:
          - the schema's defaults go into the registration domain, in memory, never on disk;
          - flat values written by a settings tool (here: harness defaults write) are checked against the
            schema and copied into the collection;
          - changes the app makes to its collection are copied out to the flat keys;
          - a removed value falls back to the schema's default, visibly.

        -KEY VALUE pairs go into the argument domain, which every read consults first: try
            harness settings-bridge -userName Grace
        to see a command-line value win over the file and the defaults.

        Without --directory the demo works in a fresh temporary directory and removes it at the end.
        """

    /// The entry point of `harness settings-bridge`.
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        // Only `-KEY VALUE` pairs, which the library has already read as the argument domain.
        var arguments = arguments
        while let key = arguments.next() {
            guard key.count > 1, key.hasPrefix("-"), arguments.next() != nil else {
                throw HarnessError.usage("unexpected argument '\(key)'; this demo takes only -KEY VALUE pairs (see --help)")
            }
        }
        let workspace = try Workspace.make(context)
        defer { workspace.finish() }
        try demonstrate(in: workspace)
        if workspace.isTemporary {
            Console.say()
            explain("The demo's temporary directory has been removed. Run it with --directory PATH to keep the files and look at them with `harness defaults --directory PATH read`.")
        }
    }

    /// The demo, narrated step by step (the tour runs it too).
    static func demonstrate(in workspace: Workspace) throws {
        workspace.pointLibraryHere()
        let schema = try SettingsSchema.load()
        let domain = Workspace.applicationDomainName
        let inspector = { (arguments: [String]) throws(HarnessError) in
            Console.say("$ harness defaults " + arguments.map(shellQuoted).joined(separator: " "))
            try DefaultsInspector.execute(arguments, directory: workspace.path)
        }

        explain("The schema, Harness/SettingsSchema.plist, describes \(schema.settings.count) settings, each with its key, the title a settings dialog shows, what values it takes and its default:")
        let keyWidth = schema.settings.map(\.key.count).max() ?? 0
        let titleWidth = schema.settings.map(\.title.count).max() ?? 0
        for setting in schema.settings {
            Console.say("    " + setting.key.padding(toLength: keyWidth + 2, withPad: " ", startingAt: 0)
                + setting.title.padding(toLength: titleWidth + 2, withPad: " ", startingAt: 0)
                + setting.kindDescription + ", default " + PropertyListPrinter.readable(setting.defaultValue))
        }
        explain("A settings tool stores each one as a flat key of its own in the application domain, \(domain). The app keeps all of them in one nested dictionary, its collection, under the storage key \(BridgedSettings.storageKey) in the same domain.")

        let settings = BridgedSettings(schema: schema)
        guard let suite = settings.userDefaults else { throw HarnessError.failure("the application domain is unavailable") }
        try settings.throwIfFailed()
        let bridge = Bridge(schema: schema, settings: settings, suite: suite)

        Console.say()
        explain("Step 1. The schema's defaults go into the registration domain: every read consults it last, and it lives in memory only, never on disk. The defaults are registered twice, once per shape: flat, and as a whole collection under \(BridgedSettings.storageKey).")
        suite.register(propertyListDefaults: schema.defaults)
        suite.register(propertyListDefaults: [BridgedSettings.storageKey: .dictionary(schema.defaults)])
        explain("Before anything is stored, the app's collection reads as the registered one:", indent: "  ")
        try bridge.showCollection()

        Console.say()
        explain("Step 2. A settings tool writes three flat values into the domain file; the last one does not fit the schema:")
        try inspector(["write", domain, "darkMode", "-bool", "YES"])
        try inspector(["write", domain, "userName", "Ada"])
        try inspector(["write", domain, "textSize", "huge"])
        explain("The bridge copies the flat values into the collection (flat → nested), checking each against the schema. Every flat key is read through the search list, so a key nobody wrote comes from the registration domain:", indent: "  ")
        try bridge.copyFlatIntoCollection()
        try bridge.showCollection()

        Console.say()
        explain("Step 3. The app changes its collection through its typed entries, declared as `@Entry(\"volume\") var volume = 0.5` and `@Entry(\"textSize\") var textSize = 14`, one entry at a time: settings.volume = 0.8 and settings.textSize = 18. The bridge copies the collection out to the flat keys (nested → flat), which also repairs the bad textSize:")
        settings.volume = 0.8
        try settings.throwIfFailed()
        settings.textSize = 18
        try settings.throwIfFailed()
        try bridge.copyCollectionToFlat()

        Console.say()
        explain("Step 4. The settings tool resets darkMode by removing its flat key:")
        try inspector(["delete", domain, "darkMode"])
        explain("Nothing is stored for darkMode any more, so a read falls through to the registration domain and the schema's default shows again:", indent: "  ")
        try bridge.showFlatValue("darkMode")
        explain("The bridge copies flat → nested again, and the collection follows:", indent: "  ")
        try bridge.copyFlatIntoCollection()

        Console.say()
        explain("Step 5. The app clears its collection with settings.clear(). Only its dictionary is removed from the file; the flat keys stay. Reading the collection now falls back to the registered one, visibly:")
        settings.clear()
        try settings.throwIfFailed()
        try bridge.showCollection()
        explain("What the domain file holds now (the registration domain is never written):", indent: "  ")
        try inspector(["read", domain])
    }
}
