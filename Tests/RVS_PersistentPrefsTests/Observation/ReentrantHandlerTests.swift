import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A token a handler can reach before `observe` has returned it.
private final class TokenBox {
    var token: PrefsObservation?
}

@Suite("Observation: handlers that read, write, observe and invalidate", .timeLimit(.minutes(1)))
struct ReentrantHandlerTests {
    @Test("A handler may read the instance: the prior handler sees the old state, the after handler the new one, lastError included")
    func handlerReadsTheInstance() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        let seen = ObservationLog<(Bool, [String: PropertyListValue]?, Int, Int, Bool)>()
        let token = prefs.observe(\.appearance, options: [.prior]) { prefs, change in
            seen.append((change.isPrior, comparable(prefs.values), prefs.launchCount, prefs.count, prefs.lastError == nil))
        }
        prefs["appearance"] = "dark"
        let events = seen.events
        #expect(events.map(\.0) == [true, false])
        #expect(events.map(\.1) == [["launchCount": .integer(1)], ["launchCount": .integer(1), "appearance": .string("dark")]])
        #expect(events.map(\.2) == [1, 1])
        #expect(events.map(\.3) == [1, 2])
        #expect(events.map(\.4) == [true, true])
        #expect(prefs.lastError == nil)
        token.invalidate()
    }

    @Test("A handler may write to the instance: the nested write notifies again, without deadlock, and each write notifies every observer once")
    func nestedWriteNotifiesAgain() async {
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite())
        let writer = ObservationLog<ObservedNotification<Int>>()
        let other = ObservationLog<ObservedNotification<Int>>()
        // The first observer counts launchCount up to 3 from inside its handler: writes 1, 2, 3 all notify.
        let writing = prefs!.observe(\.launchCount, options: [.old, .new]) { prefs, change in
            writer.append(ObservedNotification(isPrior: false, oldValue: change.oldValue, newValue: change.newValue))
            if let new = change.newValue, new < 3 { prefs.launchCount = new + 1 }
        }
        let watching = prefs!.logLaunchCount([.new], into: other)
        let changes = prefs!.changes

        prefs!.launchCount = 1
        #expect(prefs!.lastError == nil)
        #expect(prefs!.launchCount == 3)
        #expect(writer.events == [
            ObservedNotification(isPrior: false, oldValue: 0, newValue: 1),
            ObservedNotification(isPrior: false, oldValue: 1, newValue: 2),
            ObservedNotification(isPrior: false, oldValue: 2, newValue: 3),
        ])
        // The second observer hears each of the three writes once; its last notification carries the final value.
        #expect(other.count == 3)
        #expect(other.events.last?.newValue == 3)
        prefs = nil
        let published = await collectAll(changes)
        #expect(published.count == 3, "one element per successful write, nested ones included")
        #expect(published.last == ["launchCount": .integer(3)])
        writing.invalidate()
        watching.invalidate()
    }

    @Test("A write from a .prior handler happens before the outer write, and both notify")
    func writeFromPriorHandler() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let log = ObservationLog<ObservedNotification<String>>()
        let nestedWrites = ObservationLog<Int>()
        let token = prefs.observe(\.appearance, options: [.prior, .new]) { prefs, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: nil, newValue: change.newValue))
            if change.isPrior && nestedWrites.count == 0 {
                nestedWrites.append(1)
                prefs.launchCount = 1
            }
        }
        prefs.appearance = "dark"
        #expect(prefs.lastError == nil)
        #expect(comparable(prefs.values) == ["launchCount": .integer(1), "appearance": .string("dark")])
        #expect(log.events == [
            ObservedNotification(isPrior: true, oldValue: nil, newValue: nil),   // before appearance = dark
            ObservedNotification(isPrior: true, oldValue: nil, newValue: nil),   // before the nested launchCount = 1
            ObservedNotification(isPrior: false, oldValue: nil, newValue: "system"),  // after launchCount = 1
            ObservedNotification(isPrior: false, oldValue: nil, newValue: "dark"),    // after appearance = dark
        ])
        token.invalidate()
    }

    @Test("A handler may invalidate its own token: it is not called again, not even for the after-notification of the same write")
    func handlerInvalidatesItsOwnToken() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let afterOnly = ObservationLog<Bool>()
        let afterBox = TokenBox()
        afterBox.token = prefs.observe(\.launchCount) { _, change in
            afterOnly.append(change.isPrior)
            afterBox.token?.invalidate()
        }
        let fromPrior = ObservationLog<Bool>()
        let priorBox = TokenBox()
        priorBox.token = prefs.observe(\.launchCount, options: [.prior]) { _, change in
            fromPrior.append(change.isPrior)
            priorBox.token?.invalidate()
        }
        prefs.launchCount = 1
        prefs.launchCount = 2
        #expect(afterOnly.events == [false])
        #expect(fromPrior.events == [true])
        #expect(prefs.observers.registrationCounts.observers == 0)
    }

    @Test("A handler may invalidate another token: that observer is not called for the same write, nor later")
    func handlerInvalidatesAnotherToken() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let box = TokenBox()
        let victim = ObservationLog<Bool>()
        let killer = prefs.observe(\.values) { _, _ in box.token?.invalidate() }
        box.token = prefs.observe(\.launchCount, options: [.new]) { _, change in victim.append(change.isPrior) }
        prefs.launchCount = 1
        prefs.launchCount = 2
        #expect(victim.events.isEmpty)

        // Invalidated between the .prior and the after-notification of one write (by a later observer's
        // prior handler): its own prior was delivered, its after-notification is not.
        let priorBox = TokenBox()
        let second = ObservationLog<Bool>()
        priorBox.token = prefs.observe(\.launchCount, options: [.prior]) { _, change in second.append(change.isPrior) }
        let priorKiller = prefs.observe(\.values, options: [.prior]) { _, change in if change.isPrior { priorBox.token?.invalidate() } }
        prefs.launchCount = 3
        #expect(second.events == [true])
        priorKiller.invalidate()

        // Invalidated by an earlier observer's prior handler: not even its own prior is delivered.
        let thirdBox = TokenBox()
        let third = ObservationLog<Bool>()
        let earlyKiller = prefs.observe(\.values, options: [.prior]) { _, change in if change.isPrior { thirdBox.token?.invalidate() } }
        thirdBox.token = prefs.observe(\.launchCount, options: [.prior]) { _, change in third.append(change.isPrior) }
        prefs.launchCount = 4
        #expect(third.events.isEmpty)
        killer.invalidate()
        earlyKiller.invalidate()
    }

    @Test("A handler may add an observer: the new one hears the next write, not the one being delivered")
    func handlerAddsAnObserver() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let added = ObservationLog<Int?>()
        let box = TokenBox()
        let adder = prefs.observe(\.launchCount) { prefs, _ in
            if box.token == nil {
                box.token = prefs.observe(\.launchCount, options: [.new]) { _, change in added.append(change.newValue) }
            }
        }
        prefs.launchCount = 1
        #expect(added.events.isEmpty)
        prefs.launchCount = 2
        #expect(added.events == [2])
        adder.invalidate()
        box.token?.invalidate()
    }
}
