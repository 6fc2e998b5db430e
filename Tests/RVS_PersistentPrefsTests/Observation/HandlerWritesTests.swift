import Foundation
import Observation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Writes made inside a handler are told after it returns; withoutNotifying tells nobody here", .timeLimit(.minutes(2)))
struct HandlerWritesTests {
    let directory = TemporaryDirectory()

    @Test("A handler that writes value + 1 until 20,000 finishes, each write told once, in order, without re-entering it, on a stack that does not grow")
    func handlerCountingToTwentyThousandFinishes() async {
        // In a child process: a re-entrant delivery overflows the stack and would take the test run down.
        // `deepest == 1` proves no handler ran inside another; the handler's own stack address staying put proves
        // that nothing between the calls grows the stack either (a delivery that recursed once each handler
        // returned), so what holds for 20,000 holds for the docs' 100,000. (100,000 took the child 4 s of CPU in a
        // debug build, and it got so little of the machine beside the other tests that it was the last to end.)
        await #expect(processExitsWith: .success) {
            let prefs = ObservedPrefs(suite: observationSuite())
            var calls = 0
            var depth = 0
            var deepest = 0
            var inOrder = true
            var stack: (lowest: UInt, highest: UInt) = (.max, 0)
            let token = prefs.observe(\.launchCount, options: [.old, .new]) { prefs, change in
                var marker = 0
                let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
                stack = (min(stack.lowest, address), max(stack.highest, address))
                depth += 1
                deepest = max(deepest, depth)
                calls += 1
                if change.oldValue != (change.newValue ?? 0) - 1 { inOrder = false }
                if let new = change.newValue, new < 20_000 { prefs.launchCount = new + 1 }
                depth -= 1
            }
            prefs.launchCount = 1
            withExtendedLifetime(token) {}
            // 20,000 calls a few hundred bytes apart would spread over megabytes; the same frame spreads over none.
            let spread = stack.highest - stack.lowest
            guard prefs.launchCount == 20_000, calls == 20_000, deepest == 1, inOrder, spread < 65_536, prefs.lastError == nil else {
                print("launchCount \(prefs.launchCount), calls \(calls), deepest \(deepest), in order \(inOrder), stack spread \(spread) bytes")
                exit(1)
            }
        }
    }

    @Test("A write inside a handler is told to the remaining observers of the change being delivered first, then to every observer")
    func nestedWriteIsToldAfterTheHandler() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let order = ObservationLog<String>()
        let first = prefs.observe(\.launchCount, options: [.new]) { prefs, change in
            order.append("first begins \(change.newValue ?? -1)")
            if change.newValue == 1 { prefs.launchCount = 2 }
            order.append("first ends \(change.newValue ?? -1)")
        }
        let second = prefs.observe(\.launchCount, options: [.new]) { _, change in order.append("second \(change.newValue ?? -1)") }
        prefs.launchCount = 1
        #expect(order.events == ["first begins 1", "first ends 1", "second 1", "first begins 2", "first ends 2", "second 2"])
        first.invalidate()
        second.invalidate()
    }

    @Test("withoutNotifying: writes inside tell none of this instance's observers, streams or Swift Observation; another watching instance hears them")
    func withoutNotifyingTellsNobodyHere() async throws {
        let suite = try directory.fileSuite("shared")
        var prefs: ObservedPrefs? = ObservedPrefs(suite: suite)
        let log = ObservationLog<Int?>()
        let token = prefs!.observe(\.launchCount, options: [.new]) { _, change in log.append(change.newValue) }
        let changes = prefs!.changes
        let tracked = ObservationLog<Int>()
        withObservationTracking { _ = prefs!.launchCount } onChange: { tracked.append(1) }
        let other = WatchedPrefs(suite: try directory.fileSuite("shared"))
        let heard = PairLog()
        other.watchesExternalChanges = true
        let otherToken = other.observe(\.values, options: [.new]) { _, change in
            heard.append(old: nil, new: (change.newValue?["launchCount"] as? Int))
        }

        let returned = prefs!.withoutNotifying { () -> Int in
            prefs!.launchCount = 7
            prefs!["appearance"] = "dark"
            return 42
        }
        #expect(returned == 42)
        #expect(prefs!.lastError == nil)
        #expect(prefs!.launchCount == 7)
        #expect(heard.waitForNew(7), "another instance hears the silent writes")
        #expect(log.events.isEmpty)
        #expect(tracked.count == 0)
        prefs!.launchCount = 8  // told as usual once outside
        #expect(log.events == [8])
        prefs = nil
        #expect(await collectAll(changes) == [["launchCount": .integer(8), "appearance": .string("dark")]])
        token.invalidate()
        otherToken.invalidate()
    }

    @Test("withoutNotifying on a watching instance: its own silent write is not told later as a change made elsewhere")
    func silentWriteIsNotHeardAsExternal() throws {
        let prefs = WatchedPrefs(suite: try directory.fileSuite("shared"))
        prefs.watchesExternalChanges = true
        let log = PairLog()
        let token = prefs.observe(\.counter, options: [.new]) { _, change in log.append(old: nil, new: change.newValue) }
        let before = prefs.externalChanges.deliveriesCompleted
        prefs.withoutNotifying { prefs.counter = 5 }
        // The write's own event is delivered, and found to be what the instance already recorded.
        #expect(prefs.externalChanges.waitForDeliveries(atLeast: before + 1))
        #expect(log.all.isEmpty)
        WatchedPrefs(suite: try directory.fileSuite("shared")).counter = 6
        #expect(log.waitForNew(6))
        #expect(log.all.map(\.new) == [6])
        token.invalidate()
    }
}
