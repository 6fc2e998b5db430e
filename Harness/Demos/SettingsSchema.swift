// The settings schema of the `settings-bridge` demo: Harness/SettingsSchema.plist, what a settings dialog
// needs to show each setting. Its property-list format is the one of Apple's settings schemas
// (PreferenceSpecifiers, PS…Specifier types), so a program ported from Apple platforms can keep its own.

import Foundation
import RVS_PersistentPrefs
import PrefsTool

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
        guard let data = try PosixIO.readWholeFile(path, atMost: 1 << 20) else {
            throw .failure("the settings schema \(path) is larger than 1 MiB; it is not the one built with the harness")
        }
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
