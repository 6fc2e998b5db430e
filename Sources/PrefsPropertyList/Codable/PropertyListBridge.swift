import Foundation

/// How values of one type are stored as property-list values: for a type that is neither `Codable` nor
/// `RawRepresentable`, or that wants a stored form other than the one those give it.
///
/// Pass a bridge to an `@Entry` property, and the entry stores what ``serialize(_:)`` returns and reads
/// back what ``deserialize(_:)`` makes of it:
///
/// ```swift
/// struct RGB: Equatable, Sendable { var red = 0, green = 0, blue = 0 }
///
/// // Stored as the string "#RRGGBB", readable in any property-list tool.
/// struct HexColorBridge: PropertyListBridge {
///     func serialize(_ color: RGB) throws -> PropertyListValue? {
///         .string("#" + [color.red, color.green, color.blue].map { String(format: "%02X", $0) }.joined())
///     }
///     func deserialize(_ stored: PropertyListValue) throws -> RGB {
///         guard case .string(let text) = stored, text.count == 7, text.hasPrefix("#"),
///               let number = Int(text.dropFirst(), radix: 16) else { throw CocoaError(.coderReadCorrupt) }
///         return RGB(red: number >> 16 & 0xFF, green: number >> 8 & 0xFF, blue: number & 0xFF)
///     }
/// }
/// ```
///
/// A stored form that ``deserialize(_:)`` rejects reads as the entry's default, with the error named in
/// `lastError`, as any value that does not decode. The bridge is used from any thread: keep it a value
/// without shared mutable state.
///
/// For `Codable` values, ``PropertyListValue/init(encoding:)`` and ``PropertyListValue/decode(_:)`` give
/// the stored form an `@Entry` of that type uses, for a bridge that stores the value inside a larger
/// structure of its own.
///
/// ## Topics
///
/// ### Converting Values
/// - ``Value``
/// - ``serialize(_:)``
/// - ``deserialize(_:)``
public protocol PropertyListBridge<Value>: Sendable {
    /// The type of the values this bridge stores.
    associatedtype Value

    /// The stored form of `value`; `nil` stores nothing, so that an entry set to it is removed.
    /// - Throws: When `value` cannot be stored: the write is refused and nothing is written.
    func serialize(_ value: Value) throws -> PropertyListValue?

    /// The value a stored form stands for.
    /// - Throws: When `stored` does not stand for a value: the entry reads as its default.
    func deserialize(_ stored: PropertyListValue) throws -> Value
}
