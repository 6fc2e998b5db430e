import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

// MARK: - Helpers

/// Assembles a binary property list from raw object bytes, so tests can state exactly the hostile or
/// unusual structure they feed the decoder.
private func makeBinaryPropertyList(
    _ objects: [[UInt8]], top: UInt64 = 0, refSize: UInt8 = 1, offsetSize: UInt8 = 1
) -> [UInt8] {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(bytes.count)
        bytes += object
    }
    let tableOffset = bytes.count
    for offset in offsets { bytes += bigEndianBytes(UInt64(offset), size: Int(offsetSize)) }
    bytes += [0, 0, 0, 0, 0, 0, offsetSize, refSize]
    bytes += bigEndianBytes(UInt64(objects.count), size: 8)
    bytes += bigEndianBytes(top, size: 8)
    bytes += bigEndianBytes(UInt64(tableOffset), size: 8)
    return bytes
}

private func bigEndianBytes(_ value: UInt64, size: Int) -> [UInt8] {
    (0 ..< size).map { UInt8(truncatingIfNeeded: value >> UInt64((size - 1 - $0) * 8)) }
}

private func decodeBinary(_ bytes: [UInt8]) throws(PropertyListCodingError) -> PropertyListValue {
    try BinaryPropertyList.decode(bytes)
}

private func decodeDomainFile(_ bytes: [UInt8]) throws(PropertyListCodingError) -> PropertyListValue {
    try bytes.withUnsafeBytes { buffer in
        Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFile(buffer) }
    }.get()
}

/// Runs a Python snippet with `input` on its standard input and returns its standard output; the
/// reference implementation for the cross-checks is Python's `plistlib`.
private func runPython(_ script: String, input: [UInt8] = []) throws -> [UInt8] {
    try python(script, input: input)
}

/// A deterministic generator, so a failing mutation can be reproduced from the seed.
private struct PropertyListFuzzRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One value of every kind, nested, with boundary integers; dates are exact binary fractions so
/// that they survive Python's microsecond `datetime`.
private let everyKind: PropertyListValue = .dictionary([
    "string": .string("hello"),
    "empty string": .string(""),
    "emoji": .string("héllo wörld 😀 日本"),
    "true": .bool(true),
    "false": .bool(false),
    "one": .integer(1),
    "zero": .integer(0),
    "byte": .integer(255),
    "two bytes": .integer(65_535),
    "four bytes": .integer(4_294_967_295),
    "eight bytes": .integer(4_294_967_296),
    "negative": .integer(-1),
    "min": .integer(Int.min),
    "max": .integer(Int.max),
    "real": .real(3.25),
    "negative real": .real(-1e300),
    "date": .date(Date(timeIntervalSinceReferenceDate: 600_000_000.5)),
    "data": .data(Data([0, 1, 2, 0xFF])),
    "empty data": .data(Data()),
    "array": .array([.integer(1), .string("x"), .array([]), .dictionary([:])]),
    "nested": .dictionary(["inner": .dictionary(["deeper": .array([.bool(false), .real(0.5)])])]),
    "sixteen": .array((0 ..< 16).map { .integer($0) }),
    "300": .array((0 ..< 300).map { .string("item \($0)") }),
])

// MARK: - Round trips

