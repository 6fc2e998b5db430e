import Foundation
import PrefsPropertyList

/// How one typed entry's values become property-list values and back: the bridge chosen once, when the
/// `@Entry` property is declared, from what its type conforms to (see EntryBridges.swift), or the one the
/// declaration gives, with the conversion from an earlier stored type when the declaration has one.
struct EntryCoding<Value>: Sendable {
    /// The stored form of a value; `nil` removes the entry (an `Optional` entry set to `nil`).
    let encode: @Sendable (Value) throws -> PropertyListValue?
    /// The value a stored form stands for.
    let decode: @Sendable (PropertyListValue) throws -> Value

    init(encode: @escaping @Sendable (Value) throws -> PropertyListValue?, decode: @escaping @Sendable (PropertyListValue) throws -> Value) {
        self.encode = encode
        self.decode = decode
    }

    init<Bridge: PropertyListBridge>(_ bridge: Bridge) where Bridge.Value == Value {
        self.init(encode: { try bridge.serialize($0) }, decode: { try bridge.deserialize($0) })
    }

    /// This coding, reading a stored form that does not decode as `Value` as an `Old` converted by
    /// `upgrade`: what `@Entry(_:upgrading:)` declares. When neither reading works, the error is the one
    /// decoding as `Value` gave, so that `lastError` speaks of the current type.
    func upgrading<Old: Decodable & SendableMetatype>(_ upgrade: @escaping @Sendable (Old) throws -> Value) -> EntryCoding {
        let decodeCurrent = decode
        return EntryCoding(encode: encode, decode: { stored in
            do {
                return try decodeCurrent(stored)
            } catch {
                guard let old = try? PropertyListValueDecoder.decode(Old.self, from: stored),
                      let upgraded = try? upgrade(old) else { throw error }
                return upgraded
            }
        })
    }

    /// Why `error`, thrown while decoding a `Value`, happened, in one phrase that never quotes the stored
    /// value: this decoder's own messages are kept, while messages of other code (the standard library's
    /// `RawRepresentable` decoding quotes the rejected raw value) are replaced by their kind and path.
    static func reason(for error: any Error) -> String {
        guard let error = error as? DecodingError else {
            return "\(Value.self).init(from:) threw \(type(of: error))"
        }
        let context: DecodingError.Context
        let fallback: String
        switch error {
        case .typeMismatch(let type, let errorContext):
            context = errorContext
            fallback = "expected \(type)"
        case .valueNotFound(let type, let errorContext):
            context = errorContext
            fallback = "no value of type \(type)"
        case .keyNotFound(let key, let errorContext):
            context = errorContext
            fallback = "no value for the key '\(key.stringValue)'"
        case .dataCorrupted(let errorContext):
            context = errorContext
            fallback = "the stored value is not a valid \(Value.self)"
        @unknown default:
            return "it does not decode as \(Value.self)"
        }
        let message = context.underlyingError is PropertyListValueDecoder.OwnMessage ? context.debugDescription : fallback
        let path = Self.path(context.codingPath)
        return path.isEmpty ? "\(message) (decoding \(Value.self))" : "\(message) at \(path) (decoding \(Value.self))"
    }

    /// A coding path as `window.size[2]`.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key is IndexCodingKey || key.stringValue == "Index \(index)" {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}
