// Values given on the command line, as `defaults write` takes them: typed (`-int 5`), property-list
// text (`{a = b;}`), or plain text, which is a string.

import Foundation
import RVS_PersistentPrefs

/// What a `write` does to the stored value of one key.
package enum Change {
    case set(PropertyListValue)
    case appendToArray([PropertyListValue])
    case addToDictionary([String: PropertyListValue])

    /// What the value becomes, `existing` being what it is now (`nil` when there is none); `name`
    /// names it in messages.
    package func applied(to existing: PropertyListValue?, _ name: () -> String) throws(HarnessError) -> PropertyListValue {
        switch (self, existing) {
        case (.set(let value), _): return value
        case (.appendToArray(let elements), nil): return .array(elements)
        case (.appendToArray(let elements), .array(let stored)?): return .array(stored + elements)
        case (.addToDictionary(let entries), nil): return .dictionary(entries)
        case (.addToDictionary(let entries), .dictionary(let stored)?): return .dictionary(stored.merging(entries) { _, new in new })
        case (.appendToArray, let other?):
            throw .failure("cannot add to \(name()): it holds \(PropertyListPrinter.typeName(other, article: true)), not an array")
        case (.addToDictionary, let other?):
            throw .failure("cannot add to \(name()): it holds \(PropertyListPrinter.typeName(other, article: true)), not a dictionary")
        }
    }
}