@Suite("Binary property list round trips")
struct BinaryPropertyListRoundTripTests {
    @Test("Every kind of scalar decodes to the value that was encoded", arguments: [
        PropertyListValue.string("plain"), .string(""), .string("😀 emoji and ünïcödé"), .string("a\u{0}b"),
        .bool(true), .bool(false),
        .integer(0), .integer(1), .integer(14), .integer(15), .integer(255), .integer(256),
        .integer(65_535), .integer(65_536), .integer(4_294_967_295), .integer(4_294_967_296),
        .integer(Int.max), .integer(Int.min), .integer(-1), .integer(-256),
        .real(0), .real(-0.0), .real(1.5), .real(-2.75), .real(.infinity), .real(-.infinity),
        .real(.greatestFiniteMagnitude), .real(.leastNonzeroMagnitude),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -1e9)),
        .data(Data()), .data(Data((0 ..< 1000).map { UInt8(truncatingIfNeeded: $0) })),
    ])
    func scalarRoundTrip(value: PropertyListValue) throws {
        #expect(try decodeBinary(BinaryPropertyList.encode(value)) == value)
    }

    @Test("A date keeps its sub-second part exactly")
    func subSecondDate() throws {
        let date = Date(timeIntervalSinceReferenceDate: 712_345_678.123_456_7)
        let decoded = try decodeBinary(BinaryPropertyList.encode(.date(date)))
        guard case .date(let back) = decoded else { Issue.record("not a date: \(decoded)"); return }
        #expect(back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test("NaN survives with its bit pattern")
    func nanRoundTrip() throws {
        let decoded = try decodeBinary(BinaryPropertyList.encode(.real(.nan)))
        guard case .real(let back) = decoded else { Issue.record("not a real: \(decoded)"); return }
        #expect(back.bitPattern == Double.nan.bitPattern)
    }

    @Test("A Bool and an integer of the same numeric value stay distinct")
    func boolIntegerDistinction() throws {
        let value: PropertyListValue = .array([.bool(true), .integer(1), .bool(false), .integer(0)])
        let bytes = BinaryPropertyList.encode(value)
        #expect(try decodeBinary(bytes) == value)
        #expect(BinaryPropertyList.encode(.bool(true)) != BinaryPropertyList.encode(.integer(1)))
    }

    @Test("A negative integer is written as 8 signed bytes")
    func negativeIntegerWidth() {
        let bytes = BinaryPropertyList.encode(.integer(-1))
        #expect(Array(bytes[8 ..< 17]) == [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    }

    @Test("Empty, nested and mixed containers round-trip")
    func containersRoundTrip() throws {
        #expect(try decodeBinary(BinaryPropertyList.encode(everyKind)) == everyKind)
        for empty in [PropertyListValue.array([]), .dictionary([:]), .array([.array([.array([])])])] {
            #expect(try decodeBinary(BinaryPropertyList.encode(empty)) == empty)
        }
    }

    @Test("Containers over 15, 255 and 65535 elements round-trip", arguments: [15, 16, 255, 256, 300, 65_536, 70_000])
    func largeContainers(count: Int) throws {
        let array = PropertyListValue.array((0 ..< count).map { .integer($0) })
        #expect(try decodeBinary(BinaryPropertyList.encode(array)) == array)
        let dictionary = PropertyListValue.dictionary(
            Dictionary(uniqueKeysWithValues: (0 ..< count).map { ("k\($0)", PropertyListValue.integer(-$0)) }))
        #expect(try decodeBinary(BinaryPropertyList.encode(dictionary)) == dictionary)
    }

    @Test("Equal dictionaries built in different orders encode to identical bytes")
    func deterministicEncoding() {
        let pairs = (0 ..< 200).map { ("key \($0)", PropertyListValue.integer($0)) }
        var forward: [String: PropertyListValue] = [:]
        for (key, value) in pairs { forward[key] = value }
        var backward = [String: PropertyListValue](minimumCapacity: 4096)
        for (key, value) in pairs.reversed() { backward[key] = value }
        var generator = PropertyListFuzzRandom(state: 7)
        var shuffled: [String: PropertyListValue] = [:]
        for (key, value) in pairs.shuffled(using: &generator) { shuffled[key] = .integer(-1); shuffled[key] = value }
        #expect(Array(forward.keys) != Array(backward.keys), "the test needs two iteration orders")
        let reference = BinaryPropertyList.encode(.dictionary(["outer": .dictionary(forward)]))
        #expect(BinaryPropertyList.encode(.dictionary(["outer": .dictionary(backward)])) == reference)
        #expect(BinaryPropertyList.encode(.dictionary(["outer": .dictionary(shuffled)])) == reference)
    }
}

// MARK: - Compatibility with other readers and writers

@Suite("Compatibility with Apple's format as Python's plistlib implements it")
struct PropertyListPythonCompatibilityTests {
    @Test("Python reads our binary file as the same values")
    func pythonReadsOurBinary() throws {
        // Python decodes our file and writes it back in its own binary encoding; any misreading
        // on its side shows up as a difference after we decode its output.
        let output = try runPython("""
            import sys, plistlib
            value = plistlib.loads(sys.stdin.buffer.read())
            sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_BINARY))
            """, input: BinaryPropertyList.encode(everyKind))
        #expect(try decodeBinary(output) == everyKind)
    }

    @Test("Python reads our XML export as the same values")
    func pythonReadsOurXML() throws {
        let xmlSafe: PropertyListValue = .dictionary([
            "kinds": everyKind.dictionaryValue?["array"] ?? .array([]),
            "escapes": .string("a & b < c > d \"e\" 'f' ]]> \t tab\nline"),
            "emoji": .string("😀 日本"),
            "bools": .array([.bool(true), .bool(false), .integer(1), .integer(0)]),
            "ints": .array([.integer(Int.min), .integer(Int.max), .integer(-7)]),
            "reals": .array([.real(0.1), .real(1e-5), .real(5e20), .real(-0.0), .real(2)]),
            "date": .date(Date(timeIntervalSinceReferenceDate: 600_000_000)),
            "data": .data(Data((0 ..< 200).map { UInt8(truncatingIfNeeded: $0 * 7) })),
            "empty": .dictionary([:]),
        ])
        let output = try runPython("""
            import sys, plistlib
            value = plistlib.loads(sys.stdin.buffer.read())
            sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_BINARY))
            """, input: [UInt8](PropertyListText.encodeXML(xmlSafe)))
        #expect(try decodeBinary(output) == xmlSafe)
    }

    private static let pythonValue = """
        import sys, plistlib, datetime
        value = {
            'string': 'hello', 'emoji': 'héllo 😀', 'empty': '', 'true': True, 'false': False,
            'small': 5, 'negative': -5, 'max': 2**63 - 1, 'min': -2**63, 'real': 1.5,
            'date': datetime.datetime(2020, 1, 2, 3, 4, 5), 'data': b'\\x00\\x01\\xff',
            'list': [1, 'x', [], {}], 'dict': {'inner': [True, 0.25]},
            'many': list(range(300)), 'shared': ['same'] * 20,
        }
        shared = [1, 2, 3]
        value['a'] = shared
        value['b'] = shared
        sys.stdout.buffer.write(plistlib.dumps(value, fmt=getattr(plistlib, sys.argv[1])))
        """

    private static let expectedPythonValue: PropertyListValue = .dictionary([
        "string": .string("hello"), "emoji": .string("héllo 😀"), "empty": .string(""),
        "true": .bool(true), "false": .bool(false), "small": .integer(5), "negative": .integer(-5),
        "max": .integer(Int.max), "min": .integer(Int.min), "real": .real(1.5),
        "date": .date(Date(timeIntervalSince1970: 1_577_934_245)),
        "data": .data(Data([0, 1, 0xFF])),
        "list": .array([.integer(1), .string("x"), .array([]), .dictionary([:])]),
        "dict": .dictionary(["inner": .array([.bool(true), .real(0.25)])]),
        "many": .array((0 ..< 300).map { .integer($0) }),
        "shared": .array(Array(repeating: .string("same"), count: 20)),
        "a": .array([.integer(1), .integer(2), .integer(3)]),
        "b": .array([.integer(1), .integer(2), .integer(3)]),
    ])

    @Test("We read the binary file Python writes, including its shared objects", arguments: ["FMT_BINARY", "FMT_XML"])
    func weReadPythonOutput(format: String) throws {
        let script = Self.pythonValue.replacingOccurrences(of: "sys.argv[1]", with: "'\(format)'")
        let output = try runPython(script)
        #expect(try decodeDomainFile(output) == Self.expectedPythonValue)
        if format == "FMT_XML" {
            #expect(try PropertyListText.decode(Data(output)) == Self.expectedPythonValue)
        }
    }

    @Test("Integers Apple writes in 1, 2, 4 and 16 bytes and reals in 4 bytes are read")
    func appleIntegerAndRealWidths() throws {
        let file = makeBinaryPropertyList([
            [0xA6, 1, 2, 3, 4, 5, 6],
            [0x10, 0xFF],
            [0x11, 0xFF, 0xFE],
            [0x12, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x14] + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, 42],
            [0x14] + [UInt8](repeating: 0xFF, count: 8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE],
            [0x22] + bigEndianBytes(UInt64(Float(1.25).bitPattern), size: 4),
        ])
        #expect(try decodeBinary(file) == .array([
            .integer(255), .integer(65_534), .integer(4_294_967_295), .integer(42), .integer(-2), .float(1.25),
        ]))
    }

    @Test("A 16-byte integer beyond the 64-bit range is rejected")
    func oversizedInteger() {
        let file = makeBinaryPropertyList([[0x14] + [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 8)])
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("UTF-16 keys, wide references and wide offsets are read")
    func unusualWidths() throws {
        let file = makeBinaryPropertyList([
            [0xD1, 0, 1, 0, 2],
            [0x62, 0x00, 0x6B, 0xD8, 0x3D],  // "k" and an unpaired high surrogate
            [0x09],
        ], refSize: 2, offsetSize: 8)
        #expect(try decodeBinary(file) == .dictionary(["k\u{FFFD}": .bool(true)]))
    }

    @Test("Objects that are not values this library stores are rejected", arguments: [
        [UInt8]([0x00]), [0x0F], [0x80, 0x01], [0xC0], [0xB0], [0x70], [0x21, 0, 0], [0x32, 0, 0, 0, 0], [0x15],
    ])
    func unsupportedMarkers(object: [UInt8]) {
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(makeBinaryPropertyList([object])) }
    }

    @Test("A dictionary key that is not a string is rejected")
    func nonStringKey() {
        let file = makeBinaryPropertyList([[0xD1, 1, 2], [0x10, 7], [0x09]])
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("A dictionary that repeats a key is rejected, without quoting the key")
    func duplicateKey() {
        let file = makeBinaryPropertyList([[0xD2, 1, 1, 2, 2], Array("\u{56}secret".utf8), [0x09]])
        do {
            _ = try decodeBinary(file)
            Issue.record("decoded a dictionary with a repeated key")
        } catch {
            #expect(!error.description.contains("secret"))
        }
    }

    @Test("An ASCII-marked string with a non-ASCII byte is rejected")
    func nonASCIIInASCIIString() {
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(makeBinaryPropertyList([[0x52, 0x41, 0xE9]])) }
    }
}

