// Property-list values shown as the `defaults` command shows them: the old OpenStep text form.

import Foundation
import Glibc
import RVS_PersistentPrefs

/// Formats property-list values as `defaults read` prints them:
///
///     {
///         appearance = dark;
///         launchCount = 5;
///         recent = (
///             "first file",
///             second
///         );
///     }
///
/// Strings are quoted only when they need it; Booleans print as 1 and 0, as in `defaults` (ask
/// `defaults read-type` for the type); dates print in UTC; data prints as its length and bytes.
package enum PropertyListPrinter {
    /// The multi-line form of `value`, its nested lines indented by `level` steps of four spaces.
    ///
    /// `editable` writes data whole, as OpenStep `<0a0b0c>` that parses back, instead of the summary
    /// `defaults` prints: what `edit --format openstep` opens.
    package static func text(_ value: PropertyListValue, level: Int = 0, editable: Bool = false) -> String {
        let indent = String(repeating: "    ", count: level)
        let inner = indent + "    "
        switch value {
        case .dictionary(let entries):
            guard !entries.isEmpty else { return "{\n" + indent + "}" }
            let lines = entries.sorted { $0.key < $1.key }.map { key, element in
                inner + quoted(key) + " = " + text(element, level: level + 1, editable: editable) + ";"
            }
            return "{\n" + lines.joined(separator: "\n") + "\n" + indent + "}"
        case .array(let elements):
            guard !elements.isEmpty else { return "(\n" + indent + ")" }
            let lines = elements.map { inner + text($0, level: level + 1, editable: editable) }
            return "(\n" + lines.joined(separator: ",\n") + "\n" + indent + ")"
        case .data(let data) where editable:
            return "<" + hex(data) + ">"
        default:
            return scalar(value)
        }
    }

    /// The form `defaults read DOMAIN KEY` prints: a top-level string bare (neither quoted nor escaped),
    /// anything else as ``text(_:level:)``.
    package static func topLevelText(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let string): return string
        case .date(let date): return dateText(date)
        default: return text(value)
        }
    }

    /// The one-line form of `value`, for messages: `{darkMode = 1; userName = Ada;}`, `(a, b)`.
    ///
    /// With `booleanWords`, Booleans show as `true` and `false` instead of `defaults`' 1 and 0: the demos
    /// use that, so that a Boolean never looks like a number where the type matters to the lesson.
    package static func inline(_ value: PropertyListValue, booleanWords: Bool = false) -> String {
        switch value {
        case .dictionary(let entries):
            let items = entries.sorted { $0.key < $1.key }.map { quoted($0.key) + " = " + inline($0.value, booleanWords: booleanWords) + ";" }
            return "{" + items.joined(separator: " ") + "}"
        case .array(let elements):
            return "(" + elements.map { inline($0, booleanWords: booleanWords) }.joined(separator: ", ") + ")"
        case .bool(let bool) where booleanWords:
            return bool ? "true" : "false"
        default:
            return scalar(value)
        }
    }

    /// ``inline(_:booleanWords:)`` as the demos show values: Booleans as `true` and `false`.
    package static func readable(_ value: PropertyListValue) -> String {
        inline(value, booleanWords: true)
    }

    /// The type's name as `defaults read-type` says it.
    package static func typeName(_ value: PropertyListValue) -> String {
        switch value {
        case .string: return "string"
        case .bool: return "boolean"
        case .integer, .unsignedInteger: return "integer"
        case .real, .float: return "float"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        }
    }

    /// The type's name with its article, for sentences: "an integer", "a string".
    package static func typeName(_ value: PropertyListValue, article: Bool) -> String {
        let name = typeName(value)
        guard article else { return name }
        return ("aeiou".contains(name.first ?? "x") ? "an " : "a ") + name
    }

    private static func scalar(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let string): return quoted(string)
        case .bool(let bool): return bool ? "1" : "0"
        case .integer(let integer): return String(integer)
        case .unsignedInteger(let integer): return String(integer)
        case .real(let real): return String(real)
        case .float(let float): return String(float)
        case .date(let date): return quoted(dateText(date))
        case .data(let data): return dataText(data)
        case .array, .dictionary: return inline(value)
        }
    }

    /// Characters that need no quotes in OpenStep text (the set Apple's writer leaves bare).
    private static func isBare(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// `string` bare when every character allows it, else in double quotes with `"`, `\` and control
    /// characters escaped. Other characters (accents, emoji) stay as they are, for readability.
    package static func quoted(_ string: String) -> String {
        if !string.isEmpty && string.utf8.allSatisfy(isBare) { return string }
        return doubleQuoted(string, unicodeEscape: "\\U")
    }

    /// `string` in double quotes with `"`, `\`, newline, tab and return escaped, and other control
    /// characters as `unicodeEscape` and four hex digits (`\U` in OpenStep text, `\u` in JSON).
    package static func doubleQuoted(_ string: String, unicodeEscape: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                result += unicodeEscape + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `2024-05-01 12:30:00 +0000`, as `defaults` prints a date, computed in UTC whatever the locale.
    package static func dateText(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return String(date.timeIntervalSince1970) }
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + " "
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + " +0000"
    }

    /// `{length = 3, bytes = 0x0a0b0c}` as `defaults` prints data; long data shows its first and last bytes.
    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    private static func dataText(_ data: Data) -> String {
        let bytes = data.count <= 32 ? hex(data) : hex(data.prefix(24)) + " ... " + hex(data.suffix(8))
        return "{length = \(data.count), bytes = 0x\(bytes)}"
    }
}
