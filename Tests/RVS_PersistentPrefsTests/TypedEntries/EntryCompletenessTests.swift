import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// SPEC §9: typed entries, complete — reset, isDefaultValue, updates(of:initial:), raw-representable
// values inside containers without Codable, and bridges of one's own.

/// Neither Codable nor anything else: only RawRepresentable, with a String raw value.
enum CompletenessLevel: String, Sendable { case low, high }

/// Codable as well as RawRepresentable: containers of it must still compile.
enum CompletenessMode: String, Codable, Sendable { case quiet, loud }

/// Neither Codable nor RawRepresentable: stored through a bridge of its own.
struct CompletenessColor: Equatable, Sendable { var red = 0, green = 0, blue = 0 }

/// Stores a colour as "#RRGGBB".
struct CompletenessHexBridge: PropertyListBridge {
    struct Malformed: Error {}
    func serialize(_ color: CompletenessColor) throws -> PropertyListValue? {
        .string("#" + [color.red, color.green, color.blue].map { String(format: "%02X", $0) }.joined())
    }
    func deserialize(_ stored: PropertyListValue) throws -> CompletenessColor {
        guard case .string(let text) = stored, text.count == 7, text.hasPrefix("#"),
              let number = Int(text.dropFirst(), radix: 16) else { throw Malformed() }
        return CompletenessColor(red: number >> 16 & 0xFF, green: number >> 8 & 0xFF, blue: number & 0xFF)
    }
}

final class CompletenessSettings: RVS_PersistentPrefs {
    @Entry("appearance") var appearance = "system"
    @Entry("count") var launches = 0
    @Entry("levels") var levels: [CompletenessLevel] = []
    @Entry("level") var level: CompletenessLevel? = nil
    @Entry("levelSet") var levelSet: Set<CompletenessLevel> = []
    @Entry("levelByRoom") var levelByRoom: [String: CompletenessLevel] = [:]
    @Entry("modes") var modes: [CompletenessMode] = [.quiet]
    @Entry("mode") var mode: CompletenessMode? = nil
    @Entry("accent", bridge: CompletenessHexBridge()) var accent = CompletenessColor(red: 0, green: 122, blue: 255)
}

@Suite("Typed entries, complete (SPEC §9)")
struct EntryCompletenessTests {
    let suite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])

    func stored() throws -> [String: PropertyListValue] {
        try suite.value(forKey: "settings")?.dictionaryValue ?? [:]
    }

    @Test("reset(\\.$x) removes the entry: it is no longer stored and reads as its default")
    func resetRemovesTheEntry() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        settings.appearance = "dark"
        settings.launches = 3
        settings.reset(\.$appearance)
        #expect(settings.lastError == nil)
        #expect(settings.appearance == "system")
        #expect(try stored() == ["count": .integer(3)])
    }

    @Test("isDefaultValue(\\.$x) is true when absent or stored equal to the default, false otherwise")
    func isDefaultValueComparesWithTheDefault() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        #expect(settings.isDefaultValue(\.$appearance))
        settings.appearance = "dark"
        #expect(!settings.isDefaultValue(\.$appearance))
        settings.appearance = "system"
        #expect(settings.isDefaultValue(\.$appearance))
        #expect(try stored()["appearance"] == .string("system"))
    }

    @Test("updates(of:initial: false) skips the current value and yields the next change first")
    func updatesWithoutInitialSkipTheCurrentValue() async throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        settings.appearance = "dark"
        var iterator = settings.updates(of: \.$appearance, initial: false).makeAsyncIterator()
        settings.launches = 1  // another entry: not yielded
        settings.appearance = "light"
        #expect(await iterator.next() == "light")
        var withInitial = settings.updates(of: \.$appearance).makeAsyncIterator()
        #expect(await withInitial.next() == "light")
    }

    @Test("Raw-representable values that are not Codable work inside arrays, Optionals, sets and dictionaries")
    func rawValuesInsideContainers() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        settings.levels = [.high, .low]
        settings.level = .high
        settings.levelSet = [.low]
        settings.levelByRoom = ["kitchen": .high]
        #expect(settings.lastError == nil)
        let entries = try stored()
        #expect(entries["levels"] == .array([.string("high"), .string("low")]))
        #expect(entries["level"] == .string("high"))
        #expect(entries["levelSet"] == .array([.string("low")]))
        #expect(entries["levelByRoom"] == .dictionary(["kitchen": .string("high")]))
        let other = CompletenessSettings(key: "settings", suite: suite)
        #expect(other.levels == [.high, .low])
        #expect(other.level == .high)
        #expect(other.levelSet == [.low])
        #expect(other.levelByRoom == ["kitchen": .high])
        settings.level = nil
        #expect(try stored()["level"] == nil)
        settings.levelSet = [.low, .high]
        #expect(try stored()["levelSet"] == .array([.string("high"), .string("low")]))  // a stable order
    }

    @Test("An untyped write of raw values reads back as the cases; an unknown one names where it is")
    func untypedRawValuesReadBack() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        settings["levels"] = ["low", "high"]
        #expect(settings.levels == [.low, .high])
        settings["levels"] = ["low", "middling"]
        #expect(settings.levels == [])
        guard case .invalidStoredEntry(let entry, let reason)? = settings.lastError else {
            Issue.record("expected invalidStoredEntry, got \(String(describing: settings.lastError))")
            return
        }
        #expect(entry == "levels")
        #expect(reason.contains("[1]"))
        #expect(!reason.contains("middling"))
    }

    @Test("Containers of a Codable raw-representable type still compile and store raw values")
    func codableRawValuesInsideContainers() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        settings.modes = [.loud]
        settings.mode = .quiet
        #expect(try stored()["modes"] == .array([.string("loud")]))
        #expect(try stored()["mode"] == .string("quiet"))
        #expect(CompletenessSettings(key: "settings", suite: suite).modes == [.loud])
    }

    @Test("A bridge of one's own chooses the stored form of a type that is neither Codable nor RawRepresentable")
    func bridgeChoosesTheStoredForm() throws {
        let settings = CompletenessSettings(key: "settings", suite: suite)
        #expect(settings.accent == CompletenessColor(red: 0, green: 122, blue: 255))
        settings.accent = CompletenessColor(red: 255, green: 16, blue: 1)
        #expect(try stored()["accent"] == .string("#FF1001"))
        #expect(CompletenessSettings(key: "settings", suite: suite).accent == CompletenessColor(red: 255, green: 16, blue: 1))
        settings["accent"] = "not a colour"
        #expect(settings.accent == CompletenessColor(red: 0, green: 122, blue: 255))
        #expect(settings.undecodableEntry == "accent")
    }

    @Test("PropertyListValue(encoding:) and decode(_:) are the stored form an @Entry of the type uses")
    func publicCodableConversion() throws {
        let frame = TypedFrame(x: 1, y: 2, width: 3, height: 4)
        let encoded = try #require(try PropertyListValue(encoding: frame))
        #expect(encoded == .dictionary(["x": .real(1), "y": .real(2), "width": .real(3), "height": .real(4)]))
        #expect(try encoded.decode(TypedFrame.self) == frame)
        #expect(try PropertyListValue(encoding: Optional<Int>.none) == nil)
        let settings = TypedSettings(suite: suite)
        settings.window = frame
        #expect(try stored()["window"] == encoded)
    }
}
