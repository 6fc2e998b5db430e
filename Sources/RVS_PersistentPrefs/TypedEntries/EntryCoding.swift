import Foundation

/// How one typed entry's values become property-list values and back: chosen once, when the `@Entry`
/// property is declared, from what its type conforms to.
///
/// - `Codable` values are stored as their property-list structure (PropertyListValueEncoder).
/// - `RawRepresentable` values are stored as their raw value, so that an enum reads in any tool as the
///   string or number it stands for, and an untyped write of that raw value reads back as the case.
struct EntryCoding<Value>: Sendable {
    /// The stored form of a value; `nil` removes the entry (an `Optional` entry set to `nil`).
    let encode: @Sendable (Value) throws -> PropertyListValue?
    /// The value a stored form stands for.
    let decode: @Sendable (PropertyListValue) throws -> Value

    static func codable() -> EntryCoding where Value: Codable & SendableMetatype {
        EntryCoding(
            encode: { try PropertyListValueEncoder.encode($0) },
            decode: { try PropertyListValueDecoder.decode(Value.self, from: $0) }
        )
    }

    static func rawRepresentable() -> EntryCoding where Value: RawRepresentable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
        EntryCoding(
            encode: { try PropertyListValueEncoder.encode($0.rawValue) },
            decode: { stored in
                let raw = try PropertyListValueDecoder.decode(Value.RawValue.self, from: stored)
                guard let value = Value(rawValue: raw) else {
                    throw PropertyListValueDecoder.corrupted("the stored raw value is not one of \(Value.self)", [])
                }
                return value
            }
        )
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
