import Foundation
import PrefsHistory
import Testing

/// Hand-made histories for the checker of `harness check` (SPEC §11): each kind of anomaly is reported, with
/// a slice of the history that shows it, and clean histories, concurrent ones included, are not.
@Suite("harness check: the history checker")
struct HistoryCheckerTests {
    static let entries: Set<String> = ["a", "b", "c", "t"]

    /// A history built operation by operation: `p` is the process, times are in milliseconds.
    struct Builder {
        var records: [HistoryRecord] = []
        var sequence = 0

        mutating func add(_ process: Int, _ kind: HistoryRecord.Kind, _ start: UInt64, _ end: UInt64?, entry: String? = nil,
                          value: Int? = nil, values: [String: Int]? = nil, old: [String: Int]? = nil,
                          key: String = "k0", outcome: HistoryRecord.Outcome = .ok, domain: String = "d0",
                          system: [String: Int]? = nil, managed: [String: Int]? = nil) {
            sequence += 1
            records.append(HistoryRecord(process: process, sequence: sequence, kind: kind, domain: domain, key: key, entry: entry,
                                         value: value, values: values, old: old, system: system, managed: managed,
                                         start: start * 1_000_000, end: end.map { $0 * 1_000_000 }, outcome: end == nil ? .unknown : outcome))
        }
        mutating func write(_ process: Int, _ start: UInt64, _ end: UInt64?, _ entry: String, _ value: Int?, outcome: HistoryRecord.Outcome = .ok) {
            add(process, .write, start, end, entry: entry, value: value, outcome: outcome)
        }
        mutating func read(_ process: Int, _ start: UInt64, _ end: UInt64, _ entry: String, _ value: Int?) {
            add(process, .read, start, end, entry: entry, value: value)
        }
        mutating func increment(_ process: Int, _ start: UInt64, _ end: UInt64?, outcome: HistoryRecord.Outcome = .ok) {
            add(process, .increment, start, end, entry: "n", key: "ctr", outcome: outcome)
        }
        mutating func final(_ time: UInt64, _ values: [String: Int]?, counter: Int? = nil, system: [String: Int]? = nil, managed: [String: Int]? = nil) {
            add(HistoryRecord.coordinatorProcess, .final, time, time + 1, value: counter, values: values, system: system, managed: managed)
        }
        func check() -> [Anomaly] {
            // Through the JSON lines, as the coordinator merges them.
            checkHistory(mergeHistory(records.map { Substring($0.jsonLine) }), checkedEntries: HistoryCheckerTests.entries)
        }
    }

