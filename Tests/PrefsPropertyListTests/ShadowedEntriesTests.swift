import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// A dictionary written by Python (or CoreFoundation) may hold keys that Swift's `String ==` merges:
/// `"é"` (U+00E9) and `"e\u{301}"`, or `"Å"` (U+00C5), `"A\u{30A}"` and the Ångström sign U+212B. The
/// decoded value holds one of each; the others come back aside, and encoding the value with them
/// writes every entry as it was.
@Suite("Entries shadowed by an equal key spelled otherwise")
struct ShadowedEntriesTests {
    /// Equal keys at the top, inside a collection, inside an array, inside a shadowed entry's own
    /// value, and three spellings of one key.
    static let pythonValue = """
        {'\\u00e9': {'a': 1}, 'e\\u0301': {'b': 2, '\\u00e9': 'inner-pre', 'e\\u0301': 'inner-de'},
         'other': {'x': 1},
         'prefs': {'\\u00e9': 'pre', 'e\\u0301': 'de', 'n': 1,
                   'list': [{'\\u00c5': 1, 'A\\u030a': 2, '\\u212b': 3}, 'plain']}}
        """

    /// The Python file in `format`.
    static func pythonFile(_ format: String) throws -> [UInt8] {
        try python("""
            import plistlib, sys
            sys.stdout.buffer.write(plistlib.dumps(\(pythonValue), fmt=plistlib.FMT_\(format)))
            """)
    }

    /// What Python reads from `bytes`, as JSON with sorted keys and escaped code points: equal only
    /// when every key has the same code points and every value is the same.
    static func pythonView(_ bytes: [UInt8]) throws -> String {
        String(decoding: try python("""
            import plistlib, sys, json
            print(json.dumps(plistlib.loads(sys.stdin.buffer.read()), sort_keys=True))
            """, input: bytes), as: UTF8.self)
    }

