// A worker of `harness check`: this executable run again (`harness check --worker ROOT ...`) doing the
// operations its seed draws, through the library, each written to its own history file before it starts and
// again when it ends, so that a `kill -9` leaves its unfinished operation of unknown outcome. A watching
// instance per domain records every notification. It obeys the coordinator's lines on standard input:
// `stop` (finish the operation under way, answer `stopped`) and `settle` (wait, bounded, until every watcher
// has caught up with a fresh read, record where each ended, answer `settled` and exit).

import Foundation
import Glibc
import PrefsEtcd
import PrefsHistory
import RVS_PersistentPrefs
import Synchronization
import PrefsTool

/// The collection every worker uses: the checked entries, one typed (`t`), and the administrators' entries
/// allowed so that whole reads and replacements work around them.
final class CheckedPrefs: RVS_PersistentPrefs {
    @Entry("t") var t: Int? = nil
    override var keys: [String] { CheckLayout.entries + [CheckLayout.systemEntry, CheckLayout.managedEntry] }
}

/// The counter, incremented by typed and untyped `modify`.
final class CounterPrefs: RVS_PersistentPrefs {
    @Entry("n") var n = 0
}

/// The history file of one worker: whole lines, each with one `write(2)` on a descriptor opened for appending,
/// so that a line is either all there or cut short by the kill (and then skipped by the merge).
final class HistoryLog: Sendable {
    private let descriptor: Int32
    private let state = Mutex<(sequence: Int, lastNew: [String: [String: Int]])>((0, [:]))
    let process: Int

    init(path: String, process: Int) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw HarnessError.failure("cannot open \(path): \(String(cString: strerror(errno)))") }
        self.process = process
    }

    /// A new operation number.
    func nextSequence() -> Int { state.withLock { $0.sequence += 1; return $0.sequence } }

    func append(_ record: HistoryRecord) {
        let line = record.jsonLine + "\n"
        _ = line.withCString { write(descriptor, $0, strlen($0)) }
    }

    /// Records a notification to the watcher of `domain`, numbered in the order it was told.
    func told(domain: String, old: [String: Int]?, new: [String: Int]?) {
        state.withLock { state in
            state.sequence += 1
            let now = monotonicNow()
            append(HistoryRecord(process: process, sequence: state.sequence, kind: .notify, domain: domain, key: CheckLayout.key,
                                 entry: "watcher", values: new, old: old, start: now, end: now, outcome: .ok))
            state.lastNew[domain] = new ?? [:]
        }
    }

    /// The last `.new` told to the watcher of `domain`, if any.
    func lastNew(of domain: String) -> [String: Int]? { state.withLock { $0.lastNew[domain] } }
}

/// The whole numbers of a collection read through the library (the only kind the check writes).
func wholeNumbers(_ values: [String: Any]?) -> [String: Int]? {
    values.map { $0.compactMapValues { $0 as? Int } }
}

/// Runs one worker until told to stop, then settles and returns.
enum CheckWorker {
    /// The hidden option of `harness check` that makes it a worker.
    static let option = "--worker"

