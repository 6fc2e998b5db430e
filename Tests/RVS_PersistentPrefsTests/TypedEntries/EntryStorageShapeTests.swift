import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Sets, alone and inside a `Codable` value.
final class SetSettings: RVS_PersistentPrefs {
    struct Group: Codable, Equatable { var members: Set<String> = [] }
    @Entry("tags") var tags: Set<String> = []
    @Entry("group") var group = Group()
    let suite: DefaultsSuite

    init(suite: DefaultsSuite) {
        self.suite = suite
        super.init(key: "sets")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

@Suite("Typed entries are stored as readable property lists")
struct EntryStorageShapeTests {
    @Test("Property-list types are stored as themselves")
    func propertyListTypesAreStoredAsThemselves() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        settings.launchCount = 42
        settings.name = "Ada"
        settings.enabled = true
        settings.ratio = 0.25
        settings.volume = 0.75
        settings.lastOpened = date
        settings.blob = Data([9, 8, 7])
        settings.recent = ["a", "b"]
        settings.small = -5
        #expect(settings.lastError == nil)
        let stored = try fixture.stored()
        #expect(stored["launchCount"] == .integer(42))
        #expect(stored["name"] == .string("Ada"))
        #expect(stored["enabled"] == .bool(true))
        #expect(stored["ratio"] == .real(0.25))
        // A Float as an untyped write of a Float stores it (a 4-byte real once the codec keeps them).
        #expect(stored["volume"] == PropertyListValue(Float(0.75)))
        #expect(stored["lastOpened"] == .date(date))
        #expect(stored["blob"] == .data(Data([9, 8, 7])))
        #expect(stored["recent"] == .array([.string("a"), .string("b")]))
        #expect(stored["small"] == .integer(-5))
    }

    @Test("A Float inside a Codable value, keyed, in an array or alone in a single-value container, is a 4-byte real")
    func nestedFloatsAreFourByteReals() throws {
        struct Mixer: Codable, Equatable { var gain: Float = 0.75; var bands: [Float] = [0.5, 1.25]; var trim = Trim() }
        struct Trim: Codable, Equatable {
            var value: Float = 0.1
            init() {}
            init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Float.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            }
        }
        let encoded = try #require(try PropertyListValueEncoder.encode(Mixer()))
        #expect(encoded == .dictionary(["gain": .float(0.75), "bands": .array([.float(0.5), .float(1.25)]), "trim": .float(0.1)]))
        #expect(try PropertyListValueDecoder.decode(Mixer.self, from: encoded) == Mixer())
    }

