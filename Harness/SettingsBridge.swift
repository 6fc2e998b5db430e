// `harness settings-bridge`: flat settings, as a settings tool writes them, bridged both ways to the one
// nested collection an app keeps with RVS_PersistentPrefs.
//
// On Apple platforms a Settings.bundle writes each setting as a top-level key of the app's defaults,
// while an RVS_PersistentPrefs subclass keeps all of them in one dictionary under its storage key. The
// bridge copies between the two shapes. Here the flat keys and the collection live side by side in the
// application domain, the settings are described by Harness/SettingsSchema.plist, and the schema's
// defaults go into the registration domain, so that removing a value shows the default again.

import Foundation
import Glibc
import RVS_PersistentPrefs

enum SettingsBridge {
    static let summary = "flat settings (a Settings.bundle-like schema) bridged both ways to a nested collection"

    static let usage = """
        usage: harness settings-bridge [--directory PATH] [-KEY VALUE ...]

        Shows a settings schema (Harness/SettingsSchema.plist, shaped like a Settings.bundle's Root.plist:
        each setting's key, title, type and default) bridged both ways to the nested collection an app
        keeps with RVS_PersistentPrefs:
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
    static func run(_ arguments: [String], _ context: HarnessContext) throws {
        // Only `-KEY VALUE` pairs, which the library has already read as the argument domain.
        var index = 0
        while index < arguments.count {
            guard arguments[index].count > 1, arguments[index].hasPrefix("-"), index + 1 < arguments.count else {
                throw HarnessError.usage("unexpected argument '\(arguments[index])'; this demo takes only -KEY VALUE pairs (see --help)")
            }
            index += 2
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

        explain("The schema, Harness/SettingsSchema.plist, describes \(schema.settings.count) settings the way a Settings.bundle does:")
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
        try check(settings)
        let bridge = Bridge(schema: schema, settings: settings, suite: suite)

        Console.say()
        explain("Step 1. The schema's defaults go into the registration domain: every read consults it last, and it lives in memory only, never on disk. The defaults are registered twice, once per shape: flat, and as a whole collection under \(BridgedSettings.storageKey).")
        suite.register(defaults: schema.defaults)
        suite.register(defaults: [BridgedSettings.storageKey: .dictionary(schema.defaults)])
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
        explain("Step 3. The app changes its collection through the subscript, one entry at a time: settings[\"volume\"] = 0.8 and settings[\"textSize\"] = 18. The bridge copies the collection out to the flat keys (nested → flat), which also repairs the bad textSize:")
        settings["volume"] = 0.8
        try check(settings)
        settings["textSize"] = 18
        try check(settings)
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
        try check(settings)
        try bridge.showCollection()
        explain("What the domain file holds now (the registration domain is never written):", indent: "  ")
        try inspector(["read", domain])
    }

    /// Stops the demo if the library reported an error for the last operation.
    static func check(_ settings: RVS_PersistentPrefs) throws {
        if let error = settings.lastError { throw HarnessError.failure(error.description) }
    }

    /// `argument` as a shell would need it typed.
    static func shellQuoted(_ argument: String) -> String {
        let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@+,".contains($0) }
        return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// The app's side: one collection whose allowed entry names are the schema's keys.
final class BridgedSettings: RVS_PersistentPrefs {
    static let storageKey = "AppSettings"
    private let schemaKeys: [String]

    init(schema: SettingsSchema) {
        schemaKeys = schema.settings.map(\.key)
        super.init(key: Self.storageKey, values: nil)
    }

    override var keys: [String] { schemaKeys }
}

/// Copies between the flat keys and the collection, and shows where each value came from.
struct Bridge {
    let schema: SettingsSchema
    let settings: BridgedSettings
    let suite: DefaultsSuite

    /// flat → nested: every setting's flat value that fits the schema goes into the collection.
    func copyFlatIntoCollection() throws {
        var collection = settings.values
        try SettingsBridge.check(settings)
        let width = schema.settings.map(\.key.count).max() ?? 0
        for setting in schema.settings {
            let label = "    " + setting.key.padding(toLength: width + 2, withPad: " ", startingAt: 0)
            guard let (value, domain) = try lookup(setting.key) else {
                Console.say(label + "not set anywhere; left as it is")
                continue
            }
            let shown = PropertyListPrinter.readable(value) + " from " + Self.describe(domain)
            if let accepted = setting.accepted(value) {
                collection[setting.key] = accepted.nativeValue
                Console.say(label + shown + ": copied")
            } else {
                let kept = collection[setting.key].flatMap { PropertyListValue($0) } ?? setting.defaultValue
                collection[setting.key] = kept.nativeValue
                Console.say(label + shown + ": refused, not " + setting.kindDescription + "; the collection keeps " + PropertyListPrinter.readable(kept))
            }
        }
        // A whole assignment, validated by the library before anything is written.
        settings.values = collection
        try SettingsBridge.check(settings)
    }

    /// nested → flat: every entry of the collection that a flat read would not already return is written
    /// to its flat key.
    func copyCollectionToFlat() throws {
        let collection = settings.values
        try SettingsBridge.check(settings)
        var copied = 0
        for setting in schema.settings {
            guard let native = collection[setting.key], let value = PropertyListValue(native) else { continue }
            let current = try lookup(setting.key)
            guard current?.value != value else { continue }
            do {
                try suite.set(value, forKey: setting.key)
            } catch {
                throw HarnessError.failure(error.description)
            }
            let before = current.map { PropertyListPrinter.readable($0.value) + " (" + Self.describe($0.domain) + ")" } ?? "(not set)"
            Console.say("    \(setting.key): \(before) → \(PropertyListPrinter.readable(value)) (the file)")
            copied += 1
        }
        if copied == 0 { Console.say("    (every flat key already reads as the collection says)") }
    }

    /// Prints the collection and the domain it was read from.
    func showCollection() throws {
        let found = try lookup(BridgedSettings.storageKey)
        let collection = settings.values
        try SettingsBridge.check(settings)
        let source = found.map { " (from " + Self.describe($0.domain) + ")" } ?? ""
        Console.say("    \(BridgedSettings.storageKey) = " + PropertyListPrinter.readable(PropertyListValue(collection) ?? .dictionary([:])) + source)
    }

    /// Prints one flat key's value and the domain it was read from.
    func showFlatValue(_ key: String) throws {
        if let (value, domain) = try lookup(key) {
            Console.say("    \(key) = \(PropertyListPrinter.readable(value)) (from \(Self.describe(domain)))")
        } else {
            Console.say("    \(key) is not set anywhere")
        }
    }

    private func lookup(_ key: String) throws -> (value: PropertyListValue, domain: SearchDomain)? {
        do {
            return try suite.lookup(key)
        } catch {
            throw HarnessError.failure(error.description)
        }
    }

    static func describe(_ domain: SearchDomain) -> String {
        switch domain {
        case .arguments: return "the argument domain, the command line"
        case .persistent: return "the file"
        case .global: return "the global domain"
        case .registration: return "the registration domain, the schema's default"
        }
    }
}

/// The settings of Harness/SettingsSchema.plist.
struct SettingsSchema {
    /// The control a setting is shown with, which fixes the type of its value.
    enum Kind: String {
        case textField = "PSTextFieldSpecifier"
        case toggle = "PSToggleSwitchSpecifier"
        case slider = "PSSliderSpecifier"
        case multiValue = "PSMultiValueSpecifier"
    }

    struct Setting {
        let key: String
        let title: String
        let kind: Kind
        let defaultValue: PropertyListValue
        /// The slider's range.
        let range: ClosedRange<Double>
        /// The multi-value setting's allowed values.
        let choices: [PropertyListValue]

        /// The value a settings tool wrote, as the schema takes it, or `nil` when it does not fit:
        /// settings tools are other programs, so what they wrote is checked, never trusted.
        func accepted(_ value: PropertyListValue) -> PropertyListValue? {
            switch (kind, value) {
            case (.textField, .string): return value
            case (.toggle, .bool): return value
            case (.slider, .real(let real)) where range.contains(real): return value
            case (.slider, .integer(let integer)) where range.contains(Double(integer)): return .real(Double(integer))
            case (.slider, .float(let float)) where range.contains(Double(float)): return .real(Double(float))
            case (.multiValue, _) where choices.contains(value): return value
            default: return nil
            }
        }

        /// What values the setting takes, in words.
        var kindDescription: String {
            switch kind {
            case .textField: return "text"
            case .toggle: return "a Boolean"
            case .slider: return "a number from \(range.lowerBound) to \(range.upperBound)"
            case .multiValue: return "one of " + choices.map(PropertyListPrinter.readable).joined(separator: ", ")
            }
        }
    }

    let settings: [Setting]

    /// Every setting's default, by key: what goes into the registration domain.
    var defaults: [String: PropertyListValue] {
        Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0.defaultValue) })
    }

    /// The name of the resource bundle SwiftPM copies next to the harness executable.
    static let resourceBundleName = "RVS_PersistentPrefs_harness.resources"
    static let fileName = "SettingsSchema.plist"

    /// Loads the schema that SwiftPM copies into the harness's resource bundle
    /// (`resources: [.copy("SettingsSchema.plist")]` in Package.swift).
    ///
    /// The bundle is looked for beside the running executable, found through /proc/self/exe, so that it
    /// works from `swift run`, from the build directory and through a symbolic link. `Bundle.module` is
    /// not used: when it cannot find its bundle it stops the process, and a missing file deserves one
    /// clear line instead.
    static func load() throws(HarnessError) -> SettingsSchema {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let path = (executable as NSString).deletingLastPathComponent + "/" + resourceBundleName + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else {
            throw .failure("cannot find the settings schema \(path); it is built with the harness: copy the \(resourceBundleName) folder along with the executable")
        }
        let data = try readWholeFile(path)
        let root: PropertyListValue
        do {
            root = try PropertyListValue(propertyListData: data)
        } catch {
            throw .failure("the settings schema \(path) is not a property list: \(error)")
        }
        return try SettingsSchema(root, source: path)
    }

    init(_ root: PropertyListValue, source: String) throws(HarnessError) {
        guard case .array(let specifiers)? = root.dictionaryValue?["PreferenceSpecifiers"] else {
            throw .failure("the settings schema \(source) has no PreferenceSpecifiers array")
        }
        var settings: [Setting] = []
        for (index, specifier) in specifiers.enumerated() {
            let fields = specifier.dictionaryValue ?? [:]
            guard case .string(let key)? = fields["Key"], case .string(let title)? = fields["Title"],
                  case .string(let type)? = fields["Type"], let kind = Kind(rawValue: type),
                  let defaultValue = fields["DefaultValue"] else {
                throw .failure("setting \(index + 1) of the settings schema \(source) needs a Key, a Title, a known Type and a DefaultValue")
            }
            let number = { (value: PropertyListValue?) -> Double? in
                switch value {
                case .real(let real)?: return real
                case .integer(let integer)?: return Double(integer)
                case .float(let float)?: return Double(float)
                default: return nil
                }
            }
            let minimum = number(fields["MinimumValue"]) ?? 0, maximum = number(fields["MaximumValue"]) ?? 1
            guard minimum <= maximum else { throw .failure("setting \(key) of the settings schema has MinimumValue above MaximumValue") }
            var choices: [PropertyListValue] = []
            if case .array(let values)? = fields["Values"] { choices = values }
            let setting = Setting(key: key, title: title, kind: kind, defaultValue: defaultValue, range: minimum...maximum, choices: choices)
            guard setting.accepted(defaultValue) == defaultValue else {
                throw .failure("setting \(key) of the settings schema has a DefaultValue that is not \(setting.kindDescription)")
            }
            settings.append(setting)
        }
        self.settings = settings
    }
}
