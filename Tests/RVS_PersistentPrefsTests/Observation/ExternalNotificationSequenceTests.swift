import Foundation
import Observation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The collection the `TestWorker` writes (entries `count` and `volume` under "settings"), with typed entries.
final class SequencePrefs: RVS_PersistentPrefs {
    @Entry("count") var counter = -1
    @Entry("volume") var volume = 0
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

/// The notifications an observer got, as (old, new) pairs of one entry, with a way to wait for a new value.
final class PairLog: Sendable {
    private let pairs = WaitableValue<[(old: Int?, new: Int?)]>([])

    func append(old: Int?, new: Int?) { pairs.update { $0.append((old, new)) } }
    var all: [(old: Int?, new: Int?)] { pairs.current }
    func waitForNew(_ value: Int) -> Bool { pairs.wait { $0.contains { $0.new == value } } }
}

/// How many notifications repeat the previous one's new value, and how many have an old value that is not
/// the previous one's new value (the first is compared with `first`).
func sequenceFaults(_ pairs: [(old: Int?, new: Int?)], first: Int?) -> (repeats: Int, backwards: Int) {
    var previous = first
    var repeats = 0
    var backwards = 0
    for pair in pairs {
        if pair.new == previous { repeats += 1 }
        if pair.old != previous { backwards += 1 }
        previous = pair.new
    }
    return (repeats, backwards)
}

@Suite("Changes made elsewhere: each notification is the change found, told once, from what was last told", .timeLimit(.minutes(2)))
struct ExternalNotificationSequenceTests {
    let directory = TemporaryDirectory()

    @Test("A writer process's 300 single-entry writes: no notification repeats the previous .new, .old is always the previous .new, and the last carries the final value; the changes stream and updates(of:) agree")
    func burstIsToldAsASequence() async throws {
        let suite = try directory.fileSuite("shared", in: "prefs")
        let prefs = SequencePrefs(suite: suite)
        prefs.watchesExternalChanges = true
        let values = PairLog()
        let token = prefs.observe(\.values, options: [.old, .new]) { _, change in
            values.append(old: change.oldValue?["count"] as? Int, new: change.newValue?["count"] as? Int)
        }
        let typed = PairLog()
        let typedToken = prefs.observe(\.counter, options: [.old, .new]) { _, change in
            typed.append(old: change.oldValue, new: change.newValue)
        }
        let stream = prefs.changes
        let streamed = Task { () -> [Int?] in
            var seen: [Int?] = []
            for await change in stream {
                seen.append(change.values["count"] as? Int)
                if seen.last == 299 { break }
            }
            return seen
        }
        let updates = prefs.updates(of: \.$counter)
        let updated = Task { () -> [Int] in
            var seen: [Int] = []
            for await value in updates {
                seen.append(value)
                if value == 299 { break }
            }
            return seen
        }

        let writer = try ChildProcess.worker("burst-entry", directory.appending("prefs"), "shared", "settings", "300")
        #expect(writer.readLine() == "ok")
        #expect(writer.wait() == 0)
        #expect(values.waitForNew(299))
        #expect(typed.waitForNew(299))

        let told = values.all
        let faults = sequenceFaults(told, first: nil)
        print("external burst: \(told.count) notifications, \(faults.repeats) repeating the previous new value, \(faults.backwards) with an old value not the previous new value")
        let faulty = zip([nil] + told.map(\.new), told).filter { previous, pair in pair.new == previous || pair.old != previous }
        #expect(faults.repeats == 0, "notifications repeating the previous .new: \(faulty.prefix(10).map(\.1))")
        #expect(faults.backwards == 0, ".old not the previous .new: \(faulty.prefix(10).map(\.1))")
        #expect(told.last?.new == 299)
        let typedFaults = sequenceFaults(typed.all, first: -1)
        #expect(typedFaults.repeats == 0 && typedFaults.backwards == 0, "\\.counter: \(typed.all)")

        let streamValues = await result(of: streamed)
        #expect(streamValues.last == 299)
        #expect(zip(streamValues, streamValues.dropFirst()).allSatisfy { $0 != $1 }, "changes repeated a collection: \(streamValues)")
        let updateValues = await result(of: updated)
        #expect(updateValues.first == -1 && updateValues.last == 299)
        #expect(zip(updateValues, updateValues.dropFirst()).allSatisfy { $0 < $1 }, "updates(of:) went back or repeated: \(updateValues)")
        token.invalidate()
        typedToken.invalidate()
    }

    @Test("An observer of an @Entry property hears a change made elsewhere only when that entry changed")
    func typedObserverHearsOnlyItsEntry() throws {
        let suite = try directory.fileSuite("shared", in: "prefs")
        let prefs = SequencePrefs(suite: suite)
        prefs.watchesExternalChanges = true
        let typed = PairLog()
        let token = prefs.observe(\.counter, options: [.old, .new]) { _, change in typed.append(old: change.oldValue, new: change.newValue) }
        let whole = PairLog()
        let wholeToken = prefs.observe(\.values, options: [.new]) { _, change in whole.append(old: nil, new: change.newValue?["volume"] as? Int) }
        let writer = try ChildProcess.worker("serve-entries", directory.appending("prefs"), "shared", "settings")
        writer.send("volume 5")
        #expect(writer.readLine() == "done volume 5")
        #expect(whole.waitForNew(5), "the change was delivered")
        writer.send("count 3")
        #expect(writer.readLine() == "done count 3")
        #expect(typed.waitForNew(3))
        writer.closeInput()
        #expect(writer.wait() == 0)
        #expect(typed.all.map(\.old) == [-1])
        #expect(typed.all.map(\.new) == [3], "told of the change to volume")
        token.invalidate()
        wholeToken.invalidate()
    }

    @Test("2,000 watching instances hear one change made elsewhere on a few shared threads, not one per instance")
    func deliveriesShareFewThreads() throws {
        let place = directory.appending("prefs")
        let watcher = try ChildProcess.worker("watch-many", place, "shared", "settings", "2000")
        #expect(watcher.readLine() == "ready")
        let writer = WatchedPrefs(suite: try directory.fileSuite("shared", in: "prefs"))
        writer.counter = 1
        #expect(writer.lastError == nil)
        let report = try #require(watcher.readLine())
        #expect(watcher.wait() == 0)
        print("watch-many: \(report)")
        let figures = Dictionary(uniqueKeysWithValues: report.split(separator: " ").compactMap { part -> (String, Int)? in
            let pair = part.split(separator: "=")
            guard pair.count == 2, let value = Int(pair[1]) else { return nil }
            return (String(pair[0]), value)
        })
        #expect(figures["told"] == 2000)
        let before = try #require(figures["threads_before"])
        let peak = try #require(figures["threads_peak"])
        // A few shared threads (4 delivery lanes and the watch thread), not one per instance: with the margin
        // Dispatch may take on a loaded machine, still far from 2,000.
        #expect(peak - before <= 16, "threads while delivering: \(report)")
    }
}