    @Test("RawRepresentable values are stored as their raw value, Codable or not")
    func rawRepresentableIsStoredAsRawValue() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.appearance = .dark
        settings.level = .high
        let stored = try fixture.stored()
        #expect(stored["appearance"] == .string("dark"))
        #expect(stored["level"] == .integer(3))
    }

    @Test("URL is stored as its absolute string and UUID as its string, also inside a Codable value")
    func urlAndUUIDAreStrings() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let uuid = UUID()
        settings.homepage = URL(string: "https://example.org/a?b=c")!
        settings.identifier = uuid
        settings.profile.homepage = URL(fileURLWithPath: "/tmp/x")
        settings.profile.id = uuid
        let stored = try fixture.stored()
        #expect(stored["homepage"] == .string("https://example.org/a?b=c"))
        #expect(stored["identifier"] == .string(uuid.uuidString))
        let profile = try #require(stored["profile"]?.dictionaryValue)
        #expect(profile["homepage"] == .string("file:///tmp/x"))
        #expect(profile["id"] == .string(uuid.uuidString))
    }

    @Test("A Codable struct is stored as its property-list structure, never as Data")
    func codableIsStoredAsStructure() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.window = TypedFrame(x: 1, y: 2, width: 800, height: 600)
        settings.profile = TypedProfile(
            name: "Ada", tags: ["x", "y"], born: Date(timeIntervalSinceReferenceDate: 60), avatar: Data([1]),
            nickname: nil, sizes: ["s": 1]
        )
        let stored = try fixture.stored()
        #expect(stored["window"] == .dictionary(["x": .real(1), "y": .real(2), "width": .real(800), "height": .real(600)]))
        let profile = try #require(stored["profile"]?.dictionaryValue)
        #expect(profile["name"] == .string("Ada"))
        #expect(profile["tags"] == .array([.string("x"), .string("y")]))
        #expect(profile["born"] == .date(Date(timeIntervalSinceReferenceDate: 60)))
        #expect(profile["avatar"] == .data(Data([1])))
        #expect(profile["nickname"] == nil)  // an absent optional is left out
        #expect(profile["sizes"] == .dictionary(["s": .integer(1)]))
        #expect(settings.profile.tags == ["x", "y"] && settings.profile.sizes == ["s": 1])
    }

    @Test("Another tool reads a Codable entry as a dictionary (Python's plistlib)")
    func otherToolsReadTheStructure() throws {
        let fixture = try TypedFixture()
        fixture.settings().window = TypedFrame(x: 0, y: 0, width: 1024, height: 600)
        let script = """
        import plistlib, sys
        domain = plistlib.loads(sys.stdin.buffer.read())
        window = domain['settings']['window']
        print(type(window).__name__, window['width'], window['height'])
        """
        let output = String(decoding: try python(script, input: fileBytes(fixture.path) ?? []), as: UTF8.self)
        #expect(output == "dict 1024.0 600.0\n")
    }

    @Test("Values written by the untyped API in those shapes read back through typed entries")
    func untypedWritesReadBackTyped() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let uuid = UUID()
        settings["appearance"] = "light"
        settings["level"] = 1
        settings["window"] = ["x": 5.0, "y": 6.0, "width": 700.0, "height": 500]  // an integer height reads as Double
        settings["homepage"] = "https://example.net/"
        settings["identifier"] = uuid.uuidString
        settings["volume"] = 0.1  // a 64-bit real reads as the nearest Float
        settings["launchCount"] = 3.0  // an integral real reads as Int
        settings["lastOpened"] = Date(timeIntervalSinceReferenceDate: 5)
        #expect(settings.lastError == nil)
        #expect(settings.appearance == .light)
        #expect(settings.level == .low)
        #expect(settings.window == TypedFrame(x: 5, y: 6, width: 700, height: 500))
        #expect(settings.homepage == URL(string: "https://example.net/"))
        #expect(settings.identifier == uuid)
        #expect(settings.volume == Float(0.1))
        #expect(settings.launchCount == 3)
        #expect(settings.lastOpened == Date(timeIntervalSinceReferenceDate: 5))
        #expect(settings.lastError == nil)
    }

    @Test("Values written through typed entries read back through the untyped API")
    func typedWritesReadBackUntyped() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.appearance = .dark
        settings.level = .low
        settings.window = TypedFrame(x: 1, y: 2, width: 3, height: 4)
        settings.homepage = URL(string: "https://example.com/x")!
        settings.launchCount = 12
        let values = settings.values
        #expect(values["appearance"] as? String == "dark")
        #expect(values["level"] as? Int == 1)
        let window = try #require(values["window"] as? [String: Any])
        #expect(window["width"] as? Double == 3 && window["height"] as? Double == 4)
        #expect(values["homepage"] as? String == "https://example.com/x")
        #expect(settings["launchCount"] as? Int == 12)
    }

    @Test("A typed write keeps the other entries, including untyped ones, as a subscript write does")
    func typedWriteKeepsOtherEntries() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["name": .string("seeded"), "launchCount": .integer(2)])
        let settings = fixture.settings()
        settings.appearance = .light
        #expect(try fixture.stored() == ["name": .string("seeded"), "launchCount": .integer(2), "appearance": .string("light")])
    }

    @Test("A Codable set is stored in one order: an equal set built otherwise changes no byte of the file and tells no observer")
    func equalSetsStoreEqualBytes() throws {
        let fixture = try TypedFixture()
        let settings = SetSettings(suite: fixture.suite)
        let words = (0..<64).map { "tag\($0)" }
        settings.tags = Set(words)
        settings.group = .init(members: Set(words))
        #expect(settings.lastError == nil)
        let bytes = fileBytes(fixture.domain.path)
        let told = ObservationLog<String>()
        let tokens = [settings.observe(\.tags) { _, _ in told.append("tags") }, settings.observe(\.group) { _, _ in told.append("group") }]
        // The same elements, inserted in another order into a table of another size: they iterate in another order.
        var other = Set<String>(minimumCapacity: 4096)
        for word in words.reversed() { other.insert(word) }
        settings.tags = other
        settings.group = .init(members: other)
        #expect(settings.lastError == nil)
        #expect(told.events.isEmpty, "told: \(told.events)")
        #expect(fileBytes(fixture.domain.path) == bytes)
        #expect(settings.tags == Set(words) && settings.group.members == Set(words))
        withExtendedLifetime(tokens) {}
    }
}
