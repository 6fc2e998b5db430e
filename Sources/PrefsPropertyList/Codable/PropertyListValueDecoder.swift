import Foundation

// Decodes a `Decodable` value from a ``PropertyListValue`` tree: the inverse of PropertyListValueEncoder,
// and lenient where a value written by the untyped API (or by another tool) is stored in another property-
// list shape that means the same: an integer entry holding the real 3.0, a Float entry holding a 64-bit real.
// Every message it writes says what was expected and what kind of value was found, and where, but never
// quotes the stored value, so that `lastError` can be logged.

/// Decodes `Decodable` values from ``PropertyListValue`` trees.
package enum PropertyListValueDecoder {
    /// Decodes a `Value` from `value`.
    /// - Throws: `DecodingError` when `value` does not have the shape `Value` expects, or what `Value`'s own
    ///   `init(from:)` throws.
    package static func decode<Value: Decodable>(_ type: Value.Type, from value: PropertyListValue) throws -> Value {
        try unbox(type, from: value, codingPath: [])
    }

    /// Decodes the types a property list holds natively directly, and every other type through its own
    /// `init(from:)`.
    static func unbox<Value: Decodable>(_ type: Value.Type, from value: PropertyListValue, codingPath: [any CodingKey]) throws -> Value {
        if Value.self == String.self {
            guard case .string(let string) = value else { throw mismatch(type, value, codingPath) }
            return string as! Value
        }
        if Value.self == Bool.self {
            guard case .bool(let bool) = value else { throw mismatch(type, value, codingPath) }
            return bool as! Value
        }
        if Value.self == Int.self { return try integer(Int.self, from: value, codingPath) as! Value }
        if Value.self == Double.self { return try double(from: value, codingPath) as! Value }
        if Value.self == Float.self { return try float(from: value, codingPath) as! Value }
        if Value.self == Date.self {
            guard case .date(let date) = value else { throw mismatch(type, value, codingPath) }
            return date as! Value
        }
        if Value.self == Data.self {
            guard case .data(let data) = value else { throw mismatch(type, value, codingPath) }
            return data as! Value
        }
        if Value.self == URL.self {
            guard case .string(let string) = value else { throw mismatch(type, value, codingPath) }
            guard let url = URL(string: string) else { throw corrupted("the string is not a valid URL", codingPath) }
            return url as! Value
        }
        if Value.self == UUID.self {
            guard case .string(let string) = value else { throw mismatch(type, value, codingPath) }
            guard let uuid = UUID(uuidString: string) else { throw corrupted("the string is not a valid UUID", codingPath) }
            return uuid as! Value
        }
        if let integerType = Value.self as? any FixedWidthInteger.Type {
            return try integer(integerType, from: value, codingPath) as! Value
        }
        return try Value(from: PropertyListValueDecoding(value: value, codingPath: codingPath))
    }

    // MARK: Numbers

    /// A stored number, whichever way the codec represents it.
    enum Number {
        case integer(Int)
        case unsigned(UInt64)
        case real(Double)
    }

    /// The number `value` holds, or `nil` when it holds something else (a Bool is not a number).
    static func number(_ value: PropertyListValue) -> Number? {
        switch value {
        case .integer(let int): .integer(int)
        case .unsignedInteger(let int): .unsigned(int)
        case .real(let double): .real(double)
        case .float(let float): .real(Double(float))
        case .bool, .string, .date, .data, .array, .dictionary: nil
        }
    }

    static func integer<Integer: FixedWidthInteger>(_ type: Integer.Type, from value: PropertyListValue, _ codingPath: [any CodingKey]) throws -> Integer {
        switch number(value) {
        case .integer(let int)?:
            guard let result = Integer(exactly: int) else { throw corrupted("the number does not fit in \(type)", codingPath) }
            return result
        case .unsigned(let int)?:
            guard let result = Integer(exactly: int) else { throw corrupted("the number does not fit in \(type)", codingPath) }
            return result
        case .real(let double)?:
            guard let result = Integer(exactly: double) else {
                throw corrupted("the number is not an integer that fits in \(type)", codingPath)
            }
            return result
        case nil:
            throw mismatch(type, value, codingPath)
        }
    }

    static func double(from value: PropertyListValue, _ codingPath: [any CodingKey]) throws -> Double {
        switch number(value) {
        case .integer(let int)?: return Double(int)
        case .unsigned(let int)?: return Double(int)
        case .real(let double)?: return double
        case nil: throw mismatch(Double.self, value, codingPath)
        }
    }

    /// A Float from any stored number within its range, rounded to the nearest Float as Apple's property-list
    /// decoder does (so that the 64-bit real 0.1 an untyped write stores reads back as the Float 0.1).
    static func float(from value: PropertyListValue, _ codingPath: [any CodingKey]) throws -> Float {
        let double = try self.double(from: value, codingPath)
        guard !double.isFinite || abs(double) <= Double(Float.greatestFiniteMagnitude) else {
            throw corrupted("the number does not fit in Float", codingPath)
        }
        return Float(double)
    }

    // MARK: Errors

    /// Marks the errors this decoder makes, whose messages never quote a value and so may be shown as they are.
    package struct OwnMessage: Error {}

    static func mismatch(_ type: Any.Type, _ value: PropertyListValue, _ codingPath: [any CodingKey]) -> DecodingError {
        DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "expected \(expectation(type)), found \(kind(of: value))",
            underlyingError: OwnMessage()
        ))
    }

    package static func corrupted(_ message: String, _ codingPath: [any CodingKey]) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: message, underlyingError: OwnMessage()))
    }

    static func missing(_ key: any CodingKey, _ codingPath: [any CodingKey]) -> DecodingError {
        DecodingError.keyNotFound(key, DecodingError.Context(
            codingPath: codingPath, debugDescription: "no value for the key '\(key.stringValue)'", underlyingError: OwnMessage()
        ))
    }

    private static func expectation(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a Boolean"
        case is Date.Type: return "a date"
        case is Data.Type: return "data"
        case is URL.Type: return "a URL string"
        case is UUID.Type: return "a UUID string"
        case is any BinaryInteger.Type, is any BinaryFloatingPoint.Type: return "a number (\(type))"
        case is [String: PropertyListValue].Type: return "a dictionary"
        case is [PropertyListValue].Type: return "an array"
        default: return "\(type)"
        }
    }

    /// What kind of value `value` is, in words, without its contents.
    package static func kind(of value: PropertyListValue) -> String {
        if case .string = value { return "a string" }
        if case .bool = value { return "a Boolean" }
        if case .date = value { return "a date" }
        if case .data = value { return "data" }
        if case .array = value { return "an array" }
        if case .dictionary = value { return "a dictionary" }
        return "a number"
    }
}

