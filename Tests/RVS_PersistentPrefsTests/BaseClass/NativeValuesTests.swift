import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Values read back are native Swift values equal to what was written")
struct BaseClassNativeValuesTests {
    static let when = Date(timeIntervalSinceReferenceDate: 765_432_109.987_654)
    static let blob = Data([0x00, 0xFF, 0x10, 0x80, 0x7F])

    /// One entry of each kind.
    static func written() -> [String: Any] {
        [
            "flag": true,
            "off": false,
            "big": Int.max,
            "small": Int.min,
            "ratio": 3.25,
            "when": when,
            "blob": blob,
            "name": "Grüße, 世界 🌍",
            "list": [1, "two", 3.5, false, [when, blob] as [Any], ["inner": 7] as [String: Any]] as [Any],
            "map": ["a": 1, "b": ["c": [true, "d"] as [Any]] as [String: Any], "e": -0.5] as [String: Any],
            "narrow": Int8(-8),
            "unsigned": UInt32.max,
            "single": Float(0.25),
        ]
    }

    /// Who reads the collection back.
    enum Reader: String, CaseIterable, Sendable {
        case sameInstance = "the instance that wrote"
        case newInstanceOnTheFile = "a new instance with its own view of the file"
    }

    func readBack(_ reader: Reader, fixture: BaseClassFixture, writer: BaseClassTestPrefs) throws -> BaseClassTestPrefs {
        switch reader {
        case .sameInstance: return writer
        case .newInstanceOnTheFile: return BaseClassTestPrefs(suite: try fixture.independentSuite(), key: "settings", values: nil)
        }
    }

    @Test("Each kind of value reads back as on Apple platforms (numbers as NSNumber, Bool as Bool) with the value written",
          arguments: Reader.allCases)
    func valuesReadBackNative(reader: Reader) throws {
        let fixture = try BaseClassFixture()
        let writer = fixture.prefs()
        writer.values = Self.written()
        #expect(writer.baseClassOutcome == .success)
        let prefs = try readBack(reader, fixture: fixture, writer: writer)
        let values = prefs.values
        #expect(prefs.baseClassOutcome == .success)
        #expect(values.count == Self.written().count)

        #expect(type(of: try #require(values["flag"])) == Bool.self)
        #expect(values["flag"] as? Bool == true)
        #expect(values["off"] as? Bool == false)
        #expect(values["flag"] as? Int == nil, "a Bool must not read as an Int")
        #expect(values["off"] as? Int == nil, "a Bool must not read as an Int")

        #expect(try #require(values["big"]) is NSNumber, "numbers read back as NSNumber, as on Apple platforms")
        #expect(values["big"] as? Int == Int.max)
        #expect(values["small"] as? Int == Int.min)
        #expect(values["big"] as? Bool == nil, "an Int must not read as a Bool")
        #expect(values["narrow"] as? Int == -8)
        #expect(values["unsigned"] as? Int == Int(UInt32.max))

        #expect(try #require(values["ratio"]) is NSNumber)
        #expect(values["ratio"] as? Double == 3.25)
        #expect(values["ratio"] as? Int == nil)
        #expect(values["single"] as? Double == 0.25)
        #expect(values["single"] as? Float == 0.25)
        #expect("\(values["flag"]!)" == "true" && "\(values["off"]!)" == "false", "a Bool prints as true/false")

        #expect(type(of: try #require(values["when"])) == Date.self)
        #expect(values["when"] as? Date == Self.when, "the date lost precision")
        #expect(type(of: try #require(values["blob"])) == Data.self)
        #expect(values["blob"] as? Data == Self.blob)
        #expect(type(of: try #require(values["name"])) == String.self)
        #expect(values["name"] as? String == "Grüße, 世界 🌍")
    }

    @Test("Containers read back as [Any] and [String: Any] of values read as at the top: no Optional wrapping, no AnyHashable keys",
          arguments: Reader.allCases)
    func containersReadBackNative(reader: Reader) throws {
        let fixture = try BaseClassFixture()
        let writer = fixture.prefs()
        writer.values = Self.written()
        let prefs = try readBack(reader, fixture: fixture, writer: writer)

        let listValue = try #require(prefs["list"])
        #expect(type(of: listValue) == [Any].self)
        let list = try #require(listValue as? [Any])
        #expect(list.count == 6)
        #expect(list[0] is NSNumber && list[0] as? Int == 1)
        #expect(type(of: list[1]) == String.self && list[1] as? String == "two")
        #expect(list[2] is NSNumber && list[2] as? Double == 3.5)
        #expect(type(of: list[3]) == Bool.self && list[3] as? Bool == false)
        let pair = try #require(list[4] as? [Any])
        #expect(type(of: pair[0]) == Date.self && pair[0] as? Date == Self.when)
        #expect(type(of: pair[1]) == Data.self && pair[1] as? Data == Self.blob)
        #expect(type(of: list[5]) == [String: Any].self)
        #expect((list[5] as? [String: Any])?["inner"] as? Int == 7)

        let mapValue = try #require(prefs["map"])
        #expect(type(of: mapValue) == [String: Any].self, "got \(type(of: mapValue))")
        let map = try #require(mapValue as? [String: Any])
        #expect(try #require(map["a"]) is NSNumber && map["a"] as? Int == 1)
        let inner = try #require(map["b"])
        #expect(type(of: inner) == [String: Any].self)
        let deepest = try #require((inner as? [String: Any])?["c"])
        #expect(type(of: deepest) == [Any].self)
        #expect(((deepest as? [Any])?.first).map { type(of: $0) == Bool.self } == true)
        #expect(map["e"] as? Double == -0.5)

        let text = String(describing: prefs.values)
        #expect(!text.contains("Optional("), "values print with Optional wrapping: \(text)")
        #expect(!text.contains("AnyHashable"), "values print with AnyHashable keys: \(text)")
    }

