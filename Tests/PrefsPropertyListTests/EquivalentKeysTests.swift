import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// Python (like CoreFoundation) compares keys by code point, so it writes dictionaries holding both a
/// precomposed "é" and "e\u{301}", which Swift's `String ==` treats as one key. Such a file stays
/// readable: the entry whose key is in normalization form C (the precomposed "é") survives, whatever the
/// order or format the writer used.
@Suite("Keys equal under String == but spelled differently")
struct EquivalentKeysTests {
    /// Python writes keys sorted by code point: "e\u{301}" (U+0065 U+0301), "other", then "é" (U+00E9).
    private static let script = """
        import plistlib, sys
        value = {'\\u00e9': 1, 'e\\u0301': 2, 'other': 3, 'nested': {'\\u00e9': 'precomposed', 'e\\u0301': 'decomposed'}}
        sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_%@))
        """

    private func pythonFile(_ format: String) throws -> [UInt8] {
        try python(Self.script.replacingOccurrences(of: "%@", with: format))
    }

    @Test("A domain file written by Python with both spellings reads, keeping the precomposed key and its value",
          arguments: ["BINARY", "XML"])
    func readable(format: String) throws {
        let value = try PropertyListValue(propertyListData: Data(try pythonFile(format)))
        let top = try #require(value.dictionaryValue)
        #expect(top.count == 3)
        #expect(top["é"] == .integer(1), "the precomposed entry gives the value")
        #expect(top["e\u{301}"] == .integer(1))
        let spelling = try #require(top.keys.first { $0 == "é" })
        #expect(Array(spelling.unicodeScalars) == ["\u{E9}"], "the precomposed entry gives the spelling")
        #expect(top["other"] == .integer(3))
        #expect(top["nested"]?.dictionaryValue == ["é": .string("precomposed")])
    }

    @Test("Binary and XML, with the keys in either order, read as the same value, spelling included")
    func formatsAndOrdersAgree() throws {
        var encodings: Set<[UInt8]> = []
        for format in ["BINARY", "XML"] {
            for order in ["'\\u00e9', 'e\\u0301'", "'e\\u0301', '\\u00e9'"] {
                let file = try python("""
                    import plistlib, sys
                    value = {key: key.encode('unicode_escape').decode() for key in [\(order)]}
                    sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_\(format), sort_keys=False))
                    """)
                let value = try PropertyListValue(propertyListData: Data(file))
                #expect(value == .dictionary(["é": .string("\\xe9")]), "\(format), keys \(order)")
                encodings.insert(BinaryPropertyList.encode(value))
            }
        }
        #expect(encodings.count == 1)
    }

    @Test("Encoding the decoded value alone keeps one entry per key (the value cannot hold both; a domain write keeps the other)")
    func laterWriteDropsTheOther() throws {
        let value = try PropertyListValue(propertyListData: Data(try pythonFile("BINARY")))
        let rewritten = BinaryPropertyList.encode(value)
        let seen = try python("""
            import plistlib, sys
            value = plistlib.loads(sys.stdin.buffer.read())
            print(sorted((k.encode('unicode_escape').decode(), v) for k, v in value.items() if k != 'nested'))
            """, input: rewritten)
        #expect(String(decoding: seen, as: UTF8.self) == "[('\\\\xe9', 1), ('other', 3)]\n")
    }

    @Test("Keys that String < leaves unordered (\"e\\u{301}\", \"\\u{E9}z\") are written in code-point order, whatever the dictionary's layout")
    func codePointOrder() throws {
        // Neither key is `<` the other, so a sort by `<` kept whichever order the dictionary iterated in
        // (found by the fuzzer: the same value encoded to different bytes).
        var binaries: Set<[UInt8]> = [], xmls: Set<Data> = []
        for capacity in 0 ..< 24 {
            var values = [String: PropertyListValue](minimumCapacity: capacity)
            values["\u{E9}z"] = .integer(1)
            values["e\u{301}"] = .integer(2)
            binaries.insert(BinaryPropertyList.encode(.dictionary(values)))
            xmls.insert(PropertyListText.encodeXML(.dictionary(values)))
        }
        #expect(binaries.count == 1 && xmls.count == 1)
        let order = try python("""
            import plistlib, sys
            print([k.encode('unicode_escape').decode() for k in plistlib.loads(sys.stdin.buffer.read())])
            """, input: try #require(binaries.first))
        #expect(String(decoding: order, as: UTF8.self) == "['e\\\\u0301', '\\\\xe9z']\n")
    }

    @Test("The writer's key order is code-point order: prefixes first, bytes above 0x7F after ASCII, empty first, for short (inline) and long (heap) keys alike")
    func keyOrderIsCodePointOrder() {
        let long = String(repeating: "x", count: 40)
        var keys = ["", "a", "ab", "abc", "b", "Z", "\u{7F}", "\u{80}", "\u{E9}", "\u{E9}z", "e\u{301}", "e", "\u{FFFF}",
                    "\u{10000}", "\u{1F600}", "\u{1F600}\u{1F600}", "日本", "日", "a\u{0}b", "a\u{0}c", "a\u{0}"]
        // Longer than a string stored inline (15 UTF-8 bytes), and differing only after a long shared start.
        keys += [long, long + "x", long + "\u{7F}", long + "\u{80}", long + "\u{0}", String(repeating: "é", count: 30)]
        // A string made from a substring of a longer one.
        keys.append(String((long + "\u{80}tail").dropLast(4)))
        var disagreements: [String] = []
        for left in keys {
            for right in keys {
                let expected = left.unicodeScalars.lexicographicallyPrecedes(right.unicodeScalars) { $0.value < $1.value }
                if EquivalentKeys.precedes(left, right) != expected {
                    disagreements.append("\(left.unicodeScalars.map { $0.value }) vs \(right.unicodeScalars.map { $0.value })")
                }
            }
        }
        #expect(disagreements.isEmpty, "precedes disagrees with code-point order: \(disagreements)")
    }

    @Test("A key repeated with identical code points still makes the file unreadable")
    func identicalKeysRejected() throws {
        var file = Array("bplist00".utf8)
        let objects: [[UInt8]] = [[0xD2, 1, 1, 2, 3], [0x51, 0x61], [0x10, 1], [0x10, 2]]
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(file.count))
            file += object
        }
        let table = UInt8(file.count)
        file += offsets + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
            + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, table]
        #expect(throws: PropertyListCodingError.self) { try PropertyListValue(propertyListData: Data(file)) }
    }
}
