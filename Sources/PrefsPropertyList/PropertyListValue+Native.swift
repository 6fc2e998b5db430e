import Foundation

extension PropertyListValue {
    /// Converts a native Swift or Foundation value into a property-list value.
    ///
    /// Accepted: `String`, `Bool`, the standard integer types (an unsigned value above `Int64.max`
    /// becomes ``unsignedInteger(_:)``, every other one ``integer(_:)``), `Double`, `Float` (kept as ``float(_:)``), `CGFloat`, `Date`, `Data`, arrays of
    /// accepted values, and dictionaries whose keys are all strings (including `[AnyHashable: Any]`
    /// whose keys are strings), at any depth, and their Foundation counterparts (`NSString`,
    /// `NSNumber`, `NSDate`, `NSData`, `NSArray`, `NSDictionary`). An `NSNumber` keeps the kind it
    /// was made from: a Boolean one becomes ``bool(_:)``, one made from a `Float` ``float(_:)``, from
    /// a `Double` ``real(_:)``, from an integer ``integer(_:)``; so values read through
    /// ``nativeValue`` convert back to exactly what was stored. An `Optional` holding a value is
    /// unwrapped.
    ///
    /// Returns `nil` for anything else: `nil`/`Optional.none`, `NSNull`, `URL`, `UUID`, structs and
    /// classes (including `Codable` ones), dictionaries with non-string keys, and containers nested
    /// deeper than a domain file may hold. A container is rejected whole when any element is.
    public init?(_ value: Any) {
        guard let converted = Self.convert(value, depth: 0) else { return nil }
        self = converted
    }

    /// Converts what Foundation's parser made of a property list, whose values may nest `maximumDepth`
    /// levels below its root: ``maximumDepth`` for a whole file, so that the XML reader accepts exactly
    /// the depths the binary reader does, or ``maximumValueDepth`` for a value still to be stored.
    package init?(parsed value: Any, maximumDepth: Int) {
        guard let converted = Self.convert(value, depth: Self.maximumValueDepth - maximumDepth) else { return nil }
        self = converted
    }

    /// The deepest nesting a domain file may have, so that a hostile or accidental cycle cannot
    /// recurse forever (the decoder enforces it too).
    package static let maximumDepth = 512

    /// The deepest nesting of a converted value: it is stored two levels down in a domain file (the
    /// file's root dictionary, then a collection), and the whole file must stay within ``maximumDepth``.
    package static let maximumValueDepth = maximumDepth - 2

