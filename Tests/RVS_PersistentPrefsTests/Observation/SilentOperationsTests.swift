import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A write of the catalogue that fails validation, or whose stored collection cannot be read
/// (SPEC §3), with the collection stored before it and the error it must report. A table of its own
/// rather than properties of `BaseClassWriteKind`: each row pairs a write with entries and a stored
/// state of its own, and a kind can be rejected in several ways.
struct RejectedObservedWrite: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let write: BaseClassWriteKind
    /// The entries the write is given; nil for the write's own. A function, because the values are not Sendable.
    var entries: @Sendable () -> [String: Any]? = { nil }
    var stored: PropertyListValue = .dictionary(["launchCount": .integer(1)])
    let expected: BaseClassOutcome

    static let all: [RejectedObservedWrite] = [
        .init(testDescription: #"prefs.values = ["bogus": 1]"#, write: .assignValues,
              entries: { ["bogus": 1] }, expected: .incorrectKeys(["bogus"])),
        .init(testDescription: #"prefs.values = ["launchCount": NSNull()]"#, write: .assignValues,
              entries: { ["launchCount": NSNull()] }, expected: .valuesNotPlistCompatible(["launchCount"])),
        .init(testDescription: #"prefs["bogus"] = 1"#, write: .subscriptSet,
              entries: { ["bogus": 1] }, expected: .incorrectKeys(["bogus"])),
        .init(testDescription: #"prefs["launchCount"] = NSNull()"#, write: .subscriptSet,
              entries: { ["launchCount": NSNull()] }, expected: .valuesNotPlistCompatible(["launchCount"])),
        .init(testDescription: #"prefs["appearance"] = URL(…)"#, write: .subscriptSet,
              entries: { ["appearance": URL(fileURLWithPath: "/tmp")] }, expected: .valuesNotPlistCompatible(["appearance"])),
        .init(testDescription: #"prefs.values["bogus"] = 1"#, write: .inPlaceMutation,
              entries: { ["bogus": 1] }, expected: .incorrectKeys(["bogus"])),
        .init(testDescription: #"prefs.appearance = "dark" over a stored entry whose name is not in keys"#, write: .typedProperty,
              stored: .dictionary(["launchCount": .integer(1), "legacy": .bool(true)]), expected: .incorrectKeys(["legacy"])),
        .init(testDescription: #"prefs.appearance = "dark" over a stored value that is not a dictionary"#, write: .typedProperty,
              stored: .string("not a collection"), expected: .invalidStoredValue(key: "settings")),
    ]
}

@Suite("Observation: what never notifies", .timeLimit(.minutes(1)))
struct SilentOperationsTests {
    @Test("Reads and flush() notify nobody", arguments: [false, true])
    func readsDoNotNotify(withPriorOptions: Bool) async {
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs!.logValues(withPriorOptions ? [.prior, .old, .new] : [], into: log)
        let changes = prefs!.changes

        _ = prefs!.values
        _ = prefs!["launchCount"]
        _ = prefs!.launchCount
        _ = prefs!.appearance
        _ = prefs!.count
        _ = prefs!.key
        _ = prefs!.lastError
        prefs!.flush()
        #expect(log.events.isEmpty)
        prefs = nil
        #expect(await collectAll(changes).isEmpty)
        token.invalidate()
    }

