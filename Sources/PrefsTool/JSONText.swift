// Property-list values as JSON, for scripts: `read --json`, `export --format json`, and `import` of JSON.
//
// JSON has no dates and no bytes, so the mapping is lossy one way: a date is written as an ISO 8601 string
// (2024-05-01T12:30:00Z) and data as a base64 string, and both read back as strings, since an imported
// string cannot be told from one that looks like a date. Integers and reals keep their kinds (a real is
// always written with a `.` or an exponent), Booleans are `true` and `false`, and `null`, which a
// property list cannot hold, is refused.

import Foundation
import RVS_PersistentPrefs

package enum JSONText {
    // MARK: Writing

    /// `value` as indented JSON, keys sorted, so that the output is stable and diffs well; or, `compact`, on one
    /// line (for JSON lines, one value a line, as `watch --json` prints them).
    package static func encode(_ value: PropertyListValue, compact: Bool = false) -> String {
        var output = ""
        write(value, indent: compact ? nil : "", to: &output)
        return output
    }

    /// `indent` is `nil` for compact output.
    private static func write(_ value: PropertyListValue, indent: String?, to output: inout String) {
        let inner = indent.map { $0 + "  " }
        let (newline, separator) = indent == nil ? ("", ",") : ("\n", ",\n")
        switch value {
        case .dictionary(let entries):
            guard !entries.isEmpty else { output += "{}"; return }
            output += "{" + newline
            for (number, (key, element)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
                output += (inner ?? "") + quoted(key) + (indent == nil ? ":" : ": ")
                write(element, indent: inner, to: &output)
                output += number == entries.count - 1 ? newline : separator
            }
            output += (indent ?? "") + "}"
        case .array(let elements):
            guard !elements.isEmpty else { output += "[]"; return }
            output += "[" + newline
            for (number, element) in elements.enumerated() {
                output += inner ?? ""
                write(element, indent: inner, to: &output)
                output += number == elements.count - 1 ? newline : separator
            }
            output += (indent ?? "") + "]"
        case .string(let string): output += quoted(string)
        case .bool(let bool): output += bool ? "true" : "false"
        case .integer(let integer): output += String(integer)
        case .unsignedInteger(let integer): output += String(integer)
        case .real(let real): output += number(real)
        case .float(let float): output += number(Double(float))
        case .date(let date): output += quoted(isoDate(date))
        case .data(let data): output += quoted(data.base64EncodedString())
        }
    }

    /// A real as JSON: always with a `.` or an exponent, so that it reads back as a real. JSON has no NaN and
    /// no infinity, which a stored real may be (a typed `Float` or `Double` entry stores them): those are written
    /// as the strings `nan`, `inf` and `-inf`, and import as strings (the help says so).
    private static func number(_ real: Double) -> String {
        guard real.isFinite else { return quoted(String(real)) }
        let text = String(real)
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// `2024-05-01T12:30:00Z`, in UTC.
    package static func isoDate(_ date: Date) -> String {
        let text = PropertyListPrinter.dateText(date)  // 2024-05-01 12:30:00 +0000
        return String(text.prefix(10)) + "T" + String(text.dropFirst(11).prefix(8)) + "Z"
    }

    private static func quoted(_ string: String) -> String {
        PropertyListPrinter.doubleQuoted(string, unicodeEscape: "\\u")
    }

    // MARK: Reading

    /// Why JSON text did not parse, and on which line.
    package struct ParseError: Error, CustomStringConvertible {
        let reason: String
        let line: Int
        package var description: String { "line \(line): \(reason)" }
    }

    /// JSON text as a property-list value.
    /// - Throws: ``ParseError`` naming the line, for malformed JSON, `null`, an integer outside the
    ///   64-bit range, or nesting deeper than the library stores.
    package static func decode(_ bytes: Data) throws(ParseError) -> PropertyListValue {
        var parser = Parser(bytes: Array(bytes))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == parser.bytes.count else { throw parser.error("text after the end of the JSON value") }
        return value
    }

    /// Whether `bytes` look like JSON rather than OpenStep text: both may start with `{`, but a JSON
    /// object's first key is a quoted string followed by `:`, and JSON may also start with `[`.
    package static func looksLikeJSON(_ bytes: Data) -> Bool {
        var parser = Parser(bytes: Array(bytes))
        parser.skipSpace()
        guard let first = parser.peek() else { return false }
        if first == UInt8(ascii: "[") { return true }
        guard first == UInt8(ascii: "{") else { return false }
        parser.position += 1
        parser.skipSpace()
        if parser.peek() == UInt8(ascii: "}") { return true }
        guard parser.peek() == UInt8(ascii: "\""), (try? parser.string()) != nil else { return false }
        parser.skipSpace()
        return parser.peek() == UInt8(ascii: ":")
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0
        /// The library's own bound on nesting (what a domain file may hold).
        static let maximumDepth = 512

        func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

        func error(_ reason: String) -> ParseError {
            ParseError(reason: reason, line: 1 + bytes[..<min(position, bytes.count)].count(where: { $0 == UInt8(ascii: "\n") }))
        }

        mutating func skipSpace() {
            while let byte = peek(), [0x20, 0x09, 0x0A, 0x0D].contains(byte) { position += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(ParseError) {
            skipSpace()
            guard peek() == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
            position += 1
        }

        mutating func value(depth: Int) throws(ParseError) -> PropertyListValue {
            guard depth < Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
            skipSpace()
            guard let byte = peek() else { throw error("the JSON ends where a value was expected") }
            switch byte {
            case UInt8(ascii: "{"):
                position += 1
                var entries: [String: PropertyListValue] = [:]
                skipSpace()
                if peek() == UInt8(ascii: "}") { position += 1; return .dictionary(entries) }
                while true {
                    skipSpace()
                    guard peek() == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    entries[key] = try value(depth: depth + 1)
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { position += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    return .dictionary(entries)
                }
            case UInt8(ascii: "["):
                position += 1
                var elements: [PropertyListValue] = []
                skipSpace()
                if peek() == UInt8(ascii: "]") { position += 1; return .array(elements) }
                while true {
                    elements.append(try value(depth: depth + 1))
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { position += 1; continue }
                    try expect(UInt8(ascii: "]"))
                    return .array(elements)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for (word, result) in [("true", PropertyListValue.bool(true)), ("false", .bool(false)), ("null", nil)]
                where bytes[position...].starts(with: word.utf8) {
                    guard let result else { throw error("null has no property-list form; leave the entry out") }
                    position += word.utf8.count
                    return result
                }
                throw error("unexpected text")
            default:
                return try number()
            }
        }

        mutating func number() throws(ParseError) -> PropertyListValue {
            let start = position
            let allowed = Set("+-0123456789.eE".utf8)
            while let byte = peek(), allowed.contains(byte) { position += 1 }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            guard !text.isEmpty else { throw error("unexpected character") }
            if !text.contains(where: { ".eE".contains($0) }) {
                if let integer = Int(text) { return .integer(integer) }
                // Above Int64.max, as the encoder writes an unsigned integer: read back as one, whole.
                if let unsigned = UInt64(text) { return .unsignedInteger(unsigned) }
                throw error("\(text.count > 24 ? "a number" : text) is not a 64-bit integer")
            }
            guard let real = Double(text), real.isFinite else { throw error("malformed or infinite number") }
            return .real(real)
        }

        mutating func string() throws(ParseError) -> String {
            position += 1  // the opening quote
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll()
            }
            while true {
                guard let byte = peek() else { throw error("unterminated string") }
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    guard let escape = peek() else { throw error("unterminated string") }
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code), bytes[position...].starts(with: "\\u".utf8) {
                            position += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("unpaired surrogate in \\u escape") }
                        scalars.append(scalar)
                    default:
                        throw error("unknown escape in a string")
                    }
                case 0..<0x20:
                    throw error("control character in a string (write it as \\n, \\t or \\u00XX)")
                default:
                    run.append(byte)
                }
            }
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard position + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else {
                throw error("\\u needs four hex digits")
            }
            position += 4
            return code
        }
    }
}