// MARK: - Hostile input

@Suite("Hostile binary input")
struct BinaryPropertyListHostileInputTests {
    @Test("Every truncation of a valid file throws instead of crashing")
    func truncations() {
        let file = BinaryPropertyList.encode(everyKind)
        for length in 0 ..< file.count {
            #expect(throws: PropertyListCodingError.self) { try decodeBinary(Array(file[..<length])) }
        }
    }

    @Test("Thousands of random byte mutations never crash the decoder")
    func randomMutations() {
        let small = BinaryPropertyList.encode(.dictionary([
            "a": .array([.integer(1), .string("x"), .dictionary(["k": .real(1)])]), "b": .data(Data([1, 2])),
        ]))
        let large = BinaryPropertyList.encode(everyKind)
        var generator = PropertyListFuzzRandom(state: 0x5EED)
        var outcomes = (decoded: 0, rejected: 0)
        for round in 0 ..< 4000 {
            var file = round.isMultiple(of: 4) ? large : small
            let mutations = Int.random(in: 1 ... 4, using: &generator)
            for _ in 0 ..< mutations {
                // Half the mutations hit the trailer and offset table, where the numbers that steer
                // the decoder live.
                let index = Bool.random(using: &generator)
                    ? Int.random(in: max(0, file.count - 48) ..< file.count, using: &generator)
                    : Int.random(in: 0 ..< file.count, using: &generator)
                file[index] = Bool.random(using: &generator)
                    ? UInt8.random(in: 0 ... 255, using: &generator)
                    : [0x00, 0x0F, 0x7F, 0x80, 0xFF, 0xAF, 0xDF, 0x13][Int.random(in: 0 ..< 8, using: &generator)]
            }
            if (try? decodeBinary(file)) == nil { outcomes.rejected += 1 } else { outcomes.decoded += 1 }
        }
        #expect(outcomes.rejected > 0)
    }