    private static func convert(_ value: Any, depth: Int) -> PropertyListValue? {
        guard depth <= maximumValueDepth else { return nil }
        // An NSNumber first, by its own type code: `as?` casts would bridge it to any numeric type (an
        // NSNumber 1 is `as? Bool`). Checked by type, since casting a Swift number to NSNumber allocates.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber { return convert(number) }
        // The exact native types by metatype first: a comparison, where each failed `as?` below is a
        // dynamic cast through the runtime (the difference is most of the cost of a large write).
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == Self.stringType { return .string(value as! String) }
        if type == Self.intType { return .integer(value as! Int) }
        if type == Self.boolType { return .bool(value as! Bool) }
        if type == Self.doubleType { return .real(value as! Double) }
        if type == Self.floatType { return .float(value as! Float) }
        if type == Self.dictionaryType { return convert(value as! [String: Any], depth: depth) }
        if type == Self.arrayType { return convert(value as! [Any], depth: depth) }
        // Arrays of one scalar type, by metatype too: as `[Any]` below, each element would be boxed and cast
        // again. (Their elements are one level down, which must still be allowed.)
        if depth < maximumValueDepth {
            if type == Self.intArrayType { return .array((value as! [Int]).map(PropertyListValue.integer)) }
            if type == Self.stringArrayType { return .array((value as! [String]).map(PropertyListValue.string)) }
            if type == Self.doubleArrayType { return .array((value as! [Double]).map(PropertyListValue.real)) }
            if type == Self.boolArrayType { return .array((value as! [Bool]).map(PropertyListValue.bool)) }
        }
        switch value {
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let int as Int: return .integer(int)
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let double as Double: return .real(double)
        case let float as Float: return .float(float)
        // Containers before the numeric protocols, whose casts look conformances up: nothing is both.
        case let dictionary as [String: Any]: return convert(dictionary, depth: depth)
        case let array as [Any]: return convert(array, depth: depth)
        case let real as any BinaryFloatingPoint: return .real(Double(real))  // CGFloat, Float16, Float80
        case let int as any BinaryInteger: return integer(exactly: int)
        default:
            break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            // `Optional.some(x)` is x; `Optional.none` is not a value.
            guard let wrapped = mirror.children.first?.value else { return nil }
            return convert(wrapped, depth: depth)
        case .dictionary:
            guard let dictionary = value as? [AnyHashable: Any] else { return nil }
            var converted: [String: PropertyListValue] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let key = key.base as? String, let element = convert(element, depth: depth + 1) else {
                    return nil
                }
                converted[key] = element
            }
            return .dictionary(converted)
        default:
            // A failed bridge must reject the value, not stand in for it as an empty dictionary.
            if let dictionary = value as? NSDictionary, let bridged = dictionary as Any as? [AnyHashable: Any] {
                return convert(bridged, depth: depth)
            }
            return nil
        }
    }

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let boolType = ObjectIdentifier(Bool.self)
    private static let doubleType = ObjectIdentifier(Double.self)
    private static let floatType = ObjectIdentifier(Float.self)
    private static let dictionaryType = ObjectIdentifier([String: Any].self)
    private static let arrayType = ObjectIdentifier([Any].self)
    private static let intArrayType = ObjectIdentifier([Int].self)
    private static let stringArrayType = ObjectIdentifier([String].self)
    private static let doubleArrayType = ObjectIdentifier([Double].self)
    private static let boolArrayType = ObjectIdentifier([Bool].self)

    private static func convert(_ dictionary: [String: Any], depth: Int) -> PropertyListValue? {
        var converted: [String: PropertyListValue] = [:]
        converted.reserveCapacity(dictionary.count)
        for (key, element) in dictionary {
            guard let element = convert(element, depth: depth + 1) else { return nil }
            converted[key] = element
        }
        return .dictionary(converted)
    }

    private static func convert(_ array: [Any], depth: Int) -> PropertyListValue? {
        var converted: [PropertyListValue] = []
        converted.reserveCapacity(array.count)
        for element in array {
            guard let element = convert(element, depth: depth + 1) else { return nil }
            converted.append(element)
        }
        return .array(converted)
    }

    /// An `NSNumber` says what it holds through its class and its Objective-C type code. A Boolean is
    /// told by its class, not by the code "c" it shares with `Int8` (and with small integers, which
    /// CoreFoundation may store in one byte).
    private static func convert(_ number: NSNumber) -> PropertyListValue? {
        if ObjectIdentifier(Swift.type(of: number)) == Self.booleanNumberClass { return .bool(number.boolValue) }
        switch number.objCType.pointee {
        case CChar(UInt8(ascii: "f")): return .float(number.floatValue)
        case CChar(UInt8(ascii: "d")): return .real(number.doubleValue)
        case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")),
             CChar(UInt8(ascii: "S")), CChar(UInt8(ascii: "C")):
            return integer(exactly: number.uint64Value)
        case CChar(UInt8(ascii: "B")): return .bool(number.boolValue)
        default: return .integer(number.intValue)
        }
    }

    /// An integer as ``integer(_:)`` when it fits `Int`, else as ``unsignedInteger(_:)`` when it fits
    /// `UInt64`, else `nil` (a wider integer type's value).
    private static func integer(exactly value: some BinaryInteger) -> PropertyListValue? {
        if let int = Int(exactly: value) { return .integer(int) }
        return UInt64(exactly: value).map(PropertyListValue.unsignedInteger)
    }

    /// The class of Foundation's two Boolean `NSNumber`s (`__NSCFBoolean` on Linux).
    private static let booleanNumberClass = ObjectIdentifier(Swift.type(of: NSNumber(value: true)))

    /// The value as what a caller casts with `as?`, as it would be read back on Apple platforms.
    ///
    /// - A number (``integer(_:)``, ``unsignedInteger(_:)``, ``real(_:)``, ``float(_:)``) is an `NSNumber`. On this platform's
    ///   Foundation it casts to `Int`, `Int8`, `Int16`, `Int32`, `Int64`, `UInt`, `UInt8`, `UInt16`,
    ///   `UInt32`, `UInt64`, `Float` and `Double` exactly when that type holds the value exactly;
    ///   otherwise the cast is `nil`, never a rounded or truncated number. So `300` is `as? Int16` but
    ///   not `as? Int8`, `-1` is not `as? UInt`, `2.5` is `as? Double` and `as? Float` but not
    ///   `as? Int`, `5.0` is also `as? Int`, `0.1` written as a `Double` is not `as? Float`,
    ///   `Int.max` is not `as? Double`, and a `Float` written is `as? Float` equal to it and
    ///   `as? Double` equal to its exact widening (`Float(0.8)` reads `as? Double` as
    ///   `0.800000011920929`). NaN and the infinities cast to `Float` and `Double` only. A number
    ///   equal to 0 or 1 also casts to `Bool`, as on Apple platforms. `as? NSNumber` always works;
    ///   `as? CGFloat` never does on Linux (cast to `Double`, then convert).
    /// - A Boolean is a Swift `Bool`: `as? Bool` only, printing as `true`/`false` (on Apple platforms a
    ///   stored Boolean also casts to the integer types; here it does not).
    /// - `String`, `Date`, `Data`; containers are `[Any]` and `[String: Any]` of such values, so they
    ///   cast element-wise (`as? [Float]`, `as? [String: Int32]`, `as? [String: UInt8]`) under the
    ///   same rules, and no element is wrapped in `Optional`.
    public var nativeValue: Any {
        switch self {
        case .string(let value): return value
        case .bool(let value): return value
        case .integer(let value): return NSNumber(value: value)
        case .unsignedInteger(let value): return NSNumber(value: value)
        case .real(let value): return NSNumber(value: value)
        case .float(let value): return NSNumber(value: value)
        case .date(let value): return value
        case .data(let value): return value
        case .array(let values): return values.map(\.nativeValue)
        case .dictionary(let values): return values.mapValues(\.nativeValue)
        }
    }
}

extension Dictionary where Key == String, Value == PropertyListValue {
    /// The dictionary as native Swift values (see ``PropertyListValue/nativeValue``).
    package var nativeValues: [String: Any] { mapValues(\.nativeValue) }
}
