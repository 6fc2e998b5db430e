import Foundation
import PrefsPropertyList

/// What a class declares of its collection, for tools and people (SPEC §14): each `@Entry` with its stored
/// type, default, constraint and description, as GSettings schemas and KConfigXT files describe settings.
///
/// ```swift
/// let data = try Settings(key: "settings").schema.propertyListData()
/// // installed as /usr/share/RVS_PersistentPrefs/schemas/<domain>.plist by the app's package
/// ```
///
/// `prefsctl` reads the installed file to type the values it writes and to refuse what the app refuses.
public struct PrefsSchema: Sendable, Equatable {
    /// One typed entry of the schema.
    public struct Entry: Sendable, Equatable {
        /// The entry name: its key in the stored collection and in the schema file's dictionary of entries,
        /// and the `ENTRY` of `prefsctl write DOMAIN KEY ENTRY VALUE`.
        public let name: String
        /// The stored form: `string`, `integer`, `real`, `boolean`, `date`, `data`, `array` or `dictionary`;
        /// `nil` when the default is stored as nothing (an `Optional` entry whose default is `nil`), or for a
        /// name that ``RVS_PersistentPrefs/keys`` lists without an `@Entry`, which leaves the form unknown.
        public let type: String?
        /// The stored form of the default; `nil` when the default is stored as nothing.
        public let defaultValue: PropertyListValue?
        /// The inclusive bounds of a numeric entry declared with `range:`.
        public let range: ClosedRange<Double>?
        /// The stored forms of the values an entry declared with `allowed:` takes.
        public let allowed: [PropertyListValue]?
        /// What the entry is for, as declared with `description:`.
        public let description: String?
        /// The names the entry was stored under before, as declared with `formerly:`: the app reads a value
        /// stored under one of them as this entry, and allows them in a write, so a tool accepts them too.
        public let formerNames: [String]
    }

    /// The storage key the entries are kept under.
    public let storageKey: String
    /// The entries, sorted by name.
    public let entries: [Entry]

    /// The schema file's bytes: an XML property list whose root maps the storage key to a dictionary of
    /// entries, each entry a dictionary with `type`, `default` (when the default is stored), and, when
    /// declared, `range` (two numbers, inclusive), `allowed`, `description` and `formerly` (the entry's former
    /// names, strings).
    /// - Throws: A ``PropertyListCodingError`` when a default cannot be written as a property list.
    public func propertyListData() throws(PropertyListCodingError) -> Data {
        var described: [String: PropertyListValue] = [:]
        for entry in entries {
            var fields: [String: PropertyListValue] = [:]
            if let type = entry.type { fields["type"] = .string(type) }
            if let value = entry.defaultValue { fields["default"] = value }
            if let range = entry.range { fields["range"] = .array([Self.number(range.lowerBound), Self.number(range.upperBound)]) }
            if let allowed = entry.allowed { fields["allowed"] = .array(allowed) }
            if let description = entry.description { fields["description"] = .string(description) }
            if !entry.formerNames.isEmpty { fields["formerly"] = .array(entry.formerNames.map { .string($0) }) }
            described[entry.name] = .dictionary(fields)
        }
        return try PropertyListValue.dictionary([storageKey: .dictionary(described)]).xmlPropertyListData()
    }

    /// A bound as an integer when it is one, so that an integer entry's range reads `1` and `65535`.
    private static func number(_ value: Double) -> PropertyListValue {
        if value.rounded() == value, let exact = Int(exactly: value) { return .integer(exact) }
        return .real(value)
    }

    /// The name of a stored form's type in a schema.
    package static func typeName(of value: PropertyListValue) -> String {
        switch value {
        case .string: return "string"
        case .bool: return "boolean"
        case .integer, .unsignedInteger: return "integer"
        case .real, .float: return "real"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        }
    }
}

extension RVS_PersistentPrefs {
    /// The schema of this instance's collection: every `@Entry` of its class, under its storage key
    /// (``key``), and every other name of ``keys``, with no type nor default: a tool then knows every name the
    /// class allows, and refuses a name it does not (which would make the app's writes fail).
    public var schema: PrefsSchema {
        let registry = EntryRegistry.registry(of: self)
        let entries = Set(registry.names).union(keys).sorted().map { name -> PrefsSchema.Entry in
            let declaration = registry.declarations[name]
            let constraint = declaration?.constraint
            let stored = declaration?.storedDefault
            return PrefsSchema.Entry(
                name: name,
                type: (stored ?? constraint?.allowed?.first ?? constraint?.range?.lower).map(PrefsSchema.typeName(of:)),
                defaultValue: stored.map(EntryConstraint.schemaForm),
                range: constraint?.range.flatMap { bounds in
                    EntryConstraint.number(EntryConstraint.schemaForm(bounds.lower)).flatMap { lower in
                        EntryConstraint.number(EntryConstraint.schemaForm(bounds.upper)).map { lower...$0 }
                    }
                },
                allowed: constraint?.allowed?.map(EntryConstraint.schemaForm),
                description: constraint?.description,
                formerNames: declaration?.formerNames.sorted() ?? []
            )
        }
        return PrefsSchema(storageKey: key, entries: entries)
    }
}
