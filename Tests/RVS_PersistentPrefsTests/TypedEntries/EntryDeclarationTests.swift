import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Two entries under one name: a programming error.
final class TypedDuplicateSettings: RVS_PersistentPrefs {
    @Entry("theme") var colour = 0
    @Entry("theme") var palette = "dark"
    override var userDefaults: DefaultsSuite? { DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []) }
}

@Suite("Typed entries are declared once")
struct EntryDeclarationTests {
    @Test("keys lists every @Entry name, sorted, without an override")
    func keysListsEveryEntryName() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        #expect(settings.keys == [
            "appearance", "blob", "enabled", "fragile", "homepage", "identifier", "lastOpened", "launchCount", "level",
            "name", "profile", "ratio", "recent", "small", "volume", "window",
        ])
    }

    @Test("A subclass of a subclass lists its superclass's entries with its own")
    func inheritedEntriesAreListed() {
        let settings = TypedDerivedSettings(suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []))
        #expect(settings.keys == ["inherited", "own"])
        settings.inherited = 2
        settings.own = "y"
        #expect(settings.lastError == nil)
        #expect(settings.inherited == 2 && settings.own == "y")
    }

    @Test("An override of keys adds untyped names, and every @Entry name stays allowed")
    func overridingKeysAddsUntypedNames() throws {
        let fixture = try TypedFixture()
        let settings = TypedMixedSettings(suite: fixture.suite)
        settings.legacyTheme = "blue"
        #expect(settings.lastError == nil)
        settings.launchCount = 3
        #expect(settings.lastError == nil)
        settings.appearance = .light
        #expect(settings.lastError == nil)
        settings.values = ["legacyTheme": "red", "launchCount": 4, "appearance": "dark"]
        #expect(settings.lastError == nil)
        #expect(settings.legacyTheme == "red" && settings.launchCount == 4 && settings.appearance == .dark)
        settings["unknown"] = 1
        #expect(settings.baseClassOutcome == .incorrectKeys(["unknown"]))
        settings.values = ["launchCount": 5, "stray": 1]
        #expect(settings.baseClassOutcome == .incorrectKeys(["stray"]))
        #expect(settings.launchCount == 4)
    }

    @Test("The subscript and values work beside typed entries, on the same stored entries")
    func subscriptAndValuesWorkBesideTypedEntries() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings["launchCount"] = 7
        #expect(settings.launchCount == 7)
        settings.launchCount = 8
        #expect(settings["launchCount"] as? Int == 8)
        settings.values["appearance"] = "light"
        #expect(settings.appearance == .light)
        #expect(settings.values.keys.sorted() == ["appearance", "launchCount"])
        #expect(settings.count == 2)
    }

    @Test("@Entry in a subclass means the class's own Entry, even with another Entry type in scope")
    func nestedEntryWinsOverAnotherModulesEntry() throws {
        // The test module declares a top-level `Entry` (as SwiftUI does); TypedSettings still compiles with
        // the class's property wrapper, and the other type is still usable by its name.
        let other = Entry(unrelated: 1)
        #expect(other.unrelated == 1)
        let fixture = try TypedFixture()
        let projected: RVS_PersistentPrefs.Entry<Int> = fixture.settings().$launchCount
        #expect(projected.name == "launchCount" && projected.defaultValue == 0)
    }

    @Test("Two @Entry properties with one entry name stop the program with a message naming both")
    func duplicateEntryNamesAreAProgrammingError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TypedDuplicateSettings(key: "duplicates").keys
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("\"theme\""), "message: \(message)")
        #expect(message.contains("`colour`") && message.contains("`palette`"), "message: \(message)")
        #expect(message.contains("TypedDuplicateSettings"), "message: \(message)")
    }
}