    @Test("a read of a value overwritten by a write acknowledged before the read began is stale")
    func staleRead() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.write(2, 20, 30, "a", 200)
        history.read(3, 40, 50, "a", 100)
        let anomalies = history.check()
        #expect(anomalies.map(\.kind) == [.staleRead])
        #expect(anomalies.first?.slice.count == 3)
        #expect(anomalies.first?.slice.last?.process == 3)
    }

    @Test("a watched read is held to its staleness bound: stale only when the overwrite was acknowledged longer before it, and never backwards")
    func watchedReadWithinItsBound() {
        func watchedRead(overwrittenAt end: UInt64, readAt start: UInt64) -> [Anomaly] {
            var history = Builder()
            history.write(1, 0, 10, "a", 100)
            history.read(3, 20, 25, "a", 100)
            history.write(2, end - 10, end, "a", 200)
            // A fresh read of the new value, then a watched read (1 s bound) of the old one.
            history.read(3, end + 5, end + 8, "a", 200)
            history.add(3, .read, start, start + 5, entry: "a", value: 100)
            history.records[history.records.count - 1].staleness = 1_000_000_000
            return history.check()
        }
        // 600 ms after the overwrite: within the bound, neither stale nor backwards.
        #expect(watchedRead(overwrittenAt: 1_000, readAt: 1_600).isEmpty)
        // 1.5 s after: past the bound, stale (and said so).
        let late = watchedRead(overwrittenAt: 1_000, readAt: 2_500)
        #expect(late.map(\.kind) == [.staleRead])
        #expect(late.first?.message.contains("more than the 1000.000 ms its mode allows") == true)
        #expect(late.first?.slice.last?.description.contains("(watched: up to 1000.000 ms stale)") == true)
    }

    @Test("an absent entry read after an acknowledged write and no removal since is stale")
    func staleAbsentRead() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.read(2, 20, 30, "a", nil)
        #expect(history.check().map(\.kind) == [.staleRead])
    }

    @Test("a read concurrent with the overwriting write, or with another write of the value it read, is not stale")
    func concurrentReadsAreClean() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.write(2, 20, 40, "a", 200)
        history.read(3, 30, 50, "a", 100)  // the second write had not ended when the read began
        history.read(3, 60, 70, "a", 200)
        history.write(1, 80, 90, "a", nil)
        history.read(3, 85, 95, "a", 200)  // the removal may come after the read
        history.read(3, 100, 110, "a", nil)
        history.final(200, [:])
        #expect(history.check().isEmpty)
    }

    @Test("a write of unknown outcome may take effect at any time after it started, even after the kill")
    func unknownOutcomeWrites() {
        var history = Builder()
        history.write(1, 0, nil, "a", 100)
        history.write(2, 20, 30, "a", 200)
        history.read(3, 40, 50, "a", 100)
        history.final(60, ["a": 100])
        #expect(history.check().isEmpty)
    }

    @Test("a read of a value no write produced, or one that started only after the read ended, is a phantom")
    func phantomRead() {
        var history = Builder()
        history.read(1, 0, 10, "a", 999)
        history.read(1, 20, 30, "b", 300)
        history.write(2, 40, 50, "b", 300)
        #expect(history.check().map(\.kind) == [.phantomRead, .phantomRead])
    }

    @Test("a failed write changed nothing: a read of its value is a phantom")
    func failedWritesChangeNothing() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100, outcome: .failed)
        history.read(2, 20, 30, "a", 100)
        #expect(history.check().map(\.kind) == [.phantomRead])
    }

    @Test("a process reading an older value than it read before goes backwards")
    func backwardsRead() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.write(1, 20, 100, "a", 200)  // still running: both reads may see either, but not 200 then 100
        history.read(2, 30, 40, "a", 200)
        history.read(2, 50, 60, "a", 100)
        #expect(history.check().map(\.kind) == [.backwardsRead])
    }

    @Test("two processes may see a running write at different times without going backwards")
    func differentProcessesMaySeeDifferently() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.write(1, 20, 100, "a", 200)
        history.read(2, 30, 40, "a", 200)
        history.read(3, 50, 60, "a", 100)
        #expect(history.check().isEmpty)
    }

    @Test("whole replacements remove the entries they do not hold, and whole reads are checked entry by entry")
    func replacementsAndWholeReads() {
        var history = Builder()
        history.write(1, 0, 10, "a", 100)
        history.add(1, .replace, 20, 30, values: ["b": 201])
        history.add(2, .readAll, 40, 50, values: ["a": 100, "b": 201, "policy": 7])
        history.add(2, .readAll, 60, 70, values: ["b": 201, "policy": 7])
        let anomalies = history.check()
        #expect(anomalies.map(\.kind) == [.staleRead])
        #expect(anomalies.first?.message.contains("d0/k0.a") == true)
    }

    @Test("a counter must end at its acknowledged increments, at most the unknown ones more")
    func counters() {
        var exact = Builder()
        exact.increment(1, 0, 10)
        exact.increment(2, 5, 15)
        exact.increment(3, 20, nil)
        exact.increment(1, 30, 40, outcome: .failed)
        exact.final(100, [:], counter: 3)
        #expect(exact.check().isEmpty)

        var tooMany = exact
        tooMany.records.removeLast()
        tooMany.final(100, [:], counter: 4)  // the failed increment was applied
        #expect(tooMany.check().map(\.kind) == [.counterMismatch])

        var lost = exact
        lost.records.removeLast()
        lost.final(100, [:], counter: 1)
        #expect(lost.check().map(\.kind) == [.counterMismatch])
    }

    @Test("a counter read below the increments acknowledged before it, or going down in one process, is reported")
    func counterReads() {
        var history = Builder()
        history.increment(1, 0, 10)
        history.increment(1, 20, 30)
        history.add(2, .readCounter, 40, 50, entry: "n", value: 1, key: "ctr")
        history.increment(1, 60, 200)
        history.add(3, .readCounter, 70, 80, entry: "n", value: 3, key: "ctr")
        history.add(3, .readCounter, 90, 95, entry: "n", value: 2, key: "ctr")
        let kinds = history.check().map(\.kind)
        #expect(kinds == [.staleRead, .backwardsRead])
    }

    @Test("an acknowledged write missing at the end is lost; one legitimately overwritten is not")
    func lostWrites() {
        var lost = Builder()
        lost.write(1, 0, 10, "a", 100)
        lost.write(2, 20, 30, "a", 200)
        lost.final(100, ["a": 100])
        #expect(lost.check().map(\.kind) == [.lostWrite])

        var vanished = Builder()
        vanished.write(1, 0, 10, "b", 100)
        vanished.final(100, [:])
        #expect(vanished.check().map(\.kind) == [.lostWrite])

        var concurrent = Builder()
        concurrent.write(1, 0, 30, "a", 100)
        concurrent.write(2, 10, 20, "a", 200)
        concurrent.final(100, ["a": 100])
        #expect(concurrent.check().isEmpty)
    }

    @Test("a domain file that did not parse after a kill -9 is reported")
    func tornFile() {
        var history = Builder()
        history.add(HistoryRecord.coordinatorProcess, .parse, 0, 1, outcome: .failed)
        history.add(HistoryRecord.coordinatorProcess, .parse, 2, 3)
        #expect(history.check().map(\.kind) == [.tornFile])
    }

    @Test("a watcher told the same collection twice in a row, or a change to itself, is reported")
    func repeatedNotifications() {
        var history = Builder()
        history.add(1, .notify, 0, 0, entry: "watcher", values: ["a": 1], old: [:])
        history.add(1, .notify, 1, 1, entry: "watcher", values: ["a": 1], old: ["a": 1])
        #expect(history.check().map(\.kind) == [.repeatedNotification, .repeatedNotification])
    }

    @Test("a watcher's .old that is not the previous .new is reported")
    func brokenChain() {
        var history = Builder()
        history.add(1, .notify, 0, 0, entry: "watcher", values: ["a": 2], old: ["a": 1])
        history.add(1, .notify, 1, 1, entry: "watcher", values: ["a": 3], old: ["a": 1])
        history.add(1, .notify, 2, 2, entry: "watcher", values: ["a": 4], old: ["a": 3])
        #expect(history.check().map(\.kind) == [.brokenNotificationChain])
    }

    @Test("after quiescing, a watcher's last .new must be the stored collection with the administrators' entries")
    func lastNotification() {
        var clean = Builder()
        clean.write(2, 0, 1, "a", 4)
        clean.add(1, .notify, 2, 2, entry: "watcher", values: ["a": 4, "policy": 9, "sysdefault": 5], old: [:])
        clean.add(1, .settled, 10, 10, entry: "watcher", values: ["a": 4, "policy": 9, "sysdefault": 5])
        clean.final(20, ["a": 4], system: ["sysdefault": 5, "a": 1], managed: ["policy": 9])
        #expect(clean.check().isEmpty)

        var behind = Builder()
        behind.write(2, 0, 1, "a", 4)
        behind.write(2, 3, 4, "a", 6)
        behind.add(1, .notify, 2, 2, entry: "watcher", values: ["a": 4], old: [:])
        behind.add(1, .settled, 10, 10, entry: "watcher", values: ["a": 4])
        behind.final(20, ["a": 6])
        #expect(behind.check().map(\.kind) == [.lastNotificationNotFinal])
    }

    @Test("a killed worker's half-written line is skipped, and an operation's end line replaces its start line")
    func mergingLines() {
        let start = HistoryRecord(process: 1, sequence: 1, kind: .write, domain: "d0", key: "k0", entry: "a", value: 5, start: 1, end: nil, outcome: .unknown)
        var end = start
        end.end = 2
        end.outcome = .ok
        let merged = mergeHistory([Substring(start.jsonLine), Substring(end.jsonLine), Substring(String(start.jsonLine.prefix(20)))])
        #expect(merged == [end])
    }
}