    static func decode(_ bytes: [UInt8]) throws -> (value: PropertyListValue, shadowed: ShadowedEntries?) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFileKeepingShadowed(buffer) }
        }.get()
    }

    /// Encodes `value` with what of `shadowed` still applies to it, as the storage layer writes a domain.
    static func encode(_ value: PropertyListValue, _ shadowed: ShadowedEntries?) -> [UInt8] {
        BinaryPropertyList.encode(value, shadowed: shadowed?.retained(in: value))
    }

    @Test("Every entry of a Python file, shadowed ones included, is written back as it was read", arguments: ["BINARY", "XML"])
    func roundTrip(format: String) throws {
        let file = try Self.pythonFile(format)
        let (value, shadowed) = try Self.decode(file)
        #expect(shadowed != nil)
        #expect(try Self.pythonView(Self.encode(value, shadowed)) == Self.pythonView(file))
    }

    @Test("The value holds the spelling in normalization form C, with its value, as before")
    func winnerIsPrecomposed() throws {
        let (value, _) = try Self.decode(try Self.pythonFile("BINARY"))
        let top = try #require(value.dictionaryValue)
        #expect(top.count == 3)
        #expect(top.keys.contains { Array($0.unicodeScalars) == ["\u{E9}"] })
        #expect(top["é"] == .dictionary(["a": .integer(1)]))
        let list = try #require(top["prefs"]?.dictionaryValue?["list"])
        guard case .array(let elements) = list, case .dictionary(let angstrom) = elements.first else {
            Issue.record("no list")
            return
        }
        #expect(angstrom.count == 1 && angstrom.keys.first.map { Array($0.unicodeScalars) } == ["\u{C5}"])
        #expect(angstrom["Å"] == .integer(1))
    }

    @Test("Binary and XML files of one dictionary set the same entries aside")
    func formatsAgree() throws {
        let binary = try Self.decode(try Self.pythonFile("BINARY"))
        let xml = try Self.decode(try Self.pythonFile("XML"))
        #expect(binary.value.isIdentical(to: xml.value))
        #expect(binary.shadowed == xml.shadowed)
    }

    @Test("A file without equal keys has nothing aside")
    func commonCase() throws {
        let file = try python("""
            import plistlib, sys
            sys.stdout.buffer.write(plistlib.dumps({'\\u00e9': {'e\\u0301x': 1}, 'a': [{'b': 2}]}))
            """)
        #expect(try Self.decode(file).shadowed == nil)
    }

    @Test("Changing the value under the winning key keeps the shadowed entry as it was")
    func changedWinnerKeepsShadowed() throws {
        let file = try Self.pythonFile("BINARY")
        let (value, shadowed) = try Self.decode(file)
        var top = try #require(value.dictionaryValue)
        top["é"] = .string("changed")
        top["prefs"] = .dictionary(["é": .string("changed too"), "n": .integer(1)])
        let seen = try Self.pythonView(Self.encode(.dictionary(top), shadowed))
        #expect(seen.contains(#""e\u0301": {"b": 2, "e\u0301": "inner-de", "\u00e9": "inner-pre"}"#), "\(seen)")
        #expect(seen.contains(#""\u00e9": "changed""#), "\(seen)")
        #expect(seen.contains(#""prefs": {"e\u0301": "de", "n": 1, "\u00e9": "changed too"}"#), "\(seen)")
    }

    @Test("Removing the key removes every spelling of it; writing it in the shadowed spelling replaces that entry")
    func removedOrRespelledKey() throws {
        let (value, shadowed) = try Self.decode(try Self.pythonFile("BINARY"))
        var top = try #require(value.dictionaryValue)
        top["é"] = nil
        top["prefs"] = .dictionary(["e\u{301}": .string("respelled")])
        let seen = try Self.pythonView(Self.encode(.dictionary(top), shadowed))
        #expect(seen == #"{"other": {"x": 1}, "prefs": {"e\u0301": "respelled"}}"# + "\n")
    }

    @Test("What was shadowed in an array element stays with its index: kept while the element there keeps the key, left behind when it moves")
    func arrays() throws {
        let (value, shadowed) = try Self.decode(try Self.pythonFile("BINARY"))
        var top = try #require(value.dictionaryValue)
        var prefs = try #require(top["prefs"]?.dictionaryValue)
        guard case .array(let list) = prefs["list"] else { Issue.record("no list"); return }
        prefs["list"] = .array([list[0], .string("changed")])
        top["prefs"] = .dictionary(prefs)
        let kept = try Self.pythonView(Self.encode(.dictionary(top), shadowed))
        #expect(kept.contains(#""list": [{"A\u030a": 2, "\u00c5": 1, "\u212b": 3}, "changed"]"#), "\(kept)")

        prefs["list"] = .array([.string("moved"), list[0]])
        top["prefs"] = .dictionary(prefs)
        let moved = try Self.pythonView(Self.encode(.dictionary(top), shadowed))
        #expect(moved.contains(#""list": ["moved", {"\u00c5": 1}]"#), "\(moved)")
    }

    @Test("A binary dictionary repeating a shadowed key with identical code points is refused")
    func identicalShadowedKeyRejected() throws {
        // {"e\u{301}": 1, "é": 2, "e\u{301}": 3}: the third key repeats the first, which the second shadows.
        let decomposed: [UInt8] = [0x62, 0x00, 0x65, 0x03, 0x01]
        let objects: [[UInt8]] = [[0xD3, 1, 2, 3, 4, 5, 6], decomposed, [0x61, 0x00, 0xE9], decomposed,
                                  [0x10, 1], [0x10, 2], [0x10, 3]]
        var file = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(file.count))
            file += object
        }
        let table = UInt8(file.count)
        file += offsets + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
            + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, table]
        #expect(throws: PropertyListCodingError.self) { try Self.decode(file) }
    }

    @Test("In XML a key repeated with identical code points is read as its later entry, shadowed or not")
    func xmlLaterWins() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>e\u{301}</key><dict><key>é</key><integer>1</integer><key>e\u{301}</key><integer>2</integer></dict>
            <key>é</key><integer>3</integer>
            <key>e\u{301}</key><integer>4</integer>
            <key>é</key><integer>5</integer>
            </dict></plist>
            """
        let (value, shadowed) = try Self.decode(Array(xml.utf8))
        #expect(value.isIdentical(to: .dictionary(["é": .integer(5)])))
        #expect(try Self.pythonView(Self.encode(value, shadowed)) == #"{"e\u0301": 4, "\u00e9": 5}"# + "\n")
    }
}
