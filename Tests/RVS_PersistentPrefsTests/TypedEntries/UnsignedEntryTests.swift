import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A Codable value with unsigned fields above `Int64.max`.
struct TypedSerials: Codable, Equatable, Sendable {
    var first = UInt64.max
    var list: [UInt] = [UInt(Int64.max) + 1, 7]
}

final class TypedUnsignedSettings: RVS_PersistentPrefs {
    @Entry("serial") var serial: UInt64 = 0
    @Entry("serials") var serials = TypedSerials(first: 0, list: [])
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings")
    }

    override var keys: [String] { ["untyped"] }
    override var userDefaults: DefaultsSuite? { suite }
}

/// SPEC §3: an unsigned 64-bit value above `Int64.max` is stored as CoreFoundation stores it (a 16-byte
/// integer) and reads back whole, through the subscript and through typed entries.
@Suite("Unsigned values above Int64.max in the base class and typed entries")
struct UnsignedEntryTests {
    @Test("prefs[name] = UInt64.max is stored and reads back as? UInt64, here and in a fresh read of the file")
    func subscriptWrite() throws {
        let fixture = try TypedFixture()
        let settings = TypedUnsignedSettings(suite: fixture.suite)
        settings["untyped"] = UInt64.max
        #expect(settings.lastError == nil)
        #expect(settings["untyped"] as? UInt64 == .max)
        #expect(try fixture.stored()["untyped"] == .unsignedInteger(.max))
    }

    @Test("A UInt64 entry and Codable fields of UInt64 and UInt above Int64.max round-trip, and Python reads them")
    func typedEntries() throws {
        let fixture = try TypedFixture()
        let settings = TypedUnsignedSettings(suite: fixture.suite)
        settings.serial = .max
        settings.serials = TypedSerials()
        #expect(settings.lastError == nil)
        let fresh = TypedUnsignedSettings(suite: DefaultsSuite(
            persistentDomain: try FileDomainStorage(directory: fixture.directory.path, name: "app"), globalDomain: nil, arguments: []))
        #expect(fresh.serial == .max)
        #expect(fresh.serials == TypedSerials())
        let seen = try python("""
            import plistlib
            s = plistlib.load(open('\(fixture.path)', 'rb'))['settings']
            print(s['serial'], s['serials']['first'], s['serials']['list'])
            """)
        #expect(String(decoding: seen, as: UTF8.self) == "18446744073709551615 18446744073709551615 [9223372036854775808, 7]\n")
    }
}