    /// Runs worker `number` from `seed`; with `etcd`, over the etcd domains `<prefix>.d0` and `<prefix>.d1`
    /// through the members `endpoints` (the first is the one it is attached to).
    static func run(root: String, number: Int, seed: UInt64, etcd: (endpoints: [URL], prefix: String)? = nil) throws {
        let layout = CheckLayout(root: root)
        let log = try HistoryLog(path: layout.log(of: number), process: number)
        var suites: [String: DefaultsSuite] = [:]
        // etcd only: suites whose reads are in `.watched` mode (served from a watch's copy within a stated bound),
        // held by the checker to that bound. A member cut off from the others is where that bound matters.
        var watchedSuites: [String: DefaultsSuite] = [:]
        for domain in CheckLayout.domains {
            if let etcd {
                // A short timeout, so that a quorum lost for a few seconds makes operations fail (of unknown or of
                // no effect, which the checker tells apart) instead of only wait.
                let storage = try EtcdDomainStorage(endpoints: etcd.endpoints, name: "\(etcd.prefix).\(domain)", timeout: .seconds(2))
                suites[domain] = DefaultsSuite(persistentDomain: storage, arguments: [])
                let watched = try EtcdDomainStorage(endpoints: etcd.endpoints, name: "\(etcd.prefix).\(domain)", timeout: .seconds(2), readMode: .watched)
                watchedSuites[domain] = DefaultsSuite(persistentDomain: watched, arguments: [])
                continue
            }
            let locations = DefaultsLocations(preferencesDirectory: layout.directory(of: domain), applicationDomainName: domain,
                                              systemDirectories: [layout.systemDirectory], managedDirectory: layout.managedDirectory)
            suites[domain] = try locations.applicationSuite()
        }
        var prefs: [String: CheckedPrefs] = [:]
        var counters: [String: CounterPrefs] = [:]
        var watchers: [String: CheckedPrefs] = [:]
        var watchedReaders: [String: CheckedPrefs] = [:]
        for (domain, suite) in watchedSuites { watchedReaders[domain] = CheckedPrefs(key: CheckLayout.key, suite: suite) }
        // The bound a watched read is held to, in nanoseconds.
        let (boundSeconds, boundAttoseconds) = EtcdDomainStorage.watchedReadBound.components
        let watchedBound = UInt64(boundSeconds) * 1_000_000_000 + UInt64(boundAttoseconds / 1_000_000_000)
        var tokens: [PrefsObservation] = []
        var startCollections: [String: [String: Int]] = [:]
        for domain in CheckLayout.domains {
            let suite = suites[domain]!
            prefs[domain] = CheckedPrefs(key: CheckLayout.key, suite: suite)
            counters[domain] = CounterPrefs(key: CheckLayout.counterKey, suite: suite)
            let watcher = CheckedPrefs(key: CheckLayout.key, suite: suite)
            watcher.watchesExternalChanges = true
            tokens.append(watcher.observe(\.values, options: [.old, .new]) { _, change in
                log.told(domain: domain, old: wholeNumbers(change.oldValue), new: wholeNumbers(change.newValue))
            })
            startCollections[domain] = wholeNumbers(watcher.values) ?? [:]
            watchers[domain] = watcher
        }

        // The coordinator's commands, read on a thread of their own.
        let command = Atomic<Int>(0)  // 0 run, 1 stop, 2 settle
        Thread.detachNewThread {
            while let line = readLine() {
                if line == "stop" { command.store(1, ordering: .sequentiallyConsistent) }
                if line == "settle" { command.store(2, ordering: .sequentiallyConsistent) }
            }
            // The coordinator went away: stop, and settle without waiting for it.
            command.store(2, ordering: .sequentiallyConsistent)
        }
        answer("ready")

        func reader(for domain: String, _ sequence: Int, _ record: inout HistoryRecord) -> CheckedPrefs {
            if sequence % 2 == 1 { return watchers[domain]! }
            if sequence % 3 == 0, let watched = watchedReaders[domain] {
                record.staleness = watchedBound
                return watched
            }
            return prefs[domain]!
        }

        var generator = SeededGenerator(seed: seed)
        // Bounded even if the coordinator never says stop.
        let deadline = monotonicNow() + 3_600 * 1_000_000_000
        while command.load(ordering: .sequentiallyConsistent) == 0, monotonicNow() < deadline {
            let step = CheckStep.next(&generator)
            let sequence = log.nextSequence()
            // Unique in the run: a multiple of 10 for single writes; a replacement's entries take value+1 ... value+4.
            let value = number * 1_000_000_000 + sequence * 10
            var record: HistoryRecord
            switch step {
            case .write(let domain, let entry):
                record = HistoryRecord(process: number, sequence: sequence, kind: .write, domain: domain, key: CheckLayout.key, entry: entry, value: value, start: 0, end: nil, outcome: .unknown)
            case .remove(let domain, let entry):
                record = HistoryRecord(process: number, sequence: sequence, kind: .write, domain: domain, key: CheckLayout.key, entry: entry, start: 0, end: nil, outcome: .unknown)
            case .replace(let domain, let entries):
                record = HistoryRecord(process: number, sequence: sequence, kind: .replace, domain: domain, key: CheckLayout.key,
                                       values: Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1, value + 1 + $0) }), start: 0, end: nil, outcome: .unknown)
            case .typedWrite(let domain):
                record = HistoryRecord(process: number, sequence: sequence, kind: .write, domain: domain, key: CheckLayout.key, entry: "t", value: value, start: 0, end: nil, outcome: .unknown)
            case .increment(let domain, _):
                record = HistoryRecord(process: number, sequence: sequence, kind: .increment, domain: domain, key: CheckLayout.counterKey, entry: CheckLayout.counterEntry, start: 0, end: nil, outcome: .unknown)
            case .read(let domain, let entry):
                record = HistoryRecord(process: number, sequence: sequence, kind: .read, domain: domain, key: CheckLayout.key, entry: entry, start: 0, end: nil, outcome: .unknown)
            case .readAll(let domain):
                record = HistoryRecord(process: number, sequence: sequence, kind: .readAll, domain: domain, key: CheckLayout.key, start: 0, end: nil, outcome: .unknown)
            case .typedRead(let domain):
                record = HistoryRecord(process: number, sequence: sequence, kind: .read, domain: domain, key: CheckLayout.key, entry: "t", start: 0, end: nil, outcome: .unknown)
            case .readCounter(let domain):
                record = HistoryRecord(process: number, sequence: sequence, kind: .readCounter, domain: domain, key: CheckLayout.counterKey, entry: CheckLayout.counterEntry, start: 0, end: nil, outcome: .unknown)
            }
            record.start = monotonicNow()
            log.append(record)
            let error: PrefsError?
            switch step {
            case .write(let domain, let entry):
                prefs[domain]![entry] = value
                error = prefs[domain]!.lastError
            case .remove(let domain, let entry):
                prefs[domain]![entry] = nil
                error = prefs[domain]!.lastError
            case .replace(let domain, _):
                prefs[domain]!.values = record.values ?? [:]
                error = prefs[domain]!.lastError
            case .typedWrite(let domain):
                prefs[domain]!.t = value
                error = prefs[domain]!.lastError
            case .increment(let domain, let typed):
                if typed {
                    counters[domain]!.modify(\.$n) { $0 += 1 }
                } else {
                    counters[domain]!.modify(CheckLayout.counterEntry) { ($0 as? Int ?? 0) + 1 }
                }
                error = counters[domain]!.lastError
            // Every other read through the watching instance: its reads may be vouched for by the watch (no
            // system call), the path where stale reads behind links and moved directories were found before.
            // On etcd, one read in three of the others is in `.watched` mode, recorded with its bound.
            case .read(let domain, let entry):
                let reader = reader(for: domain, sequence, &record)
                record.value = reader[entry] as? Int
                error = reader.lastError
            case .readAll(let domain):
                let reader = reader(for: domain, sequence, &record)
                record.values = wholeNumbers(reader.values)
                error = reader.lastError
            case .typedRead(let domain):
                let reader = reader(for: domain, sequence, &record)
                record.value = reader.t
                error = reader.lastError
            case .readCounter(let domain):
                let stored = counters[domain]!.n
                error = counters[domain]!.lastError
                // A typed read gives the default (0) when the entry is absent: the checker counts absent as 0.
                record.value = stored
            }
            record.end = monotonicNow()
            record.error = error.map { "\($0)" }
            record.outcome = error == nil ? .ok : Self.outcomeIsUnknown(error) ? .unknown : .failed
            log.append(record)
        }
        answer("stopped")
        let settleDeadline = monotonicNow() + 60 * 1_000_000_000
        while command.load(ordering: .sequentiallyConsistent) != 2, monotonicNow() < settleDeadline { usleep(5_000) }

        // Settle: every watcher has caught up with a fresh read of its collection (one that succeeded), or 10 s
        // have passed.
        let caughtUpDeadline = monotonicNow() + 10 * 1_000_000_000
        while monotonicNow() < caughtUpDeadline {
            let caughtUp = CheckLayout.domains.allSatisfy { domain in
                let fresh = wholeNumbers(prefs[domain]!.values)
                return prefs[domain]!.lastError == nil && (log.lastNew(of: domain) ?? startCollections[domain]) == fresh
            }
            if caughtUp { break }
            usleep(10_000)
        }
        // A little longer, so that a repeated notification after catching up is recorded too.
        usleep(100_000)
        for domain in CheckLayout.domains {
            let now = monotonicNow()
            log.append(HistoryRecord(process: number, sequence: log.nextSequence(), kind: .settled, domain: domain, key: CheckLayout.key,
                                     entry: "watcher", values: log.lastNew(of: domain) ?? startCollections[domain],
                                     start: now, end: now, outcome: .ok))
        }
        tokens.forEach { $0.invalidate() }
        withExtendedLifetime(watchers) {}
        answer("settled")
    }

    /// Whether a failed operation may still have taken effect: ``PrefsError/outcomeUnknown(location:reason:)``.
    /// Every other failure changed nothing, as the library promises, and the checker holds it to that.
    static func outcomeIsUnknown(_ error: PrefsError?) -> Bool {
        if case .outcomeUnknown? = error { return true }
        return false
    }

    private static func answer(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
