import Foundation

// The public face of the `Codable` encoder and decoder that typed entries use, so that a suite user (or a
// bridge) stores a `Codable` value exactly as an `@Entry` property of that type would store it.

extension PropertyListValue {
    /// The property-list structure of an `Encodable` value, as an `@Entry` property stores it: a struct
    /// becomes a dictionary, an array an array, never opaque `Data`.
    ///
    /// ```swift
    /// struct WindowFrame: Codable { var width = 800.0, height = 600.0 }
    /// let stored = try PropertyListValue(encoding: WindowFrame())   // .dictionary(["width": .real(800), …])
    /// try suite.setValue(stored, forKey: "window")
    /// ```
    ///
    /// The types a property list holds are stored as themselves wherever they appear (`String`, `Bool`,
    /// integers, `Double`, `Float` as a 4-byte real, `Date`, `Data`); a `URL` is stored as its absolute
    /// string and a `UUID` as its string.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: `nil` when the value encodes as nothing at all: an `Optional` holding nothing.
    /// - Throws: `EncodingError.invalidValue` for what a property list cannot hold (`nil` inside a value,
    ///   an integer outside the `Int64` range, a nesting deeper than a domain file may hold), or what the
    ///   value's own `encode(to:)` throws.
    public init?<Value: Encodable>(encoding value: Value) throws {
        guard let encoded = try PropertyListValueEncoder.encode(value) else { return nil }
        self = encoded
    }

    /// Decodes a `Decodable` value from this property-list structure: the inverse of
    /// ``init(encoding:)``, and lenient where another writer stored a value in a shape that means the same
    /// (an integer entry holding the real `3.0`, a `Float` held as a 64-bit real).
    ///
    /// ```swift
    /// if let stored = try suite.value(forKey: "window") {
    ///     let frame = try stored.decode(WindowFrame.self)
    /// }
    /// ```
    ///
    /// - Parameter type: The type to decode.
    /// - Throws: `DecodingError` when the value does not have the shape `type` expects (its message says
    ///   what was expected, what was found and where, and never quotes the stored value), or what the
    ///   type's own `init(from:)` throws.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        try PropertyListValueDecoder.decode(type, from: self)
    }
}
