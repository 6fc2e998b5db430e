import Foundation

/// Rewrites an XML property list before Foundation's parser reads it, and converts the parser's
/// result back, so that XML reads as other XML readers (Python's `plistlib`, any conforming parser)
/// read it and as this library reads the same dictionary in a binary file.
///
/// Foundation's parser on Linux departs from that in three ways that lose or refuse data:
/// - it refuses a comment inside an element that holds text (`<key><!-- c --></key>`,
///   `<string>a<!-- c -->b</string>`), which XML allows and other readers read as the text around
///   it (`""`, `"ab"`). Comments carry no data, so they are removed.
/// - it drops one U+FEFF from the start of every `<string>` and `<key>`, however it is written
///   (literally or as `&#xFEFF;`), so a key `"\u{FEFF}a"` would come back as `"a"`. A character
///   reference `&#xFEFF;` is put at the start of each string, for the parser to drop instead.
/// - it merges two keys that Swift's `String ==` treats as equal (`"é"`, `"e\u{301}"`) by an order
///   of its own. Each key is prefixed with its position in the file (`"12:"`), so that every entry
///   reaches ``value(parsedFromRepaired:)``, which takes the prefix off and applies the rule of
///   ``EquivalentKeys`` (a key repeated identically: the later entry wins, as XML readers do).
///
/// Processing instructions, CDATA sections and the document type declaration are copied as they
/// are; so is anything malformed, which the parser then refuses as before.
package enum XMLInputRepair {
    /// The repaired document.
    package static func repaired(_ input: UnsafeRawBufferPointer) -> Data {
        var keys = 0
        var output = [UInt8]()
        output.reserveCapacity(input.count + input.count / 8)
        let count = input.count
        var index = 0
        while index < count {
            guard let open = find(input, UInt8(ascii: "<"), from: index) else {
                output.append(contentsOf: input[index...])
                break
            }
            output.append(contentsOf: input[index ..< open])
            if hasPrefix(input, at: open, "<!--") {
                guard let end = find(input, "-->", from: open + 4) else {
                    output.append(contentsOf: input[open...])  // unterminated: the parser refuses it
                    break
                }
                index = end + 3
            } else if hasPrefix(input, at: open, "<![CDATA[") {
                index = copyThrough(input, "]]>", from: open, into: &output)
            } else if hasPrefix(input, at: open, "<?") {
                index = copyThrough(input, "?>", from: open, into: &output)
            } else if hasPrefix(input, at: open, "<!") {
                index = copyDeclaration(input, from: open, into: &output)
            } else {
                index = copyTag(input, from: open, into: &output, keys: &keys)
            }
        }
        return Data(output)
    }

    /// The reference the parser drops in place of a U+FEFF that belongs to the text.
    private static let byteOrderMarkReference = Array("&#xFEFF;".utf8)

    /// Copies a start or end tag (`<`, a name, attributes, `>`), with a `&#xFEFF;` after the start
    /// tag of a `string` element, and the position prefix after that of a `key` element.
    private static func copyTag(
        _ input: UnsafeRawBufferPointer, from open: Int, into output: inout [UInt8], keys: inout Int
    ) -> Int {
        var index = open + 1
        var quote: UInt8?
        while index < input.count {
            let byte = input[index]
            if let current = quote {
                if byte == current { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                break
            }
            index += 1
        }
        guard index < input.count else {
            output.append(contentsOf: input[open...])
            return input.count
        }
        var nameEnd = open + 1
        while nameEnd < index, !isNameEnd(input[nameEnd]) { nameEnd += 1 }
        let name = input[(open + 1) ..< nameEnd]
        let isEmptyElement = input[index - 1] == UInt8(ascii: "/")
        if name.elementsEqual("key".utf8) {
            output.append(contentsOf: "<key>\(keys):".utf8)
            if isEmptyElement { output.append(contentsOf: "</key>".utf8) }
            keys += 1
            return index + 1
        }
        output.append(contentsOf: input[open ... index])
        if !isEmptyElement, name.elementsEqual("string".utf8) {
            output.append(contentsOf: byteOrderMarkReference)
        }
        return index + 1
    }

    private static func isNameEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"): return true
        default: return false
        }
    }

    /// Copies `<!DOCTYPE …>` or another declaration: up to the `>` that is outside quotes and outside
    /// an internal subset `[…]`, whose comments and quoted text may hold `>` and `]`.
    private static func copyDeclaration(_ input: UnsafeRawBufferPointer, from open: Int, into output: inout [UInt8]) -> Int {
        var index = open + 2
        var quote: UInt8?
        var inSubset = false
        while index < input.count {
            let byte = input[index]
            if let current = quote {
                if byte == current { quote = nil }
            } else if inSubset, hasPrefix(input, at: index, "<!--") {
                guard let end = find(input, "-->", from: index + 4) else { break }
                index = end + 3
                continue
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">"), !inSubset {
                output.append(contentsOf: input[open ... index])
                return index + 1
            }
            index += 1
        }
        output.append(contentsOf: input[open...])
        return input.count
    }

    /// Copies from `start` through the next `terminator` (or to the end when there is none).
    private static func copyThrough(
        _ input: UnsafeRawBufferPointer, _ terminator: StaticString, from start: Int, into output: inout [UInt8]
    ) -> Int {
        guard let end = find(input, terminator, from: start + 2) else {
            output.append(contentsOf: input[start...])
            return input.count
        }
        let stop = end + terminator.utf8CodeUnitCount
        output.append(contentsOf: input[start ..< stop])
        return stop
    }

    private static func find(_ input: UnsafeRawBufferPointer, _ byte: UInt8, from start: Int) -> Int? {
        guard start < input.count else { return nil }
        return input[start...].firstIndex(of: byte)
    }

    private static func find(_ input: UnsafeRawBufferPointer, _ text: StaticString, from start: Int) -> Int? {
        guard let first = text.withUTF8Buffer({ $0.first }) else { return nil }
        var index = start
        while let candidate = find(input, first, from: index) {
            if hasPrefix(input, at: candidate, text) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    private static func hasPrefix(_ input: UnsafeRawBufferPointer, at index: Int, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { prefix in
            prefix.count <= input.count - index && input[index ..< index + prefix.count].elementsEqual(prefix)
        }
    }

    /// Converts what Foundation's parser made of a ``repaired(_:)`` document: takes the position
    /// prefix off every key and builds each dictionary in file order under the rule of
    /// ``EquivalentKeys``. Returns `nil` for anything that is not a property-list value or nests deeper
    /// than `maximumDepth` below the root (as ``PropertyListValue/init(parsed:maximumDepth:)`` does),
    /// and for a key without a prefix, which only markup the repair did not see could produce.
    package static func value(parsedFromRepaired object: Any, maximumDepth: Int) -> PropertyListValue? {
        var converter = Converter(limit: maximumDepth, tracking: false)
        return converter.convert(object, depth: 0)
    }

    /// Converts as ``value(parsedFromRepaired:maximumDepth:)`` does, and returns aside the entries that
    /// lost to an equal key spelled otherwise (`nil` when there are none), converting a second time to
    /// note where they are only when there are some.
    package static func valueKeepingShadowed(
        parsedFromRepaired object: Any, maximumDepth: Int
    ) -> (value: PropertyListValue, shadowed: ShadowedEntries?)? {
        var converter = Converter(limit: maximumDepth, tracking: false)
        guard let value = converter.convert(object, depth: 0) else { return nil }
        guard converter.sawShadowed else { return (value, nil) }
        var tracker = Converter(limit: maximumDepth, tracking: true)
        guard let tracked = tracker.convert(object, depth: 0) else { return nil }
        return (tracked, tracker.shadowed.isEmpty ? nil : tracker.shadowed)
    }

    private struct Converter {
        let limit: Int
        /// Whether the converter notes where each shadowed entry is.
        let tracking: Bool
        var sawShadowed = false
        var path: [ShadowedEntries.Step] = []
        var shadowed = ShadowedEntries()

        init(limit: Int, tracking: Bool) {
            self.limit = limit
            self.tracking = tracking
        }

        mutating func convert(_ object: Any, depth: Int) -> PropertyListValue? {
            guard depth <= limit else { return nil }
            if let dictionary = object as? [AnyHashable: Any] {
                var entries: [(position: Int, key: String, value: Any)] = []
                entries.reserveCapacity(dictionary.count)
                for (taggedKey, element) in dictionary {
                    guard let tagged = taggedKey.base as? String, let (position, key) = XMLInputRepair.untagged(tagged) else { return nil }
                    entries.append((position, key, element))
                }
                entries.sort { $0.position < $1.position }
                if tracking { entries = Self.lastOfEachSpelling(entries) }
                var values: [String: PropertyListValue] = [:]
                values.reserveCapacity(entries.count)
                var losers: [ShadowedEntries.Entry] = []
                for entry in entries {
                    if tracking { path.append(.key(ExactKey(entry.key))) }
                    guard let value = convert(entry.value, depth: depth + 1) else { return nil }
                    if tracking { path.removeLast() }
                    _ = EquivalentKeys.insert(value, forKey: entry.key, into: &values, shadowed: &losers, identical: .laterWins)
                }
                if !losers.isEmpty {
                    sawShadowed = true
                    if tracking { shadowed.add(losers, at: path[...]) }
                }
                return .dictionary(values)
            }
            if let array = object as? [Any] {
                var values: [PropertyListValue] = []
                values.reserveCapacity(array.count)
                for (index, element) in array.enumerated() {
                    if tracking { path.append(.index(index)) }
                    guard let value = convert(element, depth: depth + 1) else { return nil }
                    if tracking { path.removeLast() }
                    values.append(value)
                }
                return .array(values)
            }
            // A scalar: never a container, so the depth given to the general conversion does not matter.
            return PropertyListValue(object)
        }

        /// The entries without those a later entry of identical spelling replaces, which the insertion
        /// would drop anyway (the later entry wins): dropped before they are converted, they leave
        /// nothing shadowed inside them behind.
        private static func lastOfEachSpelling(
            _ entries: [(position: Int, key: String, value: Any)]
        ) -> [(position: Int, key: String, value: Any)] {
            var seen = Set<ExactKey>()
            var kept = entries.reversed().filter { seen.insert(ExactKey($0.key)).inserted }
            kept.reverse()
            return kept
        }
    }

    /// `"12:name"` → `(12, "name")`.
    private static func untagged(_ tagged: String) -> (Int, String)? {
        let utf8 = tagged.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), let position = Int(Substring(tagged.utf8[..<colon])) else {
            return nil
        }
        return (position, String(Substring(tagged.utf8[utf8.index(after: colon)...])))
    }
}
