import PrefsPropertyList
import PrefsStorage

/// What an `@Entry` declares of the values it allows, and its description (SPEC §14), in stored forms, so
/// that every write path checks the same thing whatever type wrote it: the property, the subscript,
/// `values` and `modify` alike. `package`, so that `prefsctl` judges a value against an installed schema with
/// the library's own check and words.
package struct EntryConstraint: Sendable {
    /// The inclusive bounds of a number, stored as the entry stores numbers.
    package var range: (lower: PropertyListValue, upper: PropertyListValue)?
    /// The stored forms a value may take, in the order declared.
    package var allowed: [PropertyListValue]?
    /// What the entry is for, for tools and people.
    package var description: String?

    /// A constraint of the given parts, as a schema file states them.
    package init(range: (lower: PropertyListValue, upper: PropertyListValue)?, allowed: [PropertyListValue]?, description: String?) {
        (self.range, self.allowed, self.description) = (range, allowed, description)
    }

    /// Whether the constraint limits values at all (a description alone does not).
    package var limitsValues: Bool { range != nil || allowed != nil }

    /// Why `stored` breaks the constraint, in words that name the constraint and never the value (values are
    /// never logged); `nil` when it keeps it. An absent entry (`nil`) reads as its default and is allowed.
    package func violation(by stored: PropertyListValue?) -> String? {
        guard let stored else { return nil }
        if let (lower, upper) = range {
            guard let below = Self.compare(bound: lower, stored), let above = Self.compare(bound: upper, stored) else {
                return "it must be a number from \(Self.text(lower)) to \(Self.text(upper))"
            }
            if below > 0 || above < 0 { return "it must be from \(Self.text(lower)) to \(Self.text(upper))" }
        }
        if let allowed, !allowed.contains(where: { $0 == stored || Self.compare(bound: $0, stored) == 0 }) {
            return "it must be one of " + allowed.map(Self.text).joined(separator: ", ")
        }
        return nil
    }

    /// -1, 0 or 1 as the constraint's `bound` (a bound or an allowed value) is below, at or above `stored`, whatever
    /// kind of number each is stored as (`2.0` is `2`, exactly, also past 2^53); `nil` when either is not a number.
    /// A `Float` entry's bound (a 4-byte real) counts as the decimal it was declared as, as the schema file writes it,
    /// so that the library and `prefsctl` agree: `0.9` written as a `Double` meets the bound `0.9`, and a `Float`
    /// stored by the entry is compared as a `Float`. Any other bound meets the stored number exactly: a `Float`
    /// `0.1` (0.100000001…) is above a `Double` entry's bound `0.1`.
    private static func compare(bound: PropertyListValue, _ stored: PropertyListValue) -> Int? {
        func order<Number: Comparable>(_ x: Number, _ y: Number) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (bound, stored) {
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.integer(let x), .real(let y)): if let y = Int(exactly: y) { return order(x, y) }
        case (.float(let x), .float(let y)): return order(x, y)
        case (.float, _):
            guard let x = number(schemaForm(bound)), let y = number(stored) else { return nil }
            return order(x, y)
        default: break
        }
        guard let x = number(bound), let y = number(stored) else { return nil }
        return order(x, y)
    }

    /// A number as a schema file writes it: a 4-byte real as the decimal it was declared as (`0.1`, not the
    /// `0.10000000149011612` its widening to a `Double` gives), so that a tool comparing `Double`s agrees with the
    /// library; any other value as it is.
    package static func schemaForm(_ value: PropertyListValue) -> PropertyListValue {
        guard case .float(let x) = value, x.isFinite, let decimal = Double(x.description) else { return value }
        return .real(decimal)
    }

    package static func number(_ value: PropertyListValue) -> Double? {
        switch value {
        case .integer(let x): return Double(x)
        case .unsignedInteger(let x): return Double(x)
        case .real(let x): return x
        case .float(let x): return Double(x)
        default: return nil
        }
    }

    /// A bound or an allowed value as the constraint's text shows it (the schema's values, not a user's).
    package static func text(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): return "\"\(text)\""
        case .integer(let x): return String(x)
        case .unsignedInteger(let x): return String(x)
        case .real(let x): return String(x)
        case .float(let x): return String(x)
        case .bool(let x): return String(x)
        default: return String(describing: value)
        }
    }
}

