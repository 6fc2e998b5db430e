import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Typed entries: defaults are fallbacks")
struct EntryDefaultsTests {
    @Test("An absent entry reads as its default and nothing is written, not even the domain file")
    func absentEntryReadsAsDefaultWithoutWriting() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        #expect(settings.launchCount == 0)
        #expect(settings.appearance == .system)
        #expect(settings.window == TypedFrame())
        #expect(settings.volume == 0.5)
        #expect(settings.lastOpened == nil)
        #expect(settings.level == .medium)
        #expect(settings.lastError == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
    }

    @Test("Reading defaults beside stored entries writes none of them")
    func readingDefaultsWritesNothing() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.name = "stored"
        let before = fileBytes(fixture.path)
        _ = (settings.launchCount, settings.appearance, settings.window, settings.profile, settings.recent)
        #expect(fileBytes(fixture.path) == before)
        #expect(try fixture.stored() == ["name": .string("stored")])
    }

    @Test("Setting an entry to its default stores it")
    func settingTheDefaultStoresIt() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.launchCount = 0
        settings.appearance = .system
        settings.window = TypedFrame()
        #expect(settings.lastError == nil)
        let stored = try fixture.stored()
        #expect(stored["launchCount"] == .integer(0))
        #expect(stored["appearance"] == .string("system"))
        #expect(stored["window"] == .dictionary(["x": .real(0), "y": .real(0), "width": .real(800), "height": .real(600)]))
    }

    @Test("Setting an Optional entry to nil removes it; setting a value stores it")
    func nilRemovesAnOptionalEntry() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let date = Date(timeIntervalSinceReferenceDate: 800_000_000.25)
        settings.lastOpened = date
        #expect(try fixture.stored()["lastOpened"] == .date(date))
        #expect(settings.lastOpened == date)
        settings.lastOpened = nil
        #expect(settings.lastError == nil)
        #expect(try fixture.stored()["lastOpened"] == nil)
        #expect(settings.lastOpened == nil)
    }

    @Test("A removed entry reads as its default again")
    func removedEntryReadsAsDefault() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.appearance = .dark
        settings["appearance"] = nil
        #expect(settings.appearance == .system)
        #expect(settings.lastError == nil)
    }

    @Test("The registration domain's collection supplies values before anything is stored")
    func registeredCollectionIsRead() throws {
        let fixture = try TypedFixture()
        fixture.suite.register(propertyListDefaults: ["settings": .dictionary(["launchCount": .integer(9), "appearance": .string("light")])])
        let settings = fixture.settings()
        #expect(settings.launchCount == 9 && settings.appearance == .light)
        settings.window.width = 1000
        // The first write starts from the registered collection, as a subscript write does.
        let stored = try fixture.stored()
        #expect(stored["launchCount"] == .integer(9))
        #expect(stored["window"]?.dictionaryValue?["width"] == .real(1000))
    }
}
