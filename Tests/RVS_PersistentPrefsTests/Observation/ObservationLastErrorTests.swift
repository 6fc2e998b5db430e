import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Observation: lastError is not disturbed by the observation machinery's own reads", .timeLimit(.minutes(1)))
struct ObservationLastErrorTests {
    @Test(".initial reads the current value without replacing the outcome of the previous operation")
    func initialReadKeepsLastError() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 2])
        prefs["bogus"] = 1
        guard case .incorrectKeys(["bogus"]) = prefs.lastError else {
            Issue.record("unexpected outcome \(String(describing: prefs.lastError))")
            return
        }
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = prefs.logLaunchCount([.initial, .new], into: log)
        #expect(log.events == [ObservedNotification(isPrior: false, oldValue: nil, newValue: 2)], "the initial read happened")
        guard case .incorrectKeys(["bogus"]) = prefs.lastError else {
            Issue.record("observe replaced lastError with \(String(describing: prefs.lastError))")
            return
        }
        token.invalidate()
    }

    @Test("After a successful write, failing reads made for .old, .new and changes leave lastError nil")
    func notificationReadsKeepSuccess() async throws {
        // The argument domain shadows the collection with a value that is not a dictionary: every read
        // of `values` fails with invalidStoredValue, while writes to the persistent domain succeed.
        let domain = InMemoryDomainStorage()
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain, arguments: ["-settings", "shadowed"]))
        guard case .invalidStoredValue("settings") = prefs!.lastError else {
            Issue.record("the fixture's reads should fail, got \(String(describing: prefs!.lastError))")
            return
        }
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs!.logValues([.prior, .old, .new], into: log)
        let changes = prefs!.changes

        prefs!["launchCount"] = 1
        #expect(prefs!.lastError == nil, "the write succeeded, whatever the observers' reads found")
        #expect(try domain.snapshot().contents == ["settings": .dictionary(["launchCount": .integer(1)])])
        #expect(log.events == [
            ObservedNotification(isPrior: true, oldValue: [:], newValue: nil),
            ObservedNotification(isPrior: false, oldValue: [:], newValue: [:]),
        ], "the observers saw what a read returns")

        prefs!.values = ["launchCount": 2]
        #expect(prefs!.lastError == nil)
        prefs = nil
        #expect(await collectAll(changes) == [[:], [:]])
        token.invalidate()
    }

    @Test("A rejected write keeps its own error, though observers read the instance before it")
    func rejectedWriteKeepsItsError() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 2])
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = prefs.logLaunchCount([.prior, .old, .new], into: log)
        prefs["launchCount"] = NSNull()
        guard case .valuesNotPlistCompatible(["launchCount"]) = prefs.lastError else {
            Issue.record("unexpected outcome \(String(describing: prefs.lastError))")
            return
        }
        #expect(log.events.isEmpty)
        token.invalidate()
    }
}