extension RVS_PersistentPrefs.Entry {
    /// Declares a numeric entry whose values must lie in `range`, with an optional description.
    ///
    /// ```swift
    /// @Entry("port", range: 1...65535) var port = 8080
    /// ```
    /// A write outside the range is refused with ``PrefsError/valueNotAllowed(entry:reason:)`` before anything
    /// is written, through every write path of the instance (the property, the subscript, ``RVS_PersistentPrefs/values``,
    /// `modify`). The range and description are part of the class's ``PrefsSchema``.
    /// - Parameters:
    ///   - wrappedValue: The default, given as the property's initial value; it must lie in `range`.
    ///   - name: The entry name.
    ///   - formerNames: Names the entry was stored under before (see <doc:SchemaEvolution>).
    ///   - range: The values allowed, bounds included.
    ///   - description: What the entry is for, shown by tools that read the schema.
    public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [], range: ClosedRange<Value>, description: String? = nil)
    where Value: BinaryInteger & Codable & SendableMetatype {
        self.init(wrappedValue: wrappedValue, name, formerly: formerNames)
        definition.constraint = Self.constraint(range: (range.lowerBound, range.upperBound), allowed: nil, description: description, coding: coding, name: name, defaultValue: wrappedValue)
    }

    /// Declares a floating-point entry whose values must lie in `range`, with an optional description:
    /// `@Entry("volume", range: 0...1) var volume = 0.5`. Refused values are as for an integer range.
    /// - Parameters:
    ///   - wrappedValue: The default, given as the property's initial value; it must lie in `range`.
    ///   - name: The entry name.
    ///   - formerNames: Names the entry was stored under before (see <doc:SchemaEvolution>).
    ///   - range: The values allowed, bounds included.
    ///   - description: What the entry is for, shown by tools that read the schema.
    public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [], range: ClosedRange<Value>, description: String? = nil)
    where Value: BinaryFloatingPoint & Codable & SendableMetatype {
        self.init(wrappedValue: wrappedValue, name, formerly: formerNames)
        definition.constraint = Self.constraint(range: (range.lowerBound, range.upperBound), allowed: nil, description: description, coding: coding, name: name, defaultValue: wrappedValue)
    }

    /// Declares an entry whose values must be one of `allowed`, with an optional description.
    ///
    /// ```swift
    /// @Entry("level", allowed: ["debug", "info", "warning", "error"]) var level = "info"
    /// ```
    /// A write of another value is refused with ``PrefsError/valueNotAllowed(entry:reason:)`` before anything
    /// is written, through every write path of the instance.
    /// - Parameters:
    ///   - wrappedValue: The default, given as the property's initial value; it must be one of `allowed`.
    ///   - name: The entry name.
    ///   - formerNames: Names the entry was stored under before (see <doc:SchemaEvolution>).
    ///   - allowed: The values allowed.
    ///   - description: What the entry is for, shown by tools that read the schema.
    public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [], allowed: [Value], description: String? = nil)
    where Value: Codable & SendableMetatype {
        self.init(wrappedValue: wrappedValue, name, formerly: formerNames)
        definition.constraint = Self.constraint(range: nil, allowed: allowed, description: description, coding: coding, name: name, defaultValue: wrappedValue)
    }

    /// Declares an entry stored as its `Codable` structure with a description for tools and people, and no
    /// constraint on its values.
    /// - Parameters:
    ///   - wrappedValue: The default, given as the property's initial value.
    ///   - name: The entry name.
    ///   - formerNames: Names the entry was stored under before (see <doc:SchemaEvolution>).
    ///   - description: What the entry is for, shown by tools that read the schema.
    public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [], description: String)
    where Value: Codable & SendableMetatype {
        self.init(wrappedValue: wrappedValue, name, formerly: formerNames)
        definition.constraint = EntryConstraint(range: nil, allowed: nil, description: description)
    }

    /// The constraint in stored forms. A bound or allowed value that cannot be stored, or a default the
    /// constraint refuses, is a programming error, stopped here with the entry's name.
    private static func constraint(
        range: (Value, Value)?, allowed: [Value]?, description: String?, coding: EntryCoding<Value>, name: String,
        defaultValue: Value
    ) -> EntryConstraint {
        func stored(_ value: Value) -> PropertyListValue {
            guard let form = try? coding.encode(value) else {
                fatalError("RVS_PersistentPrefs: a value in the constraint of the entry \"\(name)\" cannot be stored")
            }
            return form
        }
        let constraint = EntryConstraint(
            range: range.map { (stored($0.0), stored($0.1)) },
            allowed: allowed?.map(stored),
            description: description
        )
        if let encoded = try? coding.encode(defaultValue), let reason = constraint.violation(by: encoded) {
            fatalError("RVS_PersistentPrefs: the default of the entry \"\(name)\" breaks its own constraint: \(reason)")
        }
        return constraint
    }
}
