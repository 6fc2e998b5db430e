import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Typed entries: stored data that does not decode")
struct EntryBadStoredDataTests {
    @Test("A stored value of the wrong shape reads as the default; lastError names the entry and says why")
    func wrongShapeReadsAsDefault() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["window": .string("800x600"), "launchCount": .integer(3)])
        let settings = fixture.settings()
        #expect(settings.window == TypedFrame())
        guard case .invalidStoredEntry(let entry, let reason)? = settings.lastError else {
            Issue.record("no invalidStoredEntry: \(String(describing: settings.lastError))")
            return
        }
        #expect(entry == "window")
        #expect(reason.contains("expected a dictionary, found a string"), "reason: \(reason)")
        #expect(!reason.contains("800x600"), "the reason quotes the stored value: \(reason)")
        #expect("\(settings.lastError!)".contains("'window'"))
        // The other entries read as usual, and clear the error.
        #expect(settings.launchCount == 3)
        #expect(settings.lastError == nil)
    }

    @Test("A wrong type deep inside a Codable value is reported with its path")
    func wrongTypeInsideIsReportedWithPath() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["window": .dictionary(["x": .real(0), "y": .real(0), "width": .string("wide"), "height": .real(1)])])
        let settings = fixture.settings()
        #expect(settings.window == TypedFrame())
        guard case .invalidStoredEntry("window", let reason)? = settings.lastError else {
            Issue.record("no invalidStoredEntry: \(String(describing: settings.lastError))")
            return
        }
        #expect(reason.contains("at width"), "reason: \(reason)")
        #expect(!reason.contains("wide"), "reason: \(reason)")
    }

    @Test("A missing key inside a Codable value is reported by name")
    func missingKeyIsReported() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["window": .dictionary(["x": .real(0)])])
        let settings = fixture.settings()
        #expect(settings.window == TypedFrame())
        guard case .invalidStoredEntry("window", let reason)? = settings.lastError else {
            Issue.record("no invalidStoredEntry: \(String(describing: settings.lastError))")
            return
        }
        #expect(reason.contains("'y'") || reason.contains("'width'") || reason.contains("'height'"), "reason: \(reason)")
    }

    @Test("A RawRepresentable whose stored raw value is no longer a case reads as the default, without quoting it")
    func rawValueThatIsNoLongerACase() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["appearance": .string("sepia"), "level": .integer(7)])
        let settings = fixture.settings()
        #expect(settings.appearance == .system)
        guard case .invalidStoredEntry("appearance", let reason)? = settings.lastError else {
            Issue.record("no invalidStoredEntry: \(String(describing: settings.lastError))")
            return
        }
        #expect(!reason.contains("sepia"), "the reason quotes the stored value: \(reason)")
        #expect(!"\(settings.lastError!)".contains("sepia"))
        #expect(settings.level == .medium)
        #expect(settings.undecodableEntry == "level")
    }

    @Test("Numbers that do not fit the entry's type read as the default")
    func numbersThatDoNotFit() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["small": .integer(300), "launchCount": .real(2.5), "enabled": .integer(1)])
        let settings = fixture.settings()
        #expect(settings.small == 0 && settings.undecodableEntry == "small")
        #expect(settings.launchCount == 0 && settings.undecodableEntry == "launchCount")
        #expect(settings.enabled == false && settings.undecodableEntry == "enabled")
    }

    @Test("Nothing is overwritten until the app writes the entry; then the write replaces it")
    func nothingIsOverwrittenUntilWritten() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["window": .string("800x600"), "name": .string("kept")])
        let before = fileBytes(fixture.path)
        let settings = fixture.settings()
        _ = settings.window
        settings.name = "kept"  // another entry written: the undecodable one stays as it is
        #expect(try fixture.stored()["window"] == .string("800x600"))
        settings.launchCount = 1
        #expect(try fixture.stored()["window"] == .string("800x600"))
        #expect(fileBytes(fixture.path) != before)
        settings.window = TypedFrame(width: 640)
        #expect(settings.lastError == nil)
        #expect(settings.window == TypedFrame(width: 640))
        #expect(settings.lastError == nil)
    }

    @Test("The throwing read reports the decoding error; an absent entry is its default")
    func throwingReadReportsTheDecodingError() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        #expect(try settings.value(of: \.$window) == TypedFrame())
        try fixture.seed(["window": .array([]), "appearance": .string("dark")])
        #expect(try settings.value(of: \.$appearance) == .dark)
        do {
            _ = try settings.value(of: \.$window)
            Issue.record("value(of:) did not throw")
        } catch .invalidStoredEntry(let entry, let reason) {
            #expect(entry == "window")
            #expect(reason.contains("expected a dictionary, found an array"), "reason: \(reason)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(settings.undecodableEntry == "window")
    }

    @Test("The throwing read reports a domain file that cannot be read")
    func throwingReadReportsUnreadableDomain() throws {
        let fixture = try TypedFixture()
        writeFile(fixture.path, Array("not a property list".utf8))
        let settings = fixture.settings()
        #expect(throws: PrefsError.self) { try settings.value(of: \.$launchCount) }
        #expect(settings.launchCount == 0)
        #expect(settings.baseClassOutcome == .domainUnreadable(path: fixture.path))
    }

    @Test("An in-place change of an undecodable entry starts from the default; one of an unreadable domain writes nothing")
    func inPlaceChangeOverBadData() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["window": .string("bad")])
        let settings = fixture.settings()
        settings.window.width = 300
        #expect(settings.lastError == nil)
        #expect(settings.window == TypedFrame(width: 300))

        writeFile(fixture.path, Array("garbage".utf8))
        settings.window.width = 400
        #expect(settings.baseClassOutcome == .domainUnreadable(path: fixture.path))
        #expect(fileBytes(fixture.path) == Array("garbage".utf8))
    }
}