    @Test("A rejected or aborted write notifies nobody: no .prior, no after-notification, no element of changes",
          arguments: RejectedObservedWrite.all)
    func rejectedWriteDoesNotNotify(rejected: RejectedObservedWrite) async throws {
        let domain = InMemoryDomainStorage(contents: ["settings": rejected.stored])
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain))
        let values = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let launchCounts = ObservationLog<ObservedNotification<Int>>()
        let tokens = [
            prefs!.logValues([.prior, .old, .new], into: values),
            prefs!.logLaunchCount([.prior, .old, .new], into: launchCounts),
        ]
        let changes = prefs!.changes

        rejected.write.perform(rejected.entries(), on: prefs!)
        #expect(prefs!.baseClassOutcome == rejected.expected)
        #expect(try domain.snapshot().contents == ["settings": rejected.stored], "nothing was written")
        #expect(values.events.isEmpty)
        #expect(launchCounts.events.isEmpty)
        prefs = nil
        #expect(await collectAll(changes).isEmpty)
        tokens.forEach { $0.invalidate() }
    }

    @Test("A write that fails because the instance has no suite notifies nobody")
    func failedWriteDoesNotNotify() async {
        var prefs: ObservedPrefs? = ObservedPrefs(suite: nil)
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs!.logValues([.prior, .old, .new], into: log)
        let changes = prefs!.changes
        prefs!.launchCount = 1
        prefs!.values = ["launchCount": 2]
        prefs!.clear()
        guard case .userDefaultsUnavailable = prefs!.lastError else {
            Issue.record("unexpected outcome \(String(describing: prefs!.lastError))")
            return
        }
        #expect(log.events.isEmpty)
        prefs = nil
        #expect(await collectAll(changes).isEmpty)
        token.invalidate()
    }

    @Test("Writes made through another instance over the same storage notify nobody here, though reads here see them",
          arguments: ["in-memory domain", "file domain"])
    func otherInstancesWritesDoNotNotify(storage: String) async throws {
        let directory = TemporaryDirectory()
        let (domainHere, domainThere): (any DomainStorage, any DomainStorage)
        if storage == "file domain" {
            domainHere = try FileDomainStorage(directory: directory.path, name: "observed")
            domainThere = try FileDomainStorage(directory: directory.path, name: "observed")
        } else {
            let shared = InMemoryDomainStorage()
            (domainHere, domainThere) = (shared, shared)
        }
        var here: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domainHere))
        let there = ObservedPrefs(suite: observationSuite(domainThere))
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = here!.logValues([.prior, .old, .new], into: log)
        let changes = here!.changes
        let thereLog = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let thereToken = there.logValues([.new], into: thereLog)

        there.launchCount = 1
        #expect(here!.launchCount == 1, "the write reached this instance's reads")
        there.values = ["appearance": "dark"]
        #expect(here!.values["appearance"] as? String == "dark")
        here!.flush()
        there.clear()
        #expect(here!.count == 0)
        #expect(there.lastError == nil)
        #expect(thereLog.count == 3, "the writing instance's own observer heard its writes")
        #expect(log.events.isEmpty)

        here!.launchCount = 9  // this instance's own write still notifies
        #expect(log.count == 2)
        here = nil
        #expect(await collectAll(changes) == [["launchCount": .integer(9)]])
        token.invalidate()
        thereToken.invalidate()
    }

    @Test("Writes made by another process to the same domain file notify nobody here, though reads here see them")
    func otherProcessesWritesDoNotNotify() async throws {
        let directory = TemporaryDirectory()
        let domain = try FileDomainStorage(directory: directory.path, name: "observed")
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain))
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs!.logValues([.prior, .old, .new], into: log)
        let changes = prefs!.changes

        // The worker assigns values = ["round": n, "writer": "settings"] five times under our storage key.
        let worker = try ChildProcess.worker("rewrite-collection", directory.path, "observed", "settings", "5")
        #expect(worker.readLine() == "ok", "worker failed: \(worker.readErrors())")
        #expect(worker.wait() == 0)
        #expect(prefs!.values["round"] as? Int == 4, "the other process's writes reached this instance's reads")
        prefs!.flush()
        #expect(log.events.isEmpty)

        prefs!["appearance"] = "dark"  // this instance's own write still notifies
        #expect(log.count == 2)
        prefs = nil
        #expect(await collectAll(changes) == [["round": .integer(4), "writer": .string("settings"), "appearance": .string("dark")]])
        token.invalidate()
    }
}
