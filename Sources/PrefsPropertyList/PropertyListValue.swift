import Foundation

/// One property-list value: the only kind of value a defaults domain stores.
///
/// The storage layer works on this enum rather than on `Any`, so that what is written is known to
/// be encodable, and what is read back converts the way it does on Apple platforms: a number
/// becomes an `NSNumber` that casts with `as?` to every Swift numeric type holding it exactly, a
/// Bool stays a Swift `Bool`, and no value comes back wrapped in `Optional`.
///
/// Convert a native value with ``init(_:)`` (which returns `nil` for anything that is not a
/// property-list value) and back with ``nativeValue``. Being `Hashable`, values also compare whole
/// collections: `PropertyListValue(prefs.values)` tells whether anything changed between two reads.
///
/// ## Topics
///
/// ### Values
/// - ``string(_:)``
/// - ``bool(_:)``
/// - ``integer(_:)``
/// - ``unsignedInteger(_:)``
/// - ``real(_:)``
/// - ``float(_:)``
/// - ``date(_:)``
/// - ``data(_:)``
/// - ``array(_:)``
/// - ``dictionary(_:)``
///
/// ### Converting Native Values
/// - ``init(_:)``
/// - ``nativeValue``
/// - ``dictionaryValue``
///
/// ### Converting Codable Values
/// - ``init(encoding:)``
/// - ``decode(_:)``
/// - ``PropertyListBridge``
///
/// ### Reading and Writing Property Lists
/// - ``init(propertyListData:)``
/// - ``init(propertyListText:)``
/// - ``binaryPropertyListData()``
/// - ``xmlPropertyListData()``
/// - ``PropertyListCodingError``
public enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// A Boolean; stored as a property-list `true`/`false`, never as a number.
    case bool(Bool)
    /// A signed integer in the full `Int64` range.
    case integer(Int)
    /// An unsigned integer above `Int64.max` (up to `UInt64.max`), which ``integer(_:)`` cannot hold:
    /// stored as CoreFoundation stores one, as a 16-byte integer in a binary property list (its high
    /// 8 bytes zero), and as its decimal digits in XML.
    ///
    /// Every value up to `Int64.max` is an ``integer(_:)``, whatever type it was written from
    /// (`UInt64(5)` converts to `.integer(5)`), so that one number has one representation. A
    /// `.unsignedInteger` made by hand with a smaller value is written as that integer and reads back
    /// as ``integer(_:)``; it is not `==` to it.
    case unsignedInteger(UInt64)
    /// A floating-point number, stored as a 64-bit real.
    case real(Double)
    /// A single-precision number, stored as a 4-byte real in a binary property list, as CoreFoundation
    /// stores a `Float`, so that tools show the value written (`12.3`, not `12.300000190734863`).
    ///
    /// A Swift `Float`, or an `NSNumber` made from one, converts to this case. XML has no width for
    /// a `<real>`, so it is written there with the digits of its exact `Double` value and reads back
    /// as ``real(_:)`` holding the same number (still `as? Float` when read). Being a case of its
    /// own, `.float(0.5)` is not `==` to `.real(0.5)`: the two are stored differently.
    case float(Float)
    /// A date, stored as seconds since 2001-01-01 as a 64-bit real (sub-microsecond precision
    /// for dates near the present).
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// An ordered list of values.
    case array([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// The dictionary held by a `.dictionary` value, or `nil` for any other value.
    public var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let values) = self { return values }
        return nil
    }
}
