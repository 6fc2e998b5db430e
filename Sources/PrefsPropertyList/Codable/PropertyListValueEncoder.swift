import Foundation

// Encodes an `Encodable` value as its property-list *structure* (a struct becomes a dictionary, an array an
// array), never as opaque `Data`, so that a typed entry reads in `harness defaults read`, Python's plistlib
// or any other tool as `window = { height = 600; width = 800; ... }`. The value types property lists hold
// natively are stored as themselves, wherever they appear: Date and Data as dates and data, URL as its
// absolute string, UUID as its string, numbers as numbers.

/// Encodes `Encodable` values as ``PropertyListValue`` trees.
package enum PropertyListValueEncoder {
    /// The property-list structure of `value`, or `nil` when the value encodes as nothing but `nil` (an
    /// `Optional` holding nothing), which a typed entry stores by removing the entry.
    /// - Throws: `EncodingError.invalidValue` for what a property list cannot hold: `nil` inside a value, an
    ///   integer outside the `Int64` range, a nesting deeper than a domain file may hold; or what the value's
    ///   own `encode(to:)` throws.
    package static func encode<Value: Encodable>(_ value: Value) throws -> PropertyListValue? {
        let root = EncodingNode(isRoot: true)
        try root.store(value, codingPath: [])
        return try root.resolved()
    }
}

/// One value being built: filled by exactly one container, then resolved into a ``PropertyListValue``.
/// A class, so that containers handed out by an encoder keep writing into the tree after they are copied.
final class EncodingNode {
    private enum Content {
        case empty
        case null
        case value(PropertyListValue)
        case dictionary([String: EncodingNode])
        case array([EncodingNode])
    }

    private var content = Content.empty
    let isRoot: Bool
    /// Whether the array this node holds is a set's elements, stored in one canonical order.
    private var isUnordered = false

    init(isRoot: Bool = false) { self.isRoot = isRoot }

    init(_ value: PropertyListValue) {
        isRoot = false
        content = .value(value)
    }

    /// Stores `value`, through its own `encode(to:)` unless a property list holds it natively.
    func store<Value: Encodable>(_ value: Value, codingPath: [any CodingKey]) throws {
        guard codingPath.count <= PropertyListValue.maximumValueDepth else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "the value nests deeper than a domain file may hold (\(PropertyListValue.maximumValueDepth) levels)"
            ))
        }
        if let native = try Self.native(value, codingPath: codingPath) {
            content = .value(native)
        } else {
            try value.encode(to: PropertyListValueEncoding(node: self, codingPath: codingPath))
            isUnordered = value is any UnorderedCollection
        }
    }

    /// The property-list value of the types stored as themselves, or `nil` for every other type.
    static func native<Value: Encodable>(_ value: Value, codingPath: [any CodingKey]) throws -> PropertyListValue? {
        // Compared by metatype first: a generic function specialized for a concrete type folds these away.
        if Value.self == String.self { return .string(value as! String) }
        if Value.self == Bool.self { return .bool(value as! Bool) }
        if Value.self == Int.self { return .integer(value as! Int) }
        if Value.self == Double.self { return .real(value as! Double) }
        // A 4-byte real, as an untyped write stores a Float.
        if Value.self == Float.self { return .float(value as! Float) }
        if Value.self == Date.self { return .date(value as! Date) }
        if Value.self == Data.self { return .data(value as! Data) }
        if Value.self == URL.self { return .string((value as! URL).absoluteString) }
        if Value.self == UUID.self { return .string((value as! UUID).uuidString) }
        if let integer = value as? any BinaryInteger {
            // The untyped conversion's rule: `.integer`, or `.unsignedInteger` above `Int64.max`.
            guard let number = PropertyListValue(integer) else {
                throw EncodingError.invalidValue(value, EncodingError.Context(
                    codingPath: codingPath, debugDescription: "the integer does not fit in a property-list integer (Int64 or UInt64)"
                ))
            }
            return number
        }
        return nil
    }

    /// Makes this node a dictionary (keeping one it already is, as a second keyed container of one encoder must).
    func dictionaryChild(_ key: String) -> EncodingNode {
        let child = EncodingNode()
        setChild(child, forKey: key)
        return child
    }

    func setChild(_ child: EncodingNode, forKey key: String) {
        if case .dictionary(var children) = content {
            content = .empty  // so that the dictionary is changed in place, not copied
            children[key] = child
            content = .dictionary(children)
        } else {
            content = .dictionary([key: child])
        }
    }

    func becomeDictionary() {
        if case .dictionary = content { return }
        content = .dictionary([:])
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    func appendChild(_ child: EncodingNode) {
        if case .array(var children) = content {
            content = .empty
            children.append(child)
            content = .array(children)
        } else {
            content = .array([child])
        }
    }

    var arrayCount: Int {
        if case .array(let children) = content { return children.count }
        return 0
    }

    var dictionaryCount: Int {
        if case .dictionary(let children) = content { return children.count }
        return 0
    }

    func setValue(_ value: PropertyListValue) { content = .value(value) }

    /// Records `nil`: allowed only as the whole value, where it means "no entry".
    func setNil(codingPath: [any CodingKey]) throws {
        guard isRoot else { throw Self.nilError(codingPath) }
        content = .null
    }

    static func nilError(_ codingPath: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(Optional<Int>.none as Any, EncodingError.Context(
            codingPath: codingPath, debugDescription: "nil cannot be stored inside a property list"
        ))
    }

    /// The finished value; `nil` for a root that recorded `nil`.
    func resolved() throws -> PropertyListValue? {
        switch content {
        case .null: return nil
        // A type that encoded nothing at all is an empty dictionary, as an empty struct is.
        case .empty: return .dictionary([:])
        case .value(let value): return value
        case .dictionary(let children):
            var values: [String: PropertyListValue] = [:]
            values.reserveCapacity(children.count)
            for (key, child) in children { values[key] = try child.resolved() }
            return .dictionary(values)
        case .array(let children):
            var values: [PropertyListValue] = []
            values.reserveCapacity(children.count)
            for child in children {
                guard let value = try child.resolved() else { continue }
                values.append(value)
            }
            if isUnordered {
                // A set encodes its elements in hash order, which differs between runs and between equal sets: in
                // the order of their encodings (a dictionary's keys sorted), equal sets store equal bytes, and a
                // write of an equal set changes nothing.
                values = values.map { (encoding: BinaryPropertyList.encode($0), value: $0) }
                    .sorted { $0.encoding.lexicographicallyPrecedes($1.encoding) }
                    .map(\.value)
            }
            return .array(values)
        }
    }
}

