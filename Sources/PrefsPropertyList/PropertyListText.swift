import Foundation

/// The text property-list formats: XML (read from files other tools wrote, and written for export)
/// and OpenStep (`{appearance = dark;}`, read from command-line arguments only).
///
/// Reading goes through Foundation's parser, whose output is then converted by
/// ``PropertyListValue/init(_:)``; writing is done here so that a Bool stays `<true/>` and an
/// integer `<integer>` whatever Foundation's `NSNumber` bridging would make of them.
package enum PropertyListText {

    // MARK: Reading

    /// Parses an XML or OpenStep property list (or a binary one, which goes to the binary reader): text
    /// typed by a person, for a value to be stored, so nesting is limited as for ``PropertyListValue/init(_:)``.
    ///
    /// XML is read as other XML readers read it, where Foundation's parser alone would not (see
    /// ``XMLInputRepair``): comments inside a key or string are ignored, and a leading U+FEFF in a
    /// string or key is kept, and of two keys that Swift's `String ==` treats as equal (a precomposed
    /// `"é"` and `"e\u{301}"`) the same one survives as in a binary file (``EquivalentKeys``).
    ///
    /// OpenStep has no numbers, Booleans or dates: every scalar in it comes back as a string.
    package static func decode(_ data: Data) throws(PropertyListCodingError) -> PropertyListValue {
        try parse(data, allowOpenStep: true, maximumDepth: PropertyListValue.maximumValueDepth).value
    }

    /// Reads a domain file: binary, or XML after an optional UTF-8 byte-order mark and white space.
    ///
    /// Either format may nest to ``PropertyListValue/maximumDepth`` below the root, so that every domain
    /// the library accepts exports to XML and imports again. XML is read as ``decode(_:)`` describes.
    ///
    /// OpenStep text is refused here: a file is only ever written as binary or XML, and OpenStep
    /// accepts almost any text (a lone word is a string), so allowing it would make a damaged or
    /// foreign file look like a valid one.
    package static func decodeFile(_ bytes: UnsafeRawBufferPointer) throws(PropertyListCodingError) -> PropertyListValue {
        if bytes.starts(with: binaryMagic) {
            return try BinaryPropertyList.decode(bytes)
        }
        guard looksLikeXML(bytes) else {
            throw PropertyListCodingError(reason: "not a property list")
        }
        return try parse(Data(bytes), allowOpenStep: false, maximumDepth: PropertyListValue.maximumDepth).value
    }

    /// Reads a domain file as ``decodeFile(_:)`` does, and returns aside the entries that lost to an
    /// equal key spelled otherwise (`nil` when there are none), for the storage layer to write back.
    package static func decodeFileKeepingShadowed(
        _ bytes: UnsafeRawBufferPointer
    ) throws(PropertyListCodingError) -> (value: PropertyListValue, shadowed: ShadowedEntries?) {
        if bytes.starts(with: binaryMagic) {
            return try BinaryPropertyList.decodeKeepingShadowed(bytes)
        }
        guard looksLikeXML(bytes) else {
            throw PropertyListCodingError(reason: "not a property list")
        }
        return try parse(Data(bytes), allowOpenStep: false, maximumDepth: PropertyListValue.maximumDepth, keepShadowed: true)
    }

    private static let binaryMagic: [UInt8] = Array("bplist00".utf8)

    /// Whether the text starts, after an optional byte-order mark and white space, with markup: then
    /// it is XML (or OpenStep data `<0fbd>`, which the repair leaves unchanged), never an OpenStep
    /// dictionary, array or string, whose quoted text the XML repair must not touch.
    private static func looksLikeXML<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF] as [UInt8]) { rest = rest.dropFirst(3) }
        return rest.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "<")
    }

    /// - Parameter maximumDepth: How deep below the root values may nest: a file's whole depth, or, for
    ///   text that becomes a value stored below a domain's root and a collection, what ``PropertyListValue/init(_:)``
    ///   accepts.
    ///   - keepShadowed: Whether to return the entries shadowed by equal keys (XML only: binary input
    ///     has been handed to the binary reader by then, except in text typed by a person).
    private static func parse(
        _ data: Data, allowOpenStep: Bool, maximumDepth: Int, keepShadowed: Bool = false
    ) throws(PropertyListCodingError) -> (value: PropertyListValue, shadowed: ShadowedEntries?) {
        if data.starts(with: binaryMagic) {
            return (try BinaryPropertyList.decode(data), nil)
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object: Any
        let isXML: Bool
        do {
            isXML = looksLikeXML(data)
            let input = isXML ? data.withUnsafeBytes(XMLInputRepair.repaired) : data
            object = try PropertyListSerialization.propertyList(from: input, options: [], format: &format)
        } catch {
            // Foundation's message quotes the offending text, which may be a stored value.
            throw PropertyListCodingError(reason: "not a property list")
        }
        guard allowOpenStep || format == .xml else {
            throw PropertyListCodingError(reason: "not a binary or XML property list")
        }
        let converted = if !isXML {
            PropertyListValue(parsed: object, maximumDepth: maximumDepth).map { (value: $0, shadowed: ShadowedEntries?.none) }
        } else if keepShadowed {
            XMLInputRepair.valueKeepingShadowed(parsedFromRepaired: object, maximumDepth: maximumDepth)
        } else {
            XMLInputRepair.value(parsedFromRepaired: object, maximumDepth: maximumDepth).map { (value: $0, shadowed: ShadowedEntries?.none) }
        }
        guard let converted else {
            throw PropertyListCodingError(reason: "property list holds a value that is not supported")
        }
        return converted
    }

    // MARK: Writing

    /// Writes a value as an XML property list, with dictionary keys in code-point order so output is stable.
    ///
    /// XML is lossier than binary, as it is for Apple's tools: a date keeps whole seconds only (years
    /// are clamped to 1...9999, the range other readers accept), a 4-byte real is written with the
    /// digits of its exact `Double` value and reads back as an 8-byte one, and a string containing control
    /// characters other than tab and newline is written with character references that Foundation
    /// reads but strict XML parsers such as Python's reject, because XML 1.0 cannot express them.
    package static func encodeXML(_ value: PropertyListValue) -> Data {
        var writer = XMLWriter()
        writer.append("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """)
        writer.write(value, indent: 0)
        writer.append("</plist>\n")
        return Data(writer.bytes)
    }

    private struct XMLWriter {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(512) }

        mutating func append(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }

        mutating func write(_ value: PropertyListValue, indent: Int) {
            bytes.append(contentsOf: repeatElement(0x09, count: indent))
            switch value {
            case .bool(let bool):
                append(bool ? "<true/>\n" : "<false/>\n")
            case .integer(let int):
                append("<integer>\(int)</integer>\n")
            case .unsignedInteger(let int):
                append("<integer>\(int)</integer>\n")
            case .real(let double):
                append("<real>\(Self.text(double))</real>\n")
            case .float(let float):
                // XML has no 4-byte real. The digits of the exact Double value (as CoreFoundation writes
                // them) read back as a number that still casts `as? Float` to the value written.
                append("<real>\(Self.text(Double(float)))</real>\n")
            case .date(let date):
                append("<date>\(Self.text(date))</date>\n")
            case .data(let data):
                append("<data>\(data.base64EncodedString())</data>\n")
            case .string(let string):
                append("<string>")
                appendEscaped(string)
                append("</string>\n")
            case .array(let values):
                guard !values.isEmpty else { return append("<array/>\n") }
                append("<array>\n")
                for element in values { write(element, indent: indent + 1) }
                bytes.append(contentsOf: repeatElement(0x09, count: indent))
                append("</array>\n")
            case .dictionary(let values):
                guard !values.isEmpty else { return append("<dict/>\n") }
                append("<dict>\n")
                for (key, element) in values.sorted(by: { EquivalentKeys.precedes($0.key, $1.key) }) {
                    bytes.append(contentsOf: repeatElement(0x09, count: indent + 1))
                    append("<key>")
                    appendEscaped(key)
                    append("</key>\n")
                    write(element, indent: indent + 1)
                }
                bytes.append(contentsOf: repeatElement(0x09, count: indent))
                append("</dict>\n")
            }
        }

        /// `&`, `<` and `>` must be escaped; a carriage return is too, because XML parsers turn a
        /// literal one into a line feed; other control characters have no literal form in XML.
        /// U+FEFF (bytes EF BB BF) is written as `&#xFEFF;`: invisible in an editor otherwise, and
        /// at the start of a text some readers take it for a byte-order mark.
        private mutating func appendEscaped(_ string: String) {
            var string = string
            string.withUTF8 { utf8 in
                var index = 0
                while index < utf8.count {
                    let byte = utf8[index]
                    switch byte {
                    case UInt8(ascii: "&"): append("&amp;")
                    case UInt8(ascii: "<"): append("&lt;")
                    case UInt8(ascii: ">"): append("&gt;")
                    case 0x09, 0x0A: bytes.append(byte)
                    case 0x00 ..< 0x20, 0x7F: append("&#\(byte);")
                    case 0xEF where index + 2 < utf8.count && utf8[index + 1] == 0xBB && utf8[index + 2] == 0xBF:
                        append("&#xFEFF;")
                        index += 2
                    default: bytes.append(byte)
                    }
                    index += 1
                }
            }
        }

        /// Swift's shortest round-tripping form, and Apple's spellings for the non-finite values.
        private static func text(_ double: Double) -> String {
            if double.isNaN { return "nan" }
            if double.isInfinite { return double < 0 ? "-infinity" : "+infinity" }
            return "\(double)"
        }

        /// ISO 8601 in UTC with whole seconds (rounded down, as Apple's writer does), computed
        /// directly so that no locale or calendar setting can change it.
        private static func text(_ date: Date) -> String {
            // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970.
            let earliest = -62_135_596_800.0, latest = 253_402_300_799.0
            let interval = date.timeIntervalSince1970
            let clamped = interval.isNaN ? 0 : min(max(interval.rounded(.down), earliest), latest)
            let seconds = Int64(clamped)
            let (days, secondOfDay) = Self.floorDivide(seconds, 86_400)
            // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
            let shifted = days + 719_468
            let era = Self.floorDivide(shifted, 146_097).quotient
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
            return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
                + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "Z"
        }

        private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
            let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
            return (quotient, value - quotient * divisor)
        }

        private static func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
    }
}
