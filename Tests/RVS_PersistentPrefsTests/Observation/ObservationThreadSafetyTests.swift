import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Runs `body(0)` … `body(count - 1)` each on a thread of its own, released together, and waits for all.
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            gate.wait()
            body(index)
            done.leave()
        }.start()
    }
    for _ in 0..<count { gate.signal() }
    done.wait()
}

@Suite("Observation: observers added and removed from any thread while writes happen on others", .timeLimit(.minutes(1)))
struct ObservationThreadSafetyTests {
    @Test("Threads adding and removing observers and change sequences while other threads write: no crash, and every write is counted once")
    func registrationDuringConcurrentWrites() {
        // Shared between threads the way the base class's documentation says: the instance is safe.
        nonisolated(unsafe) let prefs = ObservedPrefs(suite: observationSuite())
        let writers = 3
        let writesPerWriter = 1_000
        let churners = 2
        let roundsPerChurner = 500
        let steadyLog = ObservationLog<ObservedNotification<Int>>()
        let steady = prefs.logLaunchCount([.prior, .old, .new], into: steadyLog)
        let churnCalls = ObservationLog<Int>()

        onThreads(writers + churners) { thread in
            if thread < writers {
                for write in 0..<writesPerWriter {
                    if write.isMultiple(of: 3) {
                        prefs.values = ["launchCount": write, "appearance": "writer \(thread)"]
                    } else {
                        prefs.launchCount = write
                    }
                }
            } else {
                for round in 0..<roundsPerChurner {
                    let token = prefs.observe(\.values, options: [.prior, .old, .new]) { prefs, _ in
                        churnCalls.append(thread)
                        _ = prefs.appearance
                    }
                    switch round % 3 {
                    case 0:
                        token.invalidate()
                    case 1:
                        let changes = prefs.changes
                        withExtendedLifetime(changes) { token.invalidate() }
                    default:
                        withExtendedLifetime(token) {}  // released at the end of the round
                    }
                }
            }
        }

        #expect(prefs.lastError == nil)
        let events = steadyLog.events
        #expect(events.count == 2 * writers * writesPerWriter, "a prior and an after-notification for every write")
        // The instance's operations are serialized, notifications included: each write's prior and after
        // notifications are adjacent and agree on the old value, and each write's old value is the
        // previous write's new value.
        var previousNew = 0
        var consistent = true
        for index in stride(from: 0, to: events.count - 1, by: 2) {
            let (prior, after) = (events[index], events[index + 1])
            if !(prior.isPrior && !after.isPrior && prior.oldValue == previousNew && after.oldValue == previousNew) {
                consistent = false
                Issue.record("write \(index / 2): prior \(prior), after \(after), previous new value \(previousNew)")
                break
            }
            previousNew = after.newValue ?? -2
        }
        #expect(consistent)
        #expect(prefs.observers.registrationCounts.observers == 1, "only the steady observer is left")
        #expect(prefs.observers.registrationCounts.streams == 0)

        let callsBefore = churnCalls.count
        prefs.launchCount = -1
        #expect(churnCalls.count == callsBefore, "no removed observer is called again")
        #expect(steadyLog.events.last == ObservedNotification(isPrior: false, oldValue: previousNew, newValue: -1))
        steady.invalidate()
    }

    @Test("One token invalidated from several threads at once, and while writes deliver to it")
    func concurrentInvalidationOfOneToken() {
        nonisolated(unsafe) let prefs = ObservedPrefs(suite: observationSuite())
        let calls = ObservationLog<Int?>()
        for _ in 0..<200 {
            let token = prefs.observe(\.launchCount, options: [.new]) { _, change in calls.append(change.newValue) }
            onThreads(4) { thread in
                if thread == 0 { prefs.launchCount += 1 } else { token.invalidate() }
            }
            #expect(prefs.observers.registrationCounts.observers == 0)
        }
        let callsBefore = calls.count
        prefs.launchCount = 0
        #expect(calls.count == callsBefore)
        #expect(prefs.lastError == nil)
    }
}
