import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

extension TypedFrame {
    /// Runs `meanwhile` in the middle of an in-place change, then sets the width.
    mutating func resize(width: Double, meanwhile: () throws -> Void) rethrows {
        try meanwhile()
        self.width = width
    }
}

@Suite("Typed entries: writes")
struct EntryWriteTests {
    @Test("A typed write is validated like a subscript write: a stored name not in keys refuses it")
    func typedWritesAreValidated() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["stray": .integer(1)])
        let settings = fixture.settings()
        let before = fileBytes(fixture.path)
        settings.launchCount = 5
        #expect(settings.baseClassOutcome == .incorrectKeys(["stray"]))
        settings["launchCount"] = 5
        #expect(settings.baseClassOutcome == .incorrectKeys(["stray"]))
        settings.window.width = 10
        #expect(settings.baseClassOutcome == .incorrectKeys(["stray"]))
        #expect(fileBytes(fixture.path) == before)
        // Removing the stray entry clears the way, as for untyped writes.
        settings["stray"] = nil
        settings.launchCount = 5
        #expect(settings.lastError == nil && settings.launchCount == 5)
    }

    @Test("An encoding failure leaves storage unchanged and sets lastError naming the entry")
    func encodingFailureChangesNothing() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.fragile = TypedFragile(breaks: false)
        let before = BaseClassFileState(path: fixture.path)
        let log = ObservationLog<Int>()
        let token = settings.observe(\.launchCount, options: [.prior]) { _, _ in log.append(1) }
        settings.fragile = TypedFragile(breaks: true)
        #expect(settings.baseClassOutcome == .valuesNotPlistCompatible(["fragile"]))
        #expect(BaseClassFileState(path: fixture.path) == before)
        #expect(log.count == 0, "a refused write notified")
        settings.fragile.breaks = true
        #expect(settings.baseClassOutcome == .valuesNotPlistCompatible(["fragile"]))
        #expect(BaseClassFileState(path: fixture.path) == before)
        #expect(settings.fragile == TypedFragile(breaks: false))
        withExtendedLifetime(token) {}
    }

    @Test("An in-place change is one read-modify-write: one locked write, one notification")
    func inPlaceChangeIsOneUpdate() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.window = TypedFrame()
        let log = ObservationLog<ObservedNotification<TypedFrame>>()
        let token = settings.observe(\.window, options: [.old, .new]) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
        }
        fixture.forgetCalls()
        settings.window.width = 1024
        #expect(settings.lastError == nil)
        #expect(fixture.storageWrites() == ["flock", "rename"])
        #expect(log.events == [ObservedNotification(isPrior: false, oldValue: TypedFrame(), newValue: TypedFrame(width: 1024))])
        fixture.forgetCalls()
        settings.launchCount += 1
        #expect(fixture.storageWrites() == ["flock", "rename"])
        #expect(settings.launchCount == 1)
        withExtendedLifetime(token) {}
    }

    @Test("An in-place change updates only its entry: another process's changes to other entries meanwhile are kept")
    func inPlaceChangeKeepsOtherEntries() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.window = TypedFrame()
        try settings.window.resize(width: 640) {
            try fixture.seed(["window": .dictionary([:]), "name": .string("other process")])
        }
        #expect(settings.lastError == nil)
        let stored = try fixture.stored()
        #expect(stored["name"] == .string("other process"))
        #expect(settings.window == TypedFrame(width: 640))
    }

    @Test("Typed writes of every kind read back as written")
    func typedWritesRoundTrip() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let profile = TypedProfile(
            name: "Grace", tags: ["navy"], born: Date(timeIntervalSinceReferenceDate: -1_000_000.5), avatar: Data([0, 255]),
            homepage: URL(string: "https://example.com/grace")!, id: UUID(), nickname: "amazing", sizes: ["a": 1, "b": 2]
        )
        settings.profile = profile
        settings.volume = 0.3
        settings.small = -128
        settings.recent = []
        #expect(settings.lastError == nil)
        let other = fixture.settings()  // a second instance: nothing cached
        #expect(other.profile == profile)
        #expect(other.volume == 0.3)
        #expect(other.small == -128)
        #expect(other.recent == [])
    }

    @Test("Writes through an instance whose domain cannot be used report it and write nothing")
    func unusableDomain() {
        let settings = TypedSettings(suite: nil)
        settings.launchCount = 1
        #expect(settings.baseClassOutcome == .userDefaultsUnavailable)
        #expect(settings.launchCount == 0)
        #expect(settings.baseClassOutcome == .userDefaultsUnavailable)
    }
}
