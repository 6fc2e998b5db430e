import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An object whose lifetime a test watches through a weak reference.
private final class CapturedByHandler {}

@Suite("Observation: tokens, and the lifetime of observed instances", .timeLimit(.minutes(1)))
struct ObservationLifetimeTests {
    @Test("invalidate() stops the notifications at once; calling it again is harmless")
    func invalidateStops() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = prefs.logLaunchCount([.prior, .new], into: log)
        prefs.launchCount = 1
        #expect(log.count == 2)
        token.invalidate()
        prefs.launchCount = 2
        prefs.values = ["launchCount": 3]
        prefs.clear()
        token.invalidate()
        #expect(log.count == 2)
        #expect(prefs.observers.registrationCounts.observers == 0)
    }

    @Test("Releasing the token stops the notifications")
    func releasingTheTokenStops() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let log = ObservationLog<ObservedNotification<Int>>()
        var token: PrefsObservation? = prefs.logLaunchCount([.new], into: log)
        prefs.launchCount = 1
        #expect(log.events == [ObservedNotification(isPrior: false, oldValue: nil, newValue: 1)])
        #expect(token != nil)
        token = nil
        prefs.launchCount = 2
        #expect(log.count == 1)
        #expect(prefs.observers.registrationCounts.observers == 0)
    }

    @Test("Invalidating or releasing a token lets go of the handler and of what it captured", arguments: [false, true])
    func stoppingReleasesTheHandler(release: Bool) {
        let prefs = ObservedPrefs(suite: observationSuite())
        weak var captured: CapturedByHandler?
        var token: PrefsObservation?
        do {
            let object = CapturedByHandler()
            captured = object
            token = prefs.observe(\.launchCount) { _, _ in withExtendedLifetime(object) {} }
        }
        #expect(captured != nil, "the running observation keeps its handler")
        if release { token = nil } else { token?.invalidate() }
        #expect(captured == nil)
        withExtendedLifetime(token) {}
    }

    @Test("An instance with live observers, live tokens and an unread changes sequence is freed when released, and its sequence ends")
    func observedInstanceIsFreed() async {
        weak var weakPrefs: ObservedPrefs?
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        var tokens: [PrefsObservation] = []
        var changes: AsyncStream<PrefsChange>?
        do {
            let prefs = ObservedPrefs(suite: observationSuite())
            weakPrefs = prefs
            tokens.append(prefs.logValues([.initial, .prior, .old, .new], into: log))
            tokens.append(prefs.observe(\.launchCount, options: [.old, .new]) { prefs, _ in _ = prefs.appearance })
            changes = prefs.changes
            prefs.launchCount = 1  // deliveries have run and are done with the instance
        }
        #expect(log.count == 3)
        #expect(weakPrefs == nil, "observers, tokens and streams do not keep the instance alive")
        tokens[0].invalidate()  // a token outliving its instance is harmless to invalidate
        tokens.removeAll()      // and to release
        #expect(await collectAll(changes!) == [["launchCount": .integer(1)]])
    }
}
