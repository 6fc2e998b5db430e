import Foundation

extension PropertyListValue {
    /// Converts a native Swift or Foundation value into a property-list value.
    ///
    /// Accepted: `String`, `Bool`, the standard integer types (a value outside the `Int64` range is
    /// rejected), `Double`, `Float`, `Date`, `Data`, arrays of accepted values, and dictionaries whose
    /// keys are all strings (including `[AnyHashable: Any]` whose keys are strings), at any depth, and
    /// their Foundation counterparts (`NSString`, `NSNumber`, `NSDate`, `NSData`, `NSArray`,
    /// `NSDictionary`). An `Optional` holding a value is unwrapped.
    ///
    /// Returns `nil` for anything else: `nil`/`Optional.none`, `NSNull`, `URL`, `UUID`, structs and
    /// classes (including `Codable` ones), dictionaries with non-string keys, and containers nested
    /// deeper than a domain file may hold. A container is rejected whole when any element is.
    public init?(_ value: Any) {
        guard let converted = Self.convert(value, depth: 0) else { return nil }
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
        if type == Self.dictionaryType { return convert(value as! [String: Any], depth: depth) }
        if type == Self.arrayType { return convert(value as! [Any], depth: depth) }
        switch value {
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let int as Int: return .integer(int)
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let double as Double: return .real(double)
        case let float as Float: return .real(Double(float))
        case let real as any BinaryFloatingPoint: return .real(Double(real))  // CGFloat, Float16, Float80
        case let int as any BinaryInteger: return Int(exactly: int).map(PropertyListValue.integer)
        case let dictionary as [String: Any]: return convert(dictionary, depth: depth)
        case let array as [Any]: return convert(array, depth: depth)
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
    private static let dictionaryType = ObjectIdentifier([String: Any].self)
    private static let arrayType = ObjectIdentifier([Any].self)

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

    /// An `NSNumber` says what it holds only through its Objective-C type code.
    private static func convert(_ number: NSNumber) -> PropertyListValue? {
        switch String(cString: number.objCType) {
        case "c", "B": return .bool(number.boolValue)
        case "f", "d": return .real(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            return Int(exactly: number.uint64Value).map(PropertyListValue.integer)
        default: return .integer(number.intValue)
        }
    }

    /// The value as the native Swift type a caller casts to: `String`, `Bool`, `Int`, `Double`,
    /// `Date`, `Data`, `[Any]` or `[String: Any]`, never wrapped in `Optional`.
    public var nativeValue: Any {
        switch self {
        case .string(let value): return value
        case .bool(let value): return value
        case .integer(let value): return value
        case .real(let value): return value
        case .date(let value): return value
        case .data(let value): return value
        case .array(let values): return values.map(\.nativeValue)
        case .dictionary(let values): return values.mapValues(\.nativeValue)
        }
    }
}

extension Dictionary where Key == String, Value == PropertyListValue {
    /// The dictionary as native Swift values (see ``PropertyListValue/nativeValue``).
    public var nativeValues: [String: Any] { mapValues(\.nativeValue) }
}
