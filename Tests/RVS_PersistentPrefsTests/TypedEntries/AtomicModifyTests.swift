import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

struct TypedTransformFailed: Error, Equatable {}

@Suite("Atomic updates: modify")
struct AtomicModifyTests {
    @Test("modify(\"launchCount\") changes an entry from its stored value and returns the new value")
    func untypedModifyIncrements() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        var given: [String] = []
        let first = settings.modify("launchCount") { value in
            given.append(String(describing: value))
            return (value as? Int ?? 0) + 1
        }
        #expect(first as? Int == 1)
        #expect(given == ["nil"])
        settings.modify("launchCount") { ($0 as? Int ?? 0) + 1 }
        #expect(settings.lastError == nil)
        #expect(try fixture.stored()["launchCount"] == .integer(2))
        #expect(settings.launchCount == 2)
    }

    @Test("modify returning nil removes the entry; a value that is not a property-list value writes nothing")
    func untypedModifyRemovesAndValidates() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.name = "x"
        settings.launchCount = 3
        let removed = settings.modify("name") { _ in nil }
        #expect(removed == nil && settings.lastError == nil)
        #expect(try fixture.stored() == ["launchCount": .integer(3)])
        let before = fileBytes(fixture.path)
        settings.modify("launchCount") { _ in URL(string: "https://example.com")! }
        #expect(settings.baseClassOutcome == .valuesNotPlistCompatible(["launchCount"]))
        #expect(fileBytes(fixture.path) == before)
    }

    @Test("modify of a name not in keys is refused before the transform runs")
    func modifyOfUnknownNameIsRefused() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        var ran = false
        settings.modify("unknown") { _ in
            ran = true
            return 1
        }
        #expect(settings.baseClassOutcome == .incorrectKeys(["unknown"]))
        #expect(!ran)
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
    }

    @Test("A transform that throws writes nothing; its error is rethrown and kept in lastError")
    func throwingTransformWritesNothing() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.launchCount = 1
        let before = fileBytes(fixture.path)
        #expect(throws: TypedTransformFailed()) {
            try settings.modify("launchCount") { (_: Any?) throws(TypedTransformFailed) -> Any? in throw TypedTransformFailed() }
        }
        #expect(throws: TypedTransformFailed()) {
            try settings.modify(\.$launchCount) { (_: inout Int) throws(TypedTransformFailed) in throw TypedTransformFailed() }
        }
        guard case .unknownError(let error)? = settings.lastError else {
            Issue.record("lastError is \(String(describing: settings.lastError))")
            return
        }
        #expect(error is TypedTransformFailed)
        #expect(fileBytes(fixture.path) == before)
    }

    @Test("The typed form changes an entry in place from its stored value, and returns the new value")
    func typedModify() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        #expect(settings.modify(\.$launchCount) { $0 += 1 } == 1)
        #expect(settings.modify(\.$launchCount) { $0 += 1 } == 2)
        settings.modify(\.$window) { $0.width = 1024 }
        settings.modify(\.$recent) { $0.append("file.txt") }
        settings.modify(\.$appearance) { $0 = .dark }
        #expect(settings.lastError == nil)
        let stored = try fixture.stored()
        #expect(stored["launchCount"] == .integer(2))
        #expect(stored["window"]?.dictionaryValue?["width"] == .real(1024))
        #expect(stored["recent"] == .array([.string("file.txt")]))
        #expect(stored["appearance"] == .string("dark"))
    }

    @Test("The typed form sets an Optional entry to nil by removing it, and starts an undecodable value from the default")
    func typedModifyOptionalAndUndecodable() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.lastOpened = Date()
        settings.modify(\.$lastOpened) { $0 = nil }
        #expect(try fixture.stored()["lastOpened"] == nil)
        try fixture.seed(["launchCount": .string("many")])
        #expect(settings.modify(\.$launchCount) { $0 += 1 } == 1)
        #expect(settings.lastError == nil)
    }

    @Test("The typed form refuses a value it cannot encode, writing nothing")
    func typedModifyEncodingFailure() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.launchCount = 1
        let before = fileBytes(fixture.path)
        #expect(settings.modify(\.$fragile) { $0.breaks = true } == nil)
        #expect(settings.baseClassOutcome == .valuesNotPlistCompatible(["fragile"]))
        #expect(fileBytes(fixture.path) == before)
    }

    @Test("modify notifies observers once, with the values before and after")
    func modifyNotifiesOnce() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.launchCount = 4
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = settings.observe(\.launchCount, options: [.old, .new]) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
        }
        settings.modify(\.$launchCount) { $0 += 1 }
        settings.modify("launchCount") { ($0 as? Int ?? 0) + 1 }
        #expect(log.events == [
            ObservedNotification(isPrior: false, oldValue: 4, newValue: 5),
            ObservedNotification(isPrior: false, oldValue: 5, newValue: 6),
        ])
        withExtendedLifetime(token) {}
    }

    @Test("modify from several threads of one process keeps every increment")
    func modifyFromThreads() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        nonisolated(unsafe) let shared = settings
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<50 { shared.modify(\.$launchCount) { $0 += 1 } }
        }
        #expect(settings.launchCount == 200)
    }

    // (Scripts/soak.sh runs the long multi-process version.)
    @Test("8 processes making 100 atomic increments each of one entry end at 800", arguments: ["untyped", "typed"])
    func incrementsFromEightProcessesAreAllKept(form: String) async throws {
        try await onOwnThread {
            let directory = TemporaryDirectory()
            let workers = try (0..<8).map { _ in
                try ChildProcess.worker("increment", directory.path, "shared", "settings", "100", form)
            }
            for worker in workers {
                #expect(worker.readLine() == "ok", "worker failed: \(worker.readErrors())")
                #expect(worker.wait() == 0)
            }
            let domain = try FileDomainStorage(directory: directory.path, name: "shared")
            #expect(try domain.snapshot().contents["settings"]?.dictionaryValue?["launchCount"] == .integer(800))
        }
    }
}
