// The two sides of the `settings-bridge` demo and the copying between them.

import Foundation
import RVS_PersistentPrefs
import PrefsTool

/// The app's side: one collection. The app declares the entries its own code uses as `@Entry`
/// properties; the bridge, which works from the schema, copies every schema key through `values`, so
/// `keys` adds the schema's names to the `@Entry` names.
final class BridgedSettings: RVS_PersistentPrefs {
    static let storageKey = "AppSettings"
    private let schemaKeys: [String]

    @Entry("volume") var volume = 0.5
    @Entry("textSize") var textSize = 14

    init(schema: SettingsSchema) {
        schemaKeys = schema.settings.map(\.key)
        super.init(key: Self.storageKey, values: nil)
    }

    override var keys: [String] { Array(Set(super.keys).union(schemaKeys)).sorted() }
}

/// Copies between the flat keys and the collection, and shows where each value came from.
struct Bridge {
    let schema: SettingsSchema
    let settings: BridgedSettings
    let suite: DefaultsSuite

    /// flat → nested: every setting's flat value that fits the schema goes into the collection.
    func copyFlatIntoCollection() throws {
        var collection = settings.values
        try settings.throwIfFailed()
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
        try settings.throwIfFailed()
    }

    /// nested → flat: every entry of the collection that a flat read would not already return is written
    /// to its flat key.
    func copyCollectionToFlat() throws {
        let collection = settings.values
        try settings.throwIfFailed()
        var copied = 0
        for setting in schema.settings {
            guard let native = collection[setting.key], let value = PropertyListValue(native) else { continue }
            let current = try lookup(setting.key)
            guard current?.value != value else { continue }
            do {
                try suite.setValue(value, forKey: setting.key)
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
        try settings.throwIfFailed()
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
        case .system: return "the system-wide defaults"
        case .managed: return "an administrator's forced setting"
        default: return "the \(domain.name) domain"
        }
    }
}
