import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Registers an observer at the first moment one can exist: the initializer's first request for
/// the suite, which comes before its merge. No observer can be registered from outside any earlier.
final class SelfObservingPrefs: RVS_PersistentPrefs {
    let suite: DefaultsSuite
    let log: ObservationLog<ObservedNotification<[String: PropertyListValue]>>
    private(set) var token: PrefsObservation?

    init(suite: DefaultsSuite, log: ObservationLog<ObservedNotification<[String: PropertyListValue]>>, values: [String: Any]?) {
        self.suite = suite
        self.log = log
        super.init(key: "settings", values: values)
    }

    override var keys: [String] { ["launchCount", "appearance"] }

    override var userDefaults: DefaultsSuite? {
        if token == nil {
            let log = self.log
            token = observe(\.values, options: [.prior, .old, .new]) { _, change in
                log.append(ObservedNotification(isPrior: change.isPrior, oldValue: comparable(change.oldValue), newValue: comparable(change.newValue)))
            }
        }
        return suite
    }
}

@Suite("Observation: every successful write through the instance notifies", .timeLimit(.minutes(1)))
struct NotifyingWritesTests {
    @Test("The write notifies key-path observers once (after its .prior notification) and the changes sequence once", arguments: BaseClassWriteKind.allCases.filter { !$0.isInitializer })
    func successfulWriteNotifies(write: BaseClassWriteKind) async {
        let domain = InMemoryDomainStorage(contents: ["settings": .dictionary(BaseClassWriteKind.before)])
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain))
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs!.logValues([.prior, .old, .new], into: log)
        let changes = prefs!.changes

        write.perform(on: prefs!)
        #expect(prefs!.lastError == nil)
        #expect(log.events == [
            ObservedNotification(isPrior: true, oldValue: BaseClassWriteKind.before, newValue: nil),
            ObservedNotification(isPrior: false, oldValue: BaseClassWriteKind.before, newValue: write.after),
        ])
        prefs = nil  // ends the sequence, so that collecting it is bounded
        #expect(await collectAll(changes) == [write.after])
        token.invalidate()
    }

    @Test("Writing a value equal to the stored one is still a successful write, and notifies like any other")
    func unchangedWriteNotifies() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = prefs.logLaunchCount([.old, .new], into: log)
        prefs.launchCount = 1
        prefs["appearance"] = nil  // removing an absent entry
        #expect(log.events == [
            ObservedNotification(isPrior: false, oldValue: 1, newValue: 1),
            ObservedNotification(isPrior: false, oldValue: 1, newValue: 1),
        ])
        token.invalidate()
    }

    @Test("An initializer merge is a write through the instance: an observer that exists by then hears it")
    func initializerMergeNotifies() {
        let domain = InMemoryDomainStorage(contents: ["settings": .dictionary(["launchCount": .integer(1)])])
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let prefs = SelfObservingPrefs(suite: observationSuite(domain), log: log, values: ["appearance": "dark"])
        #expect(prefs.lastError == nil)
        #expect(prefs.token != nil)
        #expect(log.events == [
            ObservedNotification(isPrior: true, oldValue: ["launchCount": .integer(1)], newValue: nil),
            ObservedNotification(isPrior: false, oldValue: ["launchCount": .integer(1)], newValue: ["launchCount": .integer(1), "appearance": .string("dark")]),
        ])
    }

    @Test("An initializer given nil or [:] only loads, and notifies nobody", arguments: [false, true])
    func loadingInitializerDoesNotNotify(passNil: Bool) {
        let domain = InMemoryDomainStorage(contents: ["settings": .dictionary(["launchCount": .integer(1)])])
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let prefs = SelfObservingPrefs(suite: observationSuite(domain), log: log, values: passNil ? nil : [:])
        #expect(prefs.token != nil, "the observer existed during the initializer")
        #expect(log.events.isEmpty)
        #expect(prefs.values["launchCount"] as? Int == 1)
    }

    @Test("A rejected initializer merge (a name not in keys, a value not a property list) notifies nobody, not even .prior",
          arguments: ["incorrectKeys", "valuesNotPlistCompatible"])
    func rejectedInitializerMergeDoesNotNotify(rejection: String) {
        let domain = InMemoryDomainStorage(contents: ["settings": .dictionary(["launchCount": .integer(1)])])
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let values: [String: Any] = rejection == "incorrectKeys" ? ["bogus": 1] : ["launchCount": NSNull()]
        let prefs = SelfObservingPrefs(suite: observationSuite(domain), log: log, values: values)
        switch prefs.lastError {
        case .incorrectKeys(["bogus"]): #expect(rejection == "incorrectKeys")
        case .valuesNotPlistCompatible(["launchCount"]): #expect(rejection == "valuesNotPlistCompatible")
        default: Issue.record("unexpected outcome \(String(describing: prefs.lastError))")
        }
        #expect(prefs.token != nil)
        #expect(log.events.isEmpty)
        #expect(prefs.values["launchCount"] as? Int == 1)
    }

    @Test("An observer registered after the initializer is not told of its merge, except through .initial")
    func laterObserverIsNotToldOfTheMerge() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 4])
        let plain = ObservationLog<ObservedNotification<Int>>()
        let initial = ObservationLog<ObservedNotification<Int>>()
        let tokens = [prefs.logLaunchCount([.old, .new, .prior], into: plain), prefs.logLaunchCount([.initial, .new], into: initial)]
        #expect(plain.events.isEmpty)
        #expect(initial.events == [ObservedNotification(isPrior: false, oldValue: nil, newValue: 4)])
        tokens.forEach { $0.invalidate() }
    }
}