/// The `Encoder` handed to a value's `encode(to:)`.
struct PropertyListValueEncoding: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeDictionary()
        return KeyedEncodingContainer(KeyedEncodingNode<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedEncodingNode(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueEncodingNode(node: node, codingPath: codingPath)
    }
}

/// A position in an array, as a coding key for paths.
package struct IndexCodingKey: CodingKey {
    package let intValue: Int?
    package var stringValue: String { "Index \(intValue ?? 0)" }
    package init(_ index: Int) { intValue = index }
    package init?(stringValue: String) { nil }
    package init?(intValue: Int) { self.intValue = intValue }
}

/// A string key of its own, for `superEncoder()` and dictionaries decoded by name.
struct NamedCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct KeyedEncodingNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func put(_ value: PropertyListValue, _ key: Key) { node.setChild(EncodingNode(value), forKey: key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { throw EncodingNode.nilError(codingPath + [key]) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.real(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try store(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try store(value, key) }

    private func store<T: Encodable>(_ value: T, _ key: Key) throws {
        try node.dictionaryChild(key.stringValue).store(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.dictionaryChild(key.stringValue)
        child.becomeDictionary()
        return KeyedEncodingContainer(KeyedEncodingNode<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.dictionaryChild(key.stringValue)
        child.becomeArray()
        return UnkeyedEncodingNode(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let key = NamedCodingKey("super")
        return PropertyListValueEncoding(node: node.dictionaryChild(key.stringValue), codingPath: codingPath + [key])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        PropertyListValueEncoding(node: node.dictionaryChild(key.stringValue), codingPath: codingPath + [key])
    }
}

struct UnkeyedEncodingNode: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { node.arrayCount }

    private func put(_ value: PropertyListValue) { node.appendChild(EncodingNode(value)) }

    private func nextChild() -> (EncodingNode, [any CodingKey]) {
        let path = codingPath + [IndexCodingKey(count)]
        let child = EncodingNode()
        node.appendChild(child)
        return (child, path)
    }

    mutating func encodeNil() throws { throw EncodingNode.nilError(codingPath + [IndexCodingKey(count)]) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.real(value)) }
    mutating func encode(_ value: Float) throws { put(.float(value)) }
    mutating func encode(_ value: Int) throws { put(.integer(value)) }
    mutating func encode(_ value: Int8) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: Int16) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: Int32) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: Int64) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: UInt) throws { try store(value) }
    mutating func encode(_ value: UInt8) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: UInt16) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: UInt32) throws { put(.integer(Int(value))) }
    mutating func encode(_ value: UInt64) throws { try store(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try store(value) }

    private func store<T: Encodable>(_ value: T) throws {
        let (child, path) = nextChild()
        try child.store(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (child, path) = nextChild()
        child.becomeDictionary()
        return KeyedEncodingContainer(KeyedEncodingNode<NestedKey>(node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (child, path) = nextChild()
        child.becomeArray()
        return UnkeyedEncodingNode(node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let (child, path) = nextChild()
        return PropertyListValueEncoding(node: child, codingPath: path)
    }
}

struct SingleValueEncodingNode: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { try node.setNil(codingPath: codingPath) }
    mutating func encode(_ value: Bool) throws { node.setValue(.bool(value)) }
    mutating func encode(_ value: String) throws { node.setValue(.string(value)) }
    mutating func encode(_ value: Double) throws { node.setValue(.real(value)) }
    mutating func encode(_ value: Float) throws { node.setValue(.float(value)) }
    mutating func encode(_ value: Int) throws { node.setValue(.integer(value)) }
    mutating func encode(_ value: Int8) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: Int16) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: Int32) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: Int64) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: UInt) throws { try node.store(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt8) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: UInt16) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: UInt32) throws { node.setValue(.integer(Int(value))) }
    mutating func encode(_ value: UInt64) throws { try node.store(value, codingPath: codingPath) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.store(value, codingPath: codingPath) }
}

/// A collection whose order means nothing (a `Set`): encoded, its elements are sorted (see `EncodingNode.resolved()`).
protocol UnorderedCollection {}
extension Set: UnorderedCollection {}