    @Test("An array that contains itself is rejected as a cycle, not only by the depth limit")
    func selfReferencingArray() {
        let error = #expect(throws: PropertyListCodingError.self) { try decodeBinary(makeBinaryPropertyList([[0xA1, 0]])) }
        #expect(error?.description == "object 0 contains itself")
    }

    @Test("A dictionary that contains itself is rejected")
    func selfReferencingDictionary() {
        let file = makeBinaryPropertyList([[0xD1, 1, 0], [0x51, 0x6B]])
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("A cycle through two containers is rejected")
    func indirectCycle() {
        let file = makeBinaryPropertyList([[0xA1, 1], [0xD1, 2, 0], [0x51, 0x6B]])
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("A container shared by two parents is read, since Python writes those")
    func sharedContainer() throws {
        let file = makeBinaryPropertyList([[0xA2, 1, 1], [0xA1, 2], [0x10, 3]])
        #expect(try decodeBinary(file) == .array([.array([.integer(3)]), .array([.integer(3)])]))
    }

    @Test("Shared references that would expand exponentially are rejected")
    func expansionBomb() {
        // Array n holds array n+1 twice: 60 small objects describing 2^60 values.
        var objects: [[UInt8]] = (0 ..< 60).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x09])
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(makeBinaryPropertyList(objects)) }
    }

    @Test("Nesting deeper than the limit is rejected, nesting at the limit is read")
    func depthLimit() throws {
        func nested(_ levels: Int) -> PropertyListValue {
            var value = PropertyListValue.integer(1)
            for level in 0 ..< levels { value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["k": value]) }
            return value
        }
        let limit = PropertyListValue.maximumDepth
        #expect(try decodeBinary(BinaryPropertyList.encode(nested(limit))) == nested(limit))
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(BinaryPropertyList.encode(nested(limit + 1))) }
        #expect(BinaryPropertyList.isWithinDepthLimit(nested(limit)))
        #expect(!BinaryPropertyList.isWithinDepthLimit(nested(limit + 1)))
    }

    @Test("A hostile chain of thousands of nested arrays is rejected without exhausting the stack")
    func deepHostileChain() {
        // Built as raw objects: the value itself would be too deep for the recursive encoder.
        var objects: [[UInt8]] = (0 ..< 5000).map { [0xA1] + bigEndianBytes(UInt64($0 + 1), size: 2) }
        objects.append([0x09])
        let file = makeBinaryPropertyList(objects, refSize: 2, offsetSize: 4)
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("Trailer fields out of range are rejected", arguments: [
        (6, UInt8(0)), (6, 9), (7, 0), (7, 9),
        (8, 0xFF), (15, 0), (15, 3), (16, 0xFF), (23, 2), (24, 0xFF), (31, 0), (31, 8), (31, 0xF0),
    ] as [(Int, UInt8)])
    func trailerSanity(field: Int, byte: UInt8) {
        var file = makeBinaryPropertyList([[0xA1, 1], [0x09]])
        file[file.count - 32 + field] = byte
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(file) }
    }

    @Test("Counts, references and offsets pointing past the data are rejected", arguments: [
        [[UInt8]([0xAF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])],
        [[0xAF, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]],
        [[0x4F, 0x12, 0xFF, 0xFF, 0xFF, 0xFF]],
        [[0x6F, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]],
        [[0xDF, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 1]],
        [[0xA1, 9]],
        [[0x5F, 0x10]],
        [[0x23, 0, 0]],
    ])
    func outOfRangeSizes(objects: [[UInt8]]) {
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(makeBinaryPropertyList(objects)) }
    }

    @Test("An object offset into the header or the offset table is rejected")
    func badObjectOffsets() {
        var intoHeader = makeBinaryPropertyList([[0x09]])
        intoHeader[9] = 3
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(intoHeader) }
        var intoTable = makeBinaryPropertyList([[0x09]])
        intoTable[9] = 9
        #expect(throws: PropertyListCodingError.self) { try decodeBinary(intoTable) }
    }

    @Test("Error messages name the fault, not the stored values")
    func errorMessages() {
        let file = makeBinaryPropertyList([[0xA1, 7]])
        do {
            _ = try decodeBinary(file)
            Issue.record("decoded a dangling reference")
        } catch {
            #expect(error.description == "object reference 7 out of range")
        }
    }
}

