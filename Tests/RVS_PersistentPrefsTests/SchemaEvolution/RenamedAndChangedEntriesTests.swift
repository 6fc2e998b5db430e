import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// SPEC §9: entries renamed (`formerly:`) and entries whose type changed (`upgrading:`).

enum EvolvedAppearance: String, Codable, Sendable { case system, light, dark }

final class EvolvedSettings: RVS_PersistentPrefs {
    @Entry("volume", formerly: ["vol", "soundVolume"]) var volume: Float = 0.5
    @Entry("appearance", upgrading: { (old: String) in EvolvedAppearance(rawValue: old.lowercased()) ?? .system })
    var appearance = EvolvedAppearance.system
    /// Was a Bool "compact", is now a count of columns.
    @Entry("columns", formerly: ["compact"], upgrading: { (compact: Bool) in compact ? 1 : 3 }) var columns = 2
    @Entry("other") var other = 0
}

@Suite("Schema evolution: renamed entries and changed types (SPEC §9)")
struct RenamedAndChangedEntriesTests {
    let suite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])

    func seed(_ entries: [String: PropertyListValue]) throws {
        try suite.setValue(.dictionary(entries), forKey: "settings")
    }

    func stored() throws -> [String: PropertyListValue] {
        try suite.value(forKey: "settings")?.dictionaryValue ?? [:]
    }

    @Test("A renamed entry reads its former name when the current one is absent, and writes nothing by reading")
    func readsTheFormerName() throws {
        try seed(["vol": .float(0.25), "other": .integer(1)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        #expect(settings.volume == 0.25)
        #expect(settings.lastError == nil)
        #expect(try stored() == ["vol": .float(0.25), "other": .integer(1)])
        #expect(settings.$volume.formerNames == ["vol", "soundVolume"])
        #expect(settings.keys == ["appearance", "columns", "other", "volume"])  // former names are not listed
    }

    @Test("The current name wins over former ones, and the first former name over later ones")
    func currentNameWins() throws {
        try seed(["volume": .float(0.75), "vol": .float(0.25)])
        #expect(EvolvedSettings(key: "settings", suite: suite).volume == 0.75)
        try seed(["soundVolume": .float(0.1), "vol": .float(0.25)])
        #expect(EvolvedSettings(key: "settings", suite: suite).volume == 0.25)
    }

    @Test("The next write stores the current name and removes every former name in the same update")
    func writeMovesToTheCurrentName() throws {
        try seed(["vol": .float(0.25), "soundVolume": .float(0.1), "other": .integer(1)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        var versions: [[String: PropertyListValue]] = []
        let token = settings.observe(\.values, options: [.new]) { _, change in
            versions.append(PropertyListValue(change.newValue ?? [:])?.dictionaryValue ?? [:])
        }
        settings.volume = 0.9
        #expect(settings.lastError == nil)
        #expect(try stored() == ["volume": .float(0.9), "other": .integer(1)])
        #expect(versions == [["volume": .float(0.9), "other": .integer(1)]])  // one write, not two
        withExtendedLifetime(token) {}
    }

    @Test("A collection holding a former name can be written (the name is allowed), and modify moves it too")
    func formerNamesDoNotBlockWrites() throws {
        try seed(["vol": .float(0.25)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        settings.other = 2
        #expect(settings.lastError == nil)
        settings.modify(\.$volume) { $0 += 0.5 }
        #expect(try stored() == ["volume": .float(0.75), "other": .integer(2)])
    }

    @Test("reset removes the current and the former names, so the default shows")
    func resetRemovesFormerNames() throws {
        try seed(["vol": .float(0.25), "volume": .float(0.3)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        settings.reset(\.$volume)
        #expect(settings.volume == 0.5)
        #expect(try stored() == [:])
    }

    @Test("A stored value of the earlier type is upgraded when read, and nothing is written until the app writes it")
    func upgradesTheEarlierType() throws {
        try seed(["appearance": .string("Dark")])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        #expect(settings.appearance == .dark)
        #expect(settings.lastError == nil)
        #expect(try stored() == ["appearance": .string("Dark")])
        settings.appearance = settings.appearance
        #expect(try stored() == ["appearance": .string("dark")])
    }

    @Test("A value that is neither the current nor the earlier type reads as the default, naming the entry")
    func neitherTypeReadsAsDefault() throws {
        try seed(["appearance": .integer(4)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        #expect(settings.appearance == .system)
        #expect(settings.undecodableEntry == "appearance")
    }

    @Test("Renamed and retyped at once: the former name's value of the earlier type is upgraded")
    func renamedAndRetyped() throws {
        try seed(["compact": .bool(true)])
        let settings = EvolvedSettings(key: "settings", suite: suite)
        #expect(settings.columns == 1)
        settings.columns += 1
        #expect(try stored() == ["columns": .integer(2)])
    }
}