    @Test("A typed property over the subscript reads back what was written through it, also in a new instance")
    func typedPropertiesRoundTrip() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        prefs.launchCount = Int.max
        prefs.appearance = "dark"
        #expect(prefs.launchCount == Int.max && prefs.appearance == "dark")
        let again = BaseClassTestPrefs(suite: try fixture.independentSuite(), key: "settings", values: nil)
        #expect(again.launchCount == Int.max && again.appearance == "dark")
    }

    @Test("The current date, to its full sub-second precision, reads back equal")
    func currentDateRoundTrips() throws {
        let fixture = try BaseClassFixture()
        let now = Date()
        let prefs = fixture.prefs(values: ["now": now])
        #expect(prefs["now"] as? Date == now)
        let again = BaseClassTestPrefs(suite: try fixture.independentSuite(), key: "settings", values: nil)
        #expect(again["now"] as? Date == now)
    }

    @Test("A file written by another tool as an XML property list reads back as native values")
    func xmlFileReadsBackNative() throws {
        let fixture = try BaseClassFixture()
        fixture.writeDomainFile(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>settings</key>
                <dict>
                    <key>flag</key><true/>
                    <key>big</key><integer>9223372036854775807</integer>
                    <key>small</key><integer>-9223372036854775808</integer>
                    <key>ratio</key><real>3.25</real>
                    <key>when</key><date>2025-01-02T03:04:05Z</date>
                    <key>blob</key><data>AP8QgH8=</data>
                    <key>list</key><array><integer>1</integer><string>two</string></array>
                    <key>map</key><dict><key>a</key><false/></dict>
                </dict>
            </dict>
            </plist>
            """.utf8))
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .success)
        #expect(type(of: try #require(prefs["flag"])) == Bool.self)
        #expect(prefs["flag"] as? Int == nil)
        #expect(prefs["big"] as? Int == Int.max && prefs["small"] as? Int == Int.min)
        #expect(try #require(prefs["ratio"]) is NSNumber && prefs["ratio"] as? Double == 3.25)
        #expect(prefs["when"] as? Date == ISO8601DateFormatter().date(from: "2025-01-02T03:04:05Z"))
        #expect(prefs["blob"] as? Data == Self.blob)
        #expect(type(of: try #require(prefs["list"])) == [Any].self)
        #expect(type(of: try #require(prefs["map"])) == [String: Any].self)
        #expect((prefs["map"] as? [String: Any])?["a"] as? Bool == false)
    }

    @Test("A domain Python wrote with keys equal under String == (\"é\", \"e\\u{301}\") reads as the precomposed entry; a later write keeps both",
          arguments: ["BINARY", "XML"])
    func equivalentKeysFromPython(format: String) throws {
        let fixture = try BaseClassFixture()
        fixture.writeDomainFile(try python("""
            import plistlib, sys
            value = {'settings': {'\\u00e9': 'precomposed', 'e\\u0301': 'decomposed', 'name': 'kept'}}
            sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_\(format)))
            """))
        let prefs = BaseClassTestPrefs(suite: fixture.suite, key: "settings", values: nil, allowing: ["é", "name", "flag"])
        #expect(prefs.baseClassOutcome == .success, "the domain must stay readable")
        #expect(prefs.values.count == 2)
        #expect(prefs["é"] as? String == "precomposed")
        prefs["flag"] = true
        #expect(prefs.lastError == nil)
        let seen = try python("""
            import plistlib, sys
            value = plistlib.load(open('\(fixture.path)', 'rb'))['settings']
            print(sorted((k.encode('unicode_escape').decode(), v) for k, v in value.items()))
            """)
        #expect(String(decoding: seen, as: UTF8.self)
                == "[('\\\\xe9', 'precomposed'), ('e\\\\u0301', 'decomposed'), ('flag', True), ('name', 'kept')]\n")
    }
}
