import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Writes that fail validation, or whose stored collection cannot be read (SPEC §3).
enum RejectedObservedWrite: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case valuesWithUnknownName = "prefs.values = [\"bogus\": 1]"
    case valuesNotPropertyList = "prefs.values = [\"launchCount\": NSNull()]"
    case subscriptUnknownName = "prefs[\"bogus\"] = 1"
    case subscriptNull = "prefs[\"launchCount\"] = NSNull()"
    case subscriptURL = "prefs[\"appearance\"] = URL(…)"
    case inPlaceUnknownName = "prefs.values[\"bogus\"] = 1"
    case storedNameNoLongerAllowed = "prefs.launchCount = 2 over a stored entry whose name is not in keys"
    case storedValueNotADictionary = "prefs.launchCount = 2 over a stored value that is not a dictionary"

    var testDescription: String { rawValue }

    var stored: PropertyListValue {
        switch self {
        case .storedNameNoLongerAllowed: return .dictionary(["launchCount": .integer(1), "legacy": .bool(true)])
        case .storedValueNotADictionary: return .string("not a collection")
        default: return .dictionary(["launchCount": .integer(1)])
        }
    }

    func perform(on prefs: ObservedPrefs) {
        switch self {
        case .valuesWithUnknownName: prefs.values = ["bogus": 1]
        case .valuesNotPropertyList: prefs.values = ["launchCount": NSNull()]
        case .subscriptUnknownName: prefs["bogus"] = 1
        case .subscriptNull: prefs["launchCount"] = NSNull()
        case .subscriptURL: prefs["appearance"] = URL(fileURLWithPath: "/tmp")
        case .inPlaceUnknownName: prefs.values["bogus"] = 1
        case .storedNameNoLongerAllowed, .storedValueNotADictionary: prefs.launchCount = 2
        }
    }

    func isExpected(_ error: PrefsError?) -> Bool {
        switch (self, error) {
        case (.valuesWithUnknownName, .incorrectKeys(["bogus"])),
             (.subscriptUnknownName, .incorrectKeys(["bogus"])),
             (.inPlaceUnknownName, .incorrectKeys(["bogus"])),
             (.storedNameNoLongerAllowed, .incorrectKeys(["legacy"])),
             (.valuesNotPropertyList, .valuesNotPlistCompatible(["launchCount"])),
             (.subscriptNull, .valuesNotPlistCompatible(["launchCount"])),
             (.subscriptURL, .valuesNotPlistCompatible(["appearance"])),
             (.storedValueNotADictionary, .invalidStoredValue("settings")):
            return true
        default:
            return false
        }
    }
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
          arguments: RejectedObservedWrite.allCases)
    func rejectedWriteDoesNotNotify(write: RejectedObservedWrite) async throws {
        let domain = InMemoryDomainStorage(contents: ["settings": write.stored])
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain))
        let values = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let launchCounts = ObservationLog<ObservedNotification<Int>>()
        let tokens = [
            prefs!.logValues([.prior, .old, .new], into: values),
            prefs!.logLaunchCount([.prior, .old, .new], into: launchCounts),
        ]
        let changes = prefs!.changes

        write.perform(on: prefs!)
        #expect(write.isExpected(prefs!.lastError), "got \(String(describing: prefs!.lastError))")
        #expect(try domain.snapshot().contents == ["settings": write.stored], "nothing was written")
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
