// The history of a checked run (SPEC §11): every operation the workers and the nemesis made, with its
// process, its start and end on CLOCK_MONOTONIC (one clock for every process of the machine), what it asked
// and what it got. Kept apart from the library: nothing here reads a domain, so the checker that judges the
// library's reads shares no code with them.

import Foundation

/// One record of a checked history: an operation, a notification, or a fact the coordinator established.
///
/// Values are whole numbers: every write in a run writes a value no other write writes, so a value read
/// names the write that produced it. `nil` stands for an absent entry.
package struct HistoryRecord: Codable, Equatable, Sendable {
    /// What a record tells.
    package enum Kind: String, Codable, Sendable {
        /// `entry` set to `value` (`nil`: removed) by a subscript write, a typed write or the nemesis.
        case write
        /// The whole collection replaced by `values`: every checked entry not in it is removed.
        case replace
        /// One `modify` increment of the counter `entry`.
        case increment
        /// A read of `entry`, which returned `value`.
        case read
        /// A read of the whole collection, which returned `values`.
        case readAll
        /// A read of the counter `entry`, which returned `value` (`nil`: absent, that is 0).
        case readCounter
        /// A notification to a watching instance (`entry` names the watcher): `old` and `values` (new).
        case notify
        /// A watcher's last word after the run quiesced: `values` is the last `.new` it was told.
        case settled
        /// The coordinator parsed the domain file after a `kill -9`: `outcome` says whether it parsed.
        case parse
        /// The state after the run quiesced, read by the coordinator: `values` the stored collection,
        /// `value` the counter, `system` and `managed` the administrators' entries.
        case final
    }

    /// How an operation ended.
    package enum Outcome: String, Codable, Sendable {
        /// It returned without error.
        case ok
        /// It reported an error: the library promises that it changed nothing.
        case failed
        /// Its process was killed before it returned: it may or may not have taken effect.
        case unknown
    }

    /// The process (a worker's number, never reused; ``HistoryRecord/nemesisProcess`` for the nemesis).
    package var process: Int
    /// The operation's number within its process, for merging a start line with its end line.
    package var sequence: Int
    /// What the record tells.
    package var kind: Kind
    /// The domain's name.
    package var domain: String
    /// The storage key of the collection.
    package var key: String
    /// The entry written, read or incremented; for a notification, the watcher's name.
    package var entry: String?
    /// The value written or read (`nil`: absent); for ``Kind/final``, the counter.
    package var value: Int?
    /// The collection written or read; for a notification, its `.new`.
    package var values: [String: Int]?
    /// A notification's `.old`.
    package var old: [String: Int]?
    /// For ``Kind/final``: the system defaults' entries of the collection.
    package var system: [String: Int]?
    /// For ``Kind/final``: the managed (forced) entries of the collection.
    package var managed: [String: Int]?
    /// The start in nanoseconds of CLOCK_MONOTONIC, one clock for every process of the machine.
    package var start: UInt64
    /// The end on the same clock; `nil` while the outcome is unknown.
    package var end: UInt64?
    /// How the operation ended.
    package var outcome: Outcome
    /// The error an operation reported, as the library described it.
    package var error: String?
    /// For a read in a mode that may serve a copy (etcd's `ReadMode.watched`): how stale, in nanoseconds,
    /// the library promises it may be. The checker then reports it stale only when the write that
    /// overwrote its value was acknowledged that long before the read began, and leaves it out of the
    /// process's order of reads (backwards reads). `nil`: a read that must be fresh.
    package var staleness: UInt64?

    /// The process number of the nemesis's own writes.
    package static let nemesisProcess = 9_999
    /// The process number of the coordinator's records (final state, parses).
    package static let coordinatorProcess = 10_000

    /// A record; the optional parts default to absent (see the properties for what each holds).
    package init(process: Int, sequence: Int, kind: Kind, domain: String, key: String, entry: String? = nil,
                value: Int? = nil, values: [String: Int]? = nil, old: [String: Int]? = nil,
                system: [String: Int]? = nil, managed: [String: Int]? = nil,
                start: UInt64, end: UInt64?, outcome: Outcome, error: String? = nil, staleness: UInt64? = nil) {
        (self.process, self.sequence, self.kind, self.domain, self.key, self.entry) = (process, sequence, kind, domain, key, entry)
        (self.value, self.values, self.old, self.system, self.managed) = (value, values, old, system, managed)
        (self.start, self.end, self.outcome, self.error, self.staleness) = (start, end, outcome, error, staleness)
    }

    /// The record as one line of JSON, without a newline.
    package var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }

    /// The record in a form people read: what the process did, when, and what came of it.
    package var description: String {
        func show(_ dictionary: [String: Int]?) -> String {
            guard let dictionary else { return "absent" }
            return "{" + dictionary.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
        let who = process == Self.nemesisProcess ? "nemesis" : process == Self.coordinatorProcess ? "coordinator" : "p\(process)"
        let time = "[\(Self.milliseconds(start))–\(end.map(Self.milliseconds) ?? "?")]"
        let place = "\(domain)/\(key)" + (entry.map { ".\($0)" } ?? "")
        var what: String
        switch kind {
        case .write: what = "write \(place) = \(value.map(String.init) ?? "nil (remove)")"
        case .replace: what = "replace \(domain)/\(key) = \(show(values))"
        case .increment: what = "increment \(place)"
        case .read: what = "read \(place) -> \(value.map(String.init) ?? "nil")"
        case .readAll: what = "read \(domain)/\(key) -> \(show(values))"
        case .readCounter: what = "read counter \(place) -> \(value ?? 0)"
        case .notify: what = "told \(place): old \(show(old)) new \(show(values))"
        case .settled: what = "watcher \(place) settled on \(show(values))"
        case .parse: what = "parse \(domain)"
        case .final:
            what = "final \(domain)/\(key) = \(show(values)), counter \(value ?? 0), system \(show(system)), managed \(show(managed))"
        }
        let result = outcome == .ok ? "" : " (\(outcome.rawValue)\(error.map { ": \($0)" } ?? ""))"
        let mode = staleness.map { " (watched: up to \(Self.milliseconds($0)) ms stale)" } ?? ""
        return "\(who) \(time) \(what)\(mode)\(result)"
    }

    static func milliseconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.3f", Double(nanoseconds) / 1e6)
    }
}

/// Merges the lines workers wrote: an operation's start line (outcome unknown) is replaced by its end line
/// when there is one; a line cut short by a `kill -9` is skipped.
/// - Parameter lines: JSON lines from every worker's file, in any order between files, in order within one.
/// - Returns: The records, ordered by start time.
package func mergeHistory(_ lines: [Substring]) -> [HistoryRecord] {
    let decoder = JSONDecoder()
    var byOperation: [Int: [Int: HistoryRecord]] = [:]
    for line in lines where !line.isEmpty {
        guard let record = try? decoder.decode(HistoryRecord.self, from: Data(line.utf8)) else { continue }
        byOperation[record.process, default: [:]][record.sequence] = record
    }
    return byOperation.values.flatMap(\.values).sorted { ($0.start, $0.process, $0.sequence) < ($1.start, $1.process, $1.sequence) }
}