/// The `Decoder` handed to a value's `init(from:)`.
struct PropertyListValueDecoding: Decoder {
    let value: PropertyListValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let entries) = value else {
            throw PropertyListValueDecoder.mismatch([String: PropertyListValue].self, value, codingPath)
        }
        return KeyedDecodingContainer(KeyedDecodingNode<Key>(entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw PropertyListValueDecoder.mismatch([PropertyListValue].self, value, codingPath)
        }
        return UnkeyedDecodingNode(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecodingNode(value: value, codingPath: codingPath)
    }
}

struct KeyedDecodingNode<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: [String: PropertyListValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    private func value(_ key: Key) throws -> PropertyListValue {
        guard let value = entries[key.stringValue] else { throw PropertyListValueDecoder.missing(key, codingPath) }
        return value
    }

    // A property list has no null: a present key never holds nil.
    func decodeNil(forKey key: Key) throws -> Bool {
        _ = try value(key)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try PropertyListValueDecoder.unbox(type, from: value(key), codingPath: codingPath + [key])
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }

    private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try PropertyListValueDecoder.unbox(type, from: value(key), codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try PropertyListValueDecoding(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try PropertyListValueDecoding(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = NamedCodingKey("super")
        guard let value = entries[key.stringValue] else { throw PropertyListValueDecoder.missing(key, codingPath) }
        return PropertyListValueDecoding(value: value, codingPath: codingPath + [key])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        PropertyListValueDecoding(value: try value(key), codingPath: codingPath + [key])
    }
}

struct UnkeyedDecodingNode: UnkeyedDecodingContainer {
    let elements: [PropertyListValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [PropertyListValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> (PropertyListValue, [any CodingKey]) {
        let path = codingPath + [IndexCodingKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path, debugDescription: "the array has no more elements", underlyingError: PropertyListValueDecoder.OwnMessage()
            ))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        _ = try next(Never?.self)
        currentIndex -= 1  // a property list has no null: the element is still to be decoded
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try PropertyListValueDecoder.unbox(type, from: value, codingPath: path)
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeElement(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodeElement(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeElement(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeElement(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeElement(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeElement(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeElement(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeElement(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeElement(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeElement(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeElement(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeElement(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeElement(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeElement(type) }

    private mutating func decodeElement<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try PropertyListValueDecoder.unbox(type, from: value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next([String: PropertyListValue].self)
        return try PropertyListValueDecoding(value: value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([PropertyListValue].self)
        return try PropertyListValueDecoding(value: value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(PropertyListValue.self)
        return PropertyListValueDecoding(value: value, codingPath: path)
    }
}

struct SingleValueDecodingNode: SingleValueDecodingContainer {
    let value: PropertyListValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try PropertyListValueDecoder.unbox(type, from: value, codingPath: codingPath)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try unbox(type) }
    func decode(_ type: String.Type) throws -> String { try unbox(type) }
    func decode(_ type: Double.Type) throws -> Double { try unbox(type) }
    func decode(_ type: Float.Type) throws -> Float { try unbox(type) }
    func decode(_ type: Int.Type) throws -> Int { try unbox(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unbox(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unbox(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unbox(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unbox(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try unbox(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unbox(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unbox(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unbox(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unbox(type) }

    private func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        try PropertyListValueDecoder.unbox(type, from: value, codingPath: codingPath)
    }
}