/// Values given on the command line, as `defaults write` takes them.
package enum ValueParser {
    /// The typed forms of a scalar: `-string`, `-int`, `-float`, `-bool`, `-date`, `-data` (and the
    /// long spellings `defaults` also accepts).
    package static let scalarTypes: Set<String> = ["-string", "-int", "-integer", "-float", "-bool", "-boolean", "-date", "-data"]

    /// The flags that make a collection: `-array`, `-array-add`, `-dict`, `-dict-add`.
    package static let collectionFlags: Set<String> = ["-array", "-array-add", "-dict", "-dict-add"]

    /// Whether `word` is where a value's type is given: `-int`, `-array`, or a mistyped `-word` (which
    /// ``change(from:)`` refuses), but not a negative number such as `-5`.
    package static func looksLikeTypeFlag(_ word: String) -> Bool {
        word.hasPrefix("-") && word.dropFirst().first?.isLetter == true
    }

    /// The change that the arguments after `write DOMAIN KEY` describe.
    package static func change(from arguments: Arguments) throws(HarnessError) -> Change {
        var rest = arguments
        let flag = try rest.next(orComplain: "a value is needed")
        switch flag {
        case "-array":
            return .set(.array(try items(rest)))
        case "-array-add":
            return .appendToArray(try items(rest))
        case "-dict":
            return .set(.dictionary(try entries(rest)))
        case "-dict-add":
            return .addToDictionary(try entries(rest))
        case _ where scalarTypes.contains(flag):
            guard rest.count == 1, let value = rest.next() else { throw .usage("\(flag) takes exactly one value") }
            return .set(try scalar(flag, value))
        case _ where looksLikeTypeFlag(flag):
            // A lone `-word` is a mistyped type far more often than a value; text starting with `-` can
            // still be stored with -string.
            throw .usage("unknown type '\(flag)'; the types are -string -int -float -bool -date -data -array -array-add -dict -dict-add (use -string to store text starting with -)")
        default:
            guard rest.isEmpty else {
                throw .usage("too many values; quote a value with spaces, or give a type such as -array")
            }
            return .set(try untyped(flag))
        }
    }

    /// A value without a type flag: property-list text, else the text itself as a string (what the
    /// library's argument domain does, see `DefaultsSuite.parseArgumentValue`). Text that clearly means
    /// to be a property list (it starts with `{`, `(`, `<` or `"`) must parse, so that a typo is
    /// reported instead of being stored verbatim.
    package static func untyped(_ text: String) throws(HarnessError) -> PropertyListValue {
        let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        if let first = trimmed.first, "{(<\"".contains(first) {
            do {
                return try propertyListText(text)
            } catch {
                throw .failure("the value \(PropertyListPrinter.quoted(text)) is not valid property-list text (\(error)); to store it as a string, use -string")
            }
        }
        return Console.withErrorsSilenced { DefaultsSuite.parseArgumentValue(text) }
    }

    /// Property-list text typed by a person, parsed strictly (malformed text is an error, never a string).
    package static func propertyListText(_ text: String) throws(PropertyListCodingError) -> PropertyListValue {
        try Console.withErrorsSilenced {
            Result { () throws(PropertyListCodingError) in try PropertyListValue(propertyListText: text) }
        }.get()
    }

    /// A typed scalar: `-int 5`, `-bool YES`, `-date '2024-05-01 12:30:00 +0000'`, `-data 0a0b0c`.
    package static func scalar(_ type: String, _ text: String) throws(HarnessError) -> PropertyListValue {
        switch type {
        case "-string":
            return .string(text)
        case "-int", "-integer":
            guard let integer = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw .failure("\(type) needs a whole number between \(Int.min) and \(Int.max), not \(PropertyListPrinter.quoted(text))")
            }
            return .integer(integer)
        case "-float":
            guard let real = Double(text.trimmingCharacters(in: .whitespaces)), real.isFinite else {
                throw .failure("-float needs a finite number such as 0.5, not \(PropertyListPrinter.quoted(text))")
            }
            return .real(real)
        case "-bool", "-boolean":
            switch text.lowercased() {
            case "yes", "true", "1": return .bool(true)
            case "no", "false", "0": return .bool(false)
            default: throw .failure("\(type) needs YES, NO, TRUE, FALSE, 1 or 0, not \(PropertyListPrinter.quoted(text))")
            }
        case "-date":
            guard let date = date(text) else {
                throw .failure("-date needs a date such as '2024-05-01 12:30:00 +0000' or 2024-05-01T12:30:00Z, not \(PropertyListPrinter.quoted(text))")
            }
            return .date(date)
        case "-data":
            guard let data = hexData(text) else {
                throw .failure("-data needs an even number of hex digits such as 0a0b0c, not \(PropertyListPrinter.quoted(text))")
            }
            return .data(data)
        default:
            throw .usage("unknown type '\(type)'")
        }
    }

    /// The items of `-array`: each one untyped, or a scalar type flag and its value.
    package static func items(_ arguments: Arguments) throws(HarnessError) -> [PropertyListValue] {
        var arguments = arguments
        var values: [PropertyListValue] = []
        while let word = arguments.next() {
            values.append(try item(word, &arguments))
        }
        return values
    }

    /// The entries of `-dict`: a key, then an item as in ``items(_:)``, repeated.
    package static func entries(_ arguments: Arguments) throws(HarnessError) -> [String: PropertyListValue] {
        var arguments = arguments
        var result: [String: PropertyListValue] = [:]
        while let key = arguments.next() {
            let word = try arguments.next(orComplain: "-dict needs a value after the key \(PropertyListPrinter.quoted(key))")
            result[key] = try item(word, &arguments)
        }
        return result
    }

    /// One item that starts with `word`: a scalar type flag takes the value after it from `arguments`.
    /// A collection flag among the items (`-dict a -int 1 hosts -array x y`) is refused: where the inner
    /// collection would end cannot be told from the words, and storing the flag itself as a string (what
    /// `defaults` does) hides the mistake. Property-list text nests: `hosts '(x, y)'`.
    private static func item(_ word: String, _ arguments: inout Arguments) throws(HarnessError) -> PropertyListValue {
        if collectionFlags.contains(word) {
            throw .usage("\(word) cannot be nested inside another -array or -dict; give the inner collection as property-list text, such as '(x, y)' or '{a = 1;}', or write it on its own with an ENTRY path")
        }
        if looksLikeTypeFlag(word) && !scalarTypes.contains(word) {
            throw .usage("unknown type '\(word)' among the items; the types of an item are -string -int -float -bool -date -data (use -string to store text starting with -)")
        }
        guard scalarTypes.contains(word) else { return try untyped(word) }
        return try scalar(word, arguments.next(orComplain: "\(word) needs a value after it"))
    }

    /// Dates as `defaults` prints them, ISO 8601, or a plain day; without a zone, UTC. In the proleptic Gregorian
    /// calendar, as they are printed and as property lists mean them: a formatter's own calendar switches to the
    /// Julian one before 15 October 1582, which moved `1000-01-01` five days.
    package static func date(_ text: String) -> Date? {
        let formats = [
            "yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX",
            "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd",
        ]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.gregorianStartDate = Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude)
        for format in formats {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Hex digits (white space ignored, `0x` or `<...>` around them allowed) as bytes.
    package static func hexData(_ text: String) -> Data? {
        var digits = text.filter { !$0.isWhitespace }
        if digits.hasPrefix("<") && digits.hasSuffix(">") { digits = String(digits.dropFirst().dropLast()) }
        if digits.lowercased().hasPrefix("0x") { digits = String(digits.dropFirst(2)) }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }
}
