import Foundation
import PrefsPropertyList

// The bridges `@Entry`'s initializers choose from what a type conforms to: a `Codable` value as its
// property-list structure, a `RawRepresentable` value as its raw value, and Optionals, arrays, sets and
// string-keyed dictionaries of raw-representable values element by element, so that
// `enum Level: String { case low, high }` works in `[Level]` without being `Codable`. A user's own
// `PropertyListBridge` is handed to `@Entry(_:bridge:)` instead.

/// Stores a `Codable` value as its property-list structure.
struct CodableBridge<Value: Codable & SendableMetatype>: PropertyListBridge {
    func serialize(_ value: Value) throws -> PropertyListValue? { try PropertyListValueEncoder.encode(value) }
    func deserialize(_ stored: PropertyListValue) throws -> Value { try PropertyListValueDecoder.decode(Value.self, from: stored) }
}

/// Stores a `RawRepresentable` value as its raw value, so that an enum reads in any tool as the string or
/// number it stands for, and an untyped write of that raw value reads back as the case.
struct RawValueBridge<Value: RawRepresentable & SendableMetatype>: PropertyListBridge where Value.RawValue: Codable & SendableMetatype {
    func serialize(_ value: Value) throws -> PropertyListValue? { try PropertyListValueEncoder.encode(value.rawValue) }

    func deserialize(_ stored: PropertyListValue) throws -> Value {
        let raw = try PropertyListValueDecoder.decode(Value.RawValue.self, from: stored)
        guard let value = Value(rawValue: raw) else {
            throw PropertyListValueDecoder.corrupted("the stored raw value is not one of \(Value.self)", [])
        }
        return value
    }
}

/// An `Optional` of what `Wrapped` stores: `nil` removes the entry.
struct OptionalBridge<Wrapped: PropertyListBridge>: PropertyListBridge {
    let wrapped: Wrapped
    func serialize(_ value: Wrapped.Value?) throws -> PropertyListValue? { try value.flatMap(wrapped.serialize) }
    func deserialize(_ stored: PropertyListValue) throws -> Wrapped.Value? { try wrapped.deserialize(stored) }
}

/// An array of what `Element` stores.
struct ArrayBridge<Element: PropertyListBridge>: PropertyListBridge {
    let element: Element
    func serialize(_ value: [Element.Value]) throws -> PropertyListValue? { .array(try ElementCoding.serialize(value, element)) }
    func deserialize(_ stored: PropertyListValue) throws -> [Element.Value] { try ElementCoding.deserialize(stored, element) }
}

/// A set of what `Element` stores, kept as an array (property lists have no sets), in a stable order, so
/// that writing an equal set stores the same bytes rather than the order of this run's hashing.
struct SetBridge<Element: PropertyListBridge>: PropertyListBridge where Element.Value: Hashable {
    let element: Element
    func serialize(_ value: Set<Element.Value>) throws -> PropertyListValue? {
        .array(try ElementCoding.serialize(Array(value), element).sorted { String(describing: $0) < String(describing: $1) })
    }
    func deserialize(_ stored: PropertyListValue) throws -> Set<Element.Value> { Set(try ElementCoding.deserialize(stored, element)) }
}

/// A string-keyed dictionary of what `Element` stores.
struct DictionaryBridge<Element: PropertyListBridge>: PropertyListBridge {
    let element: Element

    func serialize(_ value: [String: Element.Value]) throws -> PropertyListValue? {
        var entries: [String: PropertyListValue] = [:]
        for (key, member) in value {
            guard let stored = try element.serialize(member) else { throw ElementCoding.nilMember(member) }
            entries[key] = stored
        }
        return .dictionary(entries)
    }

    func deserialize(_ stored: PropertyListValue) throws -> [String: Element.Value] {
        guard case .dictionary(let entries) = stored else {
            throw PropertyListValueDecoder.corrupted("expected a dictionary, found \(PropertyListValueDecoder.kind(of: stored))", [])
        }
        var values: [String: Element.Value] = [:]
        for (key, member) in entries {
            values[key] = try ElementCoding.at(NamedKey(stringValue: key)) { try element.deserialize(member) }
        }
        return values
    }
}

/// What the container bridges share: elements one by one, with errors that say where.
private enum ElementCoding {
    static func serialize<Element: PropertyListBridge>(_ values: [Element.Value], _ element: Element) throws -> [PropertyListValue] {
        try values.map { value in
            guard let stored = try element.serialize(value) else { throw nilMember(value) }
            return stored
        }
    }

    static func deserialize<Element: PropertyListBridge>(_ stored: PropertyListValue, _ element: Element) throws -> [Element.Value] {
        guard case .array(let elements) = stored else {
            throw PropertyListValueDecoder.corrupted("expected an array, found \(PropertyListValueDecoder.kind(of: stored))", [])
        }
        return try elements.enumerated().map { index, member in
            try at(IndexCodingKey(index)) { try element.deserialize(member) }
        }
    }

    static func nilMember(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(codingPath: [], debugDescription: "a property list cannot hold nil inside a value"))
    }

    /// Runs `body`, placing a decoding error it throws at `key`, so that the message says which element.
    static func at<Result>(_ key: any CodingKey, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as DecodingError {
            switch error {
            case .dataCorrupted(let context): throw DecodingError.dataCorrupted(context.placed(at: key))
            case .typeMismatch(let type, let context): throw DecodingError.typeMismatch(type, context.placed(at: key))
            case .valueNotFound(let type, let context): throw DecodingError.valueNotFound(type, context.placed(at: key))
            case .keyNotFound(let missing, let context): throw DecodingError.keyNotFound(missing, context.placed(at: key))
            @unknown default: throw error
            }
        }
    }
}

/// A dictionary key as a coding key, for error paths.
private struct NamedKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension DecodingError.Context {
    /// The same context, one level deeper: under `key`.
    fileprivate func placed(at key: any CodingKey) -> DecodingError.Context {
        DecodingError.Context(codingPath: [key] + codingPath, debugDescription: debugDescription, underlyingError: underlyingError)
    }
}
