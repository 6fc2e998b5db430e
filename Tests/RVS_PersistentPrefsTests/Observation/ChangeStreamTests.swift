import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Observation: the changes async sequence", .timeLimit(.minutes(1)))
struct ChangeStreamTests {
    @Test("for await over changes gets one element per successful write, and none for reads, rejected writes, flush() or another instance's writes")
    func oneElementPerSuccessfulWrite() async {
        let domain = InMemoryDomainStorage()
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(domain))
        let other = ObservedPrefs(suite: observationSuite(domain))
        let changes = prefs!.changes
        let reader = Task {
            var received: [PrefsChange] = []
            for await change in changes { received.append(change) }
            return received
        }

        prefs!.launchCount = 1
        _ = prefs!.values
        prefs!["bogus"] = 1
        prefs!.values = ["appearance": NSNull()]
        prefs!["launchCount"] = NSNull()
        prefs!.flush()
        other.launchCount = 5
        prefs!.values = ["appearance": "dark"]
        prefs!["launchCount"] = 2
        prefs!.clear()
        prefs = nil

        let received = await result(of: reader)
        #expect(received.map(\.collection) == [
            ["launchCount": .integer(1)],
            ["appearance": .string("dark")],
            ["appearance": .string("dark"), "launchCount": .integer(2)],
            [:],
        ])
        #expect(received.first?.values["launchCount"] as? Int == 1, "values are native Swift values")
        #expect(received[1].values["appearance"] as? String == "dark")
    }

    @Test("A sequence begins with the next write, and every sequence gets every change")
    func everySequenceGetsEveryChangeFromItsStart() async {
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        prefs!.launchCount = 2
        let first = prefs!.changes
        prefs!.launchCount = 3
        let second = prefs!.changes
        prefs!.launchCount = 4
        prefs = nil
        #expect(await collectAll(first) == [["launchCount": .integer(3)], ["launchCount": .integer(4)]])
        #expect(await collectAll(second) == [["launchCount": .integer(4)]])
    }

    @Test("A reader that falls behind keeps the newest changeBufferLimit changes, the older ones dropped")
    func bufferKeepsTheNewest() async {
        let limit = RVS_PersistentPrefs.changeBufferLimit
        #expect(limit == 100)
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite())
        let changes = prefs!.changes
        let writes = limit + 50
        for value in 1...writes { prefs!.launchCount = value }
        prefs = nil
        let received = await collectAll(changes)
        #expect(received.count == limit)
        #expect(received.first == ["launchCount": .integer(writes - limit + 1)])
        #expect(received.last == ["launchCount": .integer(writes)])
        #expect(received.map { $0["launchCount"] } == (writes - limit + 1...writes).map { Optional(PropertyListValue.integer($0)) })
    }

    @Test("A for-await loop waiting for the next change ends when the instance goes away")
    func waitingLoopEndsWhenTheInstanceGoesAway() async {
        weak var weakPrefs: ObservedPrefs?
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite())
        weakPrefs = prefs
        let changes = prefs!.changes
        let (progress, progressContinuation) = AsyncStream<Int>.makeStream()
        let reader = Task {
            var count = 0
            for await _ in changes {
                count += 1
                progressContinuation.yield(count)
            }
            progressContinuation.finish()
            return count
        }
        prefs!.launchCount = 1
        var progressIterator = progress.makeAsyncIterator()
        #expect(await progressIterator.next() == 1, "the reader is inside its loop")
        prefs = nil
        #expect(weakPrefs == nil, "a running reader does not keep the instance alive")
        #expect(await result(of: reader) == 1)
    }

    @Test("Cancelling the reading task ends its sequence and unregisters it")
    func cancellingTheReaderUnregisters() async {
        let prefs = ObservedPrefs(suite: observationSuite())
        let changes = prefs.changes
        let (progress, progressContinuation) = AsyncStream<Int>.makeStream()
        let reader = Task {
            var count = 0
            for await _ in changes {
                count += 1
                progressContinuation.yield(count)
            }
            return count
        }
        prefs.launchCount = 1
        var progressIterator = progress.makeAsyncIterator()
        #expect(await progressIterator.next() == 1)
        #expect(prefs.observers.registrationCounts.streams == 1)
        reader.cancel()
        #expect(await result(of: reader) == 1)
        #expect(prefs.observers.registrationCounts.streams == 0)
        prefs.launchCount = 2  // publishing to nobody is fine
        #expect(prefs.lastError == nil)
    }

    @Test("A changes sequence that is dropped unread is unregistered")
    func droppedSequenceIsUnregistered() {
        let prefs = ObservedPrefs(suite: observationSuite())
        do {
            let changes = prefs.changes
            #expect(prefs.observers.registrationCounts.streams == 1)
            withExtendedLifetime(changes) {}
        }
        #expect(prefs.observers.registrationCounts.streams == 0)
    }
}