// MARK: - Text formats and file dispatch

@Suite("Text property lists and file dispatch")
struct PropertyListTextTests {
    @Test("OpenStep text from an argument parses, with its scalars as strings")
    func openStep() throws {
        #expect(try PropertyListText.decode(Data("{appearance = dark;}".utf8)) == .dictionary(["appearance": .string("dark")]))
        #expect(try PropertyListText.decode(Data("{appearance = dark; n = 5;}".utf8))
            == .dictionary(["appearance": .string("dark"), "n": .string("5")]))
        #expect(try PropertyListText.decode(Data("(a, b)".utf8)) == .array([.string("a"), .string("b")]))
        #expect(try PropertyListText.decode(Data("\"quoted string\"".utf8)) == .string("quoted string"))
    }

    @Test("XML parsed by Foundation keeps Bool, integer, real and date apart")
    func xmlTypes() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>t</key><true/><key>f</key><false/><key>i</key><integer>1</integer>
            <key>min</key><integer>-9223372036854775808</integer><key>r</key><real>2</real>
            <key>d</key><date>2020-01-02T03:04:05Z</date><key>b</key><data>AAEC</data>
            <key>a</key><array><string>x</string></array></dict></plist>
            """
        #expect(try PropertyListText.decode(Data(xml.utf8)) == .dictionary([
            "t": .bool(true), "f": .bool(false), "i": .integer(1), "min": .integer(Int.min), "r": .real(2),
            "d": .date(Date(timeIntervalSince1970: 1_577_934_245)), "b": .data(Data([0, 1, 2])),
            "a": .array([.string("x")]),
        ]))
    }

    @Test("An XML integer beyond the 64-bit range is rejected; UInt64.max is not beyond it")
    func xmlOversizedInteger() throws {
        for digits in ["18446744073709551616", "-9223372036854775809"] {
            let xml = "<plist version=\"1.0\"><integer>\(digits)</integer></plist>"
            #expect(throws: PropertyListCodingError.self, "\(digits)") { try PropertyListText.decode(Data(xml.utf8)) }
        }
        let xml = "<plist version=\"1.0\"><integer>18446744073709551615</integer></plist>"
        #expect(try PropertyListText.decode(Data(xml.utf8)) == .unsignedInteger(.max))
    }

    @Test("XML export round-trips through the XML reader, dates to the whole second")
    func xmlRoundTrip() throws {
        let value: PropertyListValue = .dictionary([
            "escapes": .string("a & b < c > d\r\n\ttab"), "control": .string("bell\u{7}"),
            "emoji": .string("😀"), "bool": .bool(true), "int": .integer(1), "min": .integer(Int.min),
            "reals": .array([.real(0.1), .real(-0.0), .real(.infinity), .real(-.infinity), .real(1e-300)]),
            "data": .data(Data([0xDE, 0xAD])), "empty": .array([]), "emptyDict": .dictionary([:]), "s": .string(""),
        ])
        let xml = PropertyListText.encodeXML(value)
        #expect(try PropertyListText.decode(xml) == value)
        let date = Date(timeIntervalSince1970: 1_577_934_245.75)
        let back = try PropertyListText.decode(PropertyListText.encodeXML(.date(date)))
        #expect(back == .date(Date(timeIntervalSince1970: 1_577_934_245)))
        #expect(String(decoding: PropertyListText.encodeXML(.date(date)), as: UTF8.self).contains("<date>2020-01-02T03:04:05Z</date>"))
        #expect(String(decoding: PropertyListText.encodeXML(.date(Date(timeIntervalSince1970: -1))), as: UTF8.self)
            .contains("<date>1969-12-31T23:59:59Z</date>"))
    }

    @Test("A domain file may be binary or XML, with an optional byte-order mark and leading space")
    func fileDispatch() throws {
        let value: PropertyListValue = .dictionary(["k": .integer(3)])
        #expect(try decodeDomainFile(BinaryPropertyList.encode(value)) == value)
        let xml = [UInt8](PropertyListText.encodeXML(value))
        #expect(try decodeDomainFile(xml) == value)
        #expect(try decodeDomainFile([0xEF, 0xBB, 0xBF, 0x20, 0x0A] + xml) == value)
    }

    @Test("Garbage, OpenStep text and empty files are not accepted as domain files", arguments: [
        "", "hello world", "{appearance = dark;}", "(a, b)", "bplist0", "bplist00", "<not xml at all",
        "<0fbd>", "<plist version=\"1.0\"><dict><key>a</key></dict>", "\u{FEFF}", "   \n",
    ])
    func garbageRejected(text: String) {
        #expect(throws: PropertyListCodingError.self) { try decodeDomainFile(Array(text.utf8)) }
    }

    @Test("Random bytes are not accepted as a domain file")
    func randomBytesRejected() {
        var generator = PropertyListFuzzRandom(state: 99)
        for _ in 0 ..< 200 {
            let bytes = (0 ..< Int.random(in: 0 ..< 100, using: &generator)).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            guard bytes.first != UInt8(ascii: "<") else { continue }
            #expect(throws: PropertyListCodingError.self) { try decodeDomainFile(bytes) }
        }
    }
}

// MARK: - Conversion from native values

@Suite("Conversion from native values")
struct PropertyListNativeConversionTests {
    private struct Point { var x = 1 }

    @Test("Values that are not property-list values are refused")
    func refused() {
        #expect(PropertyListValue(NSNull()) == nil)
        #expect(PropertyListValue(URL(fileURLWithPath: "/tmp")) == nil)
        #expect(PropertyListValue(UUID()) == nil)
        #expect(PropertyListValue(Point()) == nil)
        #expect(PropertyListValue([1: "one"] as [Int: String]) == nil)
        #expect(PropertyListValue([1, nil, 3] as [Int?]) == nil)
        #expect(PropertyListValue(Optional<Int>.none as Any) == nil)
        #expect(PropertyListValue(Int128(UInt64.max) + 1) == nil)
        #expect(PropertyListValue([AnyHashable(1): "one"] as [AnyHashable: Any]) == nil)
    }

    @Test("NSNumber Booleans become Bool and other NSNumbers keep their kind")
    func nsNumbers() {
        #expect(PropertyListValue(NSNumber(value: true)) == .bool(true))
        #expect(PropertyListValue(NSNumber(value: false)) == .bool(false))
        #expect(PropertyListValue(NSNumber(value: 1)) == .integer(1))
        #expect(PropertyListValue(NSNumber(value: 1.5)) == .real(1.5))
        #expect(PropertyListValue(NSNumber(value: UInt64.max)) == .unsignedInteger(.max))
    }

    @Test("String-keyed [AnyHashable: Any] and Foundation collections are accepted")
    func collections() {
        let mixed: [AnyHashable: Any] = ["a": 1, "b": [true, "x"], "c": ["d": Data([1])] as [String: Any]]
        #expect(PropertyListValue(mixed) == .dictionary([
            "a": .integer(1), "b": .array([.bool(true), .string("x")]), "c": .dictionary(["d": .data(Data([1]))]),
        ]))
        #expect(PropertyListValue(NSDictionary(dictionary: ["k": "v"])) == .dictionary(["k": .string("v")]))
        #expect(PropertyListValue(NSArray(array: [1, "x"])) == .array([.integer(1), .string("x")]))
        #expect(PropertyListValue(Optional(5) as Any) == .integer(5))
    }
}
