// The checker of a history (SPEC §11): pure functions from the records to the anomalies they show.
//
// The model is a register per entry and a counter per counter entry. Every write writes a value no other
// write writes, so a value read names its producer; an absent entry (`nil`) may come from the initial state
// or from any removal. A write that failed changed nothing (the library's promise); a write whose process was
// killed may have taken effect at any time after it started (its end is taken as infinitely late).

/// One thing the history shows that the library promises cannot happen.
package struct Anomaly: Sendable, Equatable {
    /// The promise broken.
    package enum Kind: String, Sendable, CaseIterable {
        /// A read returned a value overwritten by a write that completed before the read began.
        case staleRead
        /// A read returned a value no write that started before the read ended could have produced.
        case phantomRead
        /// A read of a process returned a value older than an earlier read of the same process had seen.
        case backwardsRead
        /// A counter does not equal its acknowledged increments (at most the unknown-outcome ones more).
        case counterMismatch
        /// The value stored at the end is not that of a write that no acknowledged write superseded.
        case lostWrite
        /// A domain file did not parse after a process writing it was killed.
        case tornFile
        /// A watcher was told the same collection twice in a row (or a change from a value to itself).
        case repeatedNotification
        /// A notification's `.old` is not the previous notification's `.new`.
        case brokenNotificationChain
        /// After the run quiesced, a watcher's last `.new` is not the stored collection.
        case lastNotificationNotFinal
    }

    /// The promise broken.
    package var kind: Kind
    /// What was seen, in one sentence.
    package var message: String
    /// The shortest slice of the history that shows it, ordered by start.
    package var slice: [HistoryRecord]

    /// An anomaly.
    package init(kind: Kind, message: String, slice: [HistoryRecord]) {
        self.kind = kind
        self.message = message
        self.slice = slice.sorted { ($0.start, $0.process, $0.sequence) < ($1.start, $1.process, $1.sequence) }
    }
}

/// Where a register or a counter lives.
struct Place: Hashable, Comparable {
    let domain: String, key: String, entry: String
    static func < (a: Place, b: Place) -> Bool { (a.domain, a.key, a.entry) < (b.domain, b.key, b.entry) }
    var name: String { "\(domain)/\(key).\(entry)" }
}

/// A write's effect on one register: `value` stored between `start` and `end` (`UInt64.max`: unknown).
struct Effect {
    let value: Int?
    let start: UInt64
    let end: UInt64
    let acknowledged: Bool
    /// `nil` for the initial state.
    let record: HistoryRecord?
}

/// The writes of one register, indexed for the checks.
struct Register {
    /// Acknowledged writes by end, with the one of latest start among the first i+1 of them.
    private var acknowledgedByEnd: [Effect] = []
    private var latestStartUpTo: [Int] = []
    /// Possible producers of each value, by start, with the one of latest end among the first i+1.
    private var producers: [Int?: [Effect]] = [:]
    private var latestEndUpTo: [Int?: [Int]] = [:]

    init(effects: [Effect]) {
        let initial = Effect(value: nil, start: 0, end: 0, acknowledged: true, record: nil)
        acknowledgedByEnd = effects.filter(\.acknowledged).sorted { $0.end < $1.end }
        var best = -1
        for (index, effect) in acknowledgedByEnd.enumerated() {
            if best < 0 || effect.start > acknowledgedByEnd[best].start { best = index }
            latestStartUpTo.append(best)
        }
        for effect in [initial] + effects { producers[effect.value, default: []].append(effect) }
        for (value, list) in producers {
            let sorted = list.sorted { $0.start < $1.start }
            producers[value] = sorted
            var latest = -1
            var indices: [Int] = []
            for (index, effect) in sorted.enumerated() {
                if latest < 0 || effect.end > sorted[latest].end { latest = index }
                indices.append(latest)
            }
            latestEndUpTo[value] = indices
        }
    }

    /// How many of `list` (sorted by start) started before `time`.
    private static func countStarted(_ list: [Effect], before time: UInt64) -> Int {
        var (low, high) = (0, list.count)
        while low < high {
            let middle = (low + high) / 2
            if list[middle].start < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Of the writes that may have produced `value` for a read ending at `readEnd`: the one that ended
    /// last, and the one that started first; `nil` when there is none.
    func producers(of value: Int?, before readEnd: UInt64) -> (latestEnding: Effect, earliestStarting: Effect)? {
        guard let list = producers[value], let indices = latestEndUpTo[value] else { return nil }
        let count = Self.countStarted(list, before: readEnd)
        guard count > 0 else { return nil }
        return (list[indices[count - 1]], list[0])
    }

    /// An acknowledged write that ended before `readStart` and started after `time` (`nil`: the initial
    /// state, which precedes every write), if any.
    func overwriter(endingBefore readStart: UInt64, startingAfter time: UInt64?) -> Effect? {
        var (low, high) = (0, acknowledgedByEnd.count)
        while low < high {
            let middle = (low + high) / 2
            if acknowledgedByEnd[middle].end < readStart { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let candidate = acknowledgedByEnd[latestStartUpTo[low - 1]]
        guard let time else { return candidate }
        return candidate.start > time ? candidate : nil
    }
}

/// Whether `first` certainly took effect before `second`: it ended before the other started, or it is the
/// initial state and the other a write.
func precedes(_ first: Effect, _ second: Effect) -> Bool {
    first.record == nil ? second.record != nil : first.end < second.start
}

/// A read of one register: the record it came from and the value it returned.
struct RegisterRead {
    let place: Place
    let value: Int?
    let record: HistoryRecord
}

/// Checks `records` (as ``mergeHistory(_:)`` returns them) and returns every anomaly, in a stable order.
/// - Parameter checkedEntries: The entries of a collection that are registers: whole replacements and
///   whole reads speak of these; other entries (an administrator's) are left to the watcher checks.
package func checkHistory(_ records: [HistoryRecord], checkedEntries: Set<String>) -> [Anomaly] {
    var effects: [Place: [Effect]] = [:]
    var reads: [RegisterRead] = []
    var increments: [Place: [HistoryRecord]] = [:]
    var counterReads: [HistoryRecord] = []
    var finals: [HistoryRecord] = []
    var anomalies: [Anomaly] = []
    var notifications: [Place: [HistoryRecord]] = [:]
    var settled: [Place: HistoryRecord] = [:]

    func effect(_ record: HistoryRecord, _ value: Int?) -> Effect {
        Effect(value: value, start: record.start, end: record.outcome == .unknown ? UInt64.max : record.end ?? UInt64.max,
               acknowledged: record.outcome == .ok, record: record)
    }
    for record in records {
        switch record.kind {
        case .write:
            guard record.outcome != .failed, let entry = record.entry else { continue }
            effects[Place(domain: record.domain, key: record.key, entry: entry), default: []].append(effect(record, record.value))
        case .replace:
            guard record.outcome != .failed else { continue }
            for entry in checkedEntries {
                effects[Place(domain: record.domain, key: record.key, entry: entry), default: []].append(effect(record, record.values?[entry]))
            }
        case .increment:
            guard let entry = record.entry else { continue }
            increments[Place(domain: record.domain, key: record.key, entry: entry), default: []].append(record)
        case .read:
            guard record.outcome == .ok, let entry = record.entry else { continue }
            reads.append(RegisterRead(place: Place(domain: record.domain, key: record.key, entry: entry), value: record.value, record: record))
        case .readAll:
            guard record.outcome == .ok else { continue }
            for entry in checkedEntries.sorted() {
                reads.append(RegisterRead(place: Place(domain: record.domain, key: record.key, entry: entry),
                                          value: record.values?[entry], record: record))
            }
        case .readCounter:
            if record.outcome == .ok { counterReads.append(record) }
        case .notify:
            notifications[Place(domain: record.domain, key: record.key, entry: "\(record.process):\(record.entry ?? "")"), default: []].append(record)
        case .settled:
            settled[Place(domain: record.domain, key: record.key, entry: "\(record.process):\(record.entry ?? "")")] = record
        case .parse:
            if record.outcome != .ok {
                anomalies.append(Anomaly(kind: .tornFile, message: "the domain file of \(record.domain) did not parse after a kill -9: \(record.error ?? "")", slice: [record]))
            }
        case .final:
            finals.append(record)
        }
    }
    let registers = effects.mapValues(Register.init)
    let empty = Register(effects: [])

    // Stale and phantom reads, and the final values (a read made after everything ended).
    func judge(_ read: RegisterRead, isFinal: Bool) {
        let register = registers[read.place] ?? empty
        let readEnd = read.record.end ?? UInt64.max
        let shown = read.value.map(String.init) ?? "nil"
        guard let producer = register.producers(of: read.value, before: readEnd) else {
            anomalies.append(Anomaly(kind: isFinal ? .lostWrite : .phantomRead,
                                     message: "\(read.place.name) \(isFinal ? "ended as" : "read") \(shown), which no write that started before \(isFinal ? "the end" : "the read ended") wrote",
                                     slice: [read.record]))
            return
        }
        let latest = producer.latestEnding
        // A read that may serve a copy is held to its stated bound: only a write acknowledged that long before it
        // began must be seen.
        let mustSeeBefore = read.record.start - min(read.record.staleness ?? 0, read.record.start)
        if let overwriter = register.overwriter(endingBefore: mustSeeBefore, startingAfter: latest.record == nil ? nil : latest.end) {
            let written = overwriter.value.map(String.init) ?? "nil"
            anomalies.append(Anomaly(
                kind: isFinal ? .lostWrite : .staleRead,
                message: isFinal
                    ? "\(read.place.name) ended as \(shown), but the acknowledged write of \(written) came after every write of \(shown) and nothing wrote after it"
                    : "\(read.place.name) read \(shown), but \(written) was written after every write of \(shown) and acknowledged before the read began"
                        + (read.record.staleness.map { " (more than the \(HistoryRecord.milliseconds($0)) ms its mode allows)" } ?? ""),
                slice: [latest.record, overwriter.record, read.record].compactMap { $0 }))
        }
    }
    for read in reads { judge(read, isFinal: false) }
    for final in finals {
        for entry in checkedEntries.sorted() {
            judge(RegisterRead(place: Place(domain: final.domain, key: final.key, entry: entry), value: final.values?[entry], record: final), isFinal: true)
        }
    }

    // Backwards reads: a process's later read returning a value every producer of which ended before any
    // producer of the value its earlier read returned had started.
    // Reads that may serve a copy are held to their bound above, not to the order of the process's reads.
    var recentReads: [Int: [Place: [RegisterRead]]] = [:]
    for read in reads.sorted(by: { ($0.record.process, $0.record.sequence) < ($1.record.process, $1.record.sequence) })
        where read.record.staleness == nil {
        let register = registers[read.place] ?? empty
        var earlier = recentReads[read.record.process, default: [:]][read.place, default: []]
        if let now = register.producers(of: read.value, before: read.record.end ?? UInt64.max) {
            for before in earlier.reversed() where before.value != read.value {
                guard let then = register.producers(of: before.value, before: before.record.end ?? UInt64.max) else { continue }
                if precedes(now.latestEnding, then.earliestStarting) {
                    anomalies.append(Anomaly(
                        kind: .backwardsRead,
                        message: "p\(read.record.process) read \(read.place.name) = \(before.value.map(String.init) ?? "nil"), then the older \(read.value.map(String.init) ?? "nil")",
                        slice: [now.latestEnding.record, then.earliestStarting.record, before.record, read.record].compactMap { $0 }))
                    break
                }
            }
        }
        earlier.append(read)
        if earlier.count > 8 { earlier.removeFirst() }
        recentReads[read.record.process, default: [:]][read.place] = earlier
    }

    // Counters: every read between the increments acknowledged before it began and those that may have
    // been applied by its end; never backwards in one process; at the end, the acknowledged increments,
    // plus at most the unknown ones.
    var sortedEnds: [Place: [UInt64]] = [:]
    var sortedStarts: [Place: [UInt64]] = [:]
    for (place, list) in increments {
        sortedEnds[place] = list.filter { $0.outcome == .ok }.compactMap(\.end).sorted()
        sortedStarts[place] = list.filter { $0.outcome != .failed }.map(\.start).sorted()
    }
    func countBelow(_ list: [UInt64], _ time: UInt64) -> Int {
        var (low, high) = (0, list.count)
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < time { low = middle + 1 } else { high = middle }
        }
        return low
    }
    func lastIncrement(of place: Place, endingBefore time: UInt64) -> HistoryRecord? {
        increments[place]?.filter { $0.outcome == .ok && ($0.end ?? .max) < time }.max { ($0.end ?? 0) < ($1.end ?? 0) }
    }
    var lastCounterRead: [Int: [Place: HistoryRecord]] = [:]
    for read in counterReads.sorted(by: { ($0.process, $0.sequence) < ($1.process, $1.sequence) }) {
        guard let entry = read.entry else { continue }
        let place = Place(domain: read.domain, key: read.key, entry: entry)
        let count = read.value ?? 0
        let atLeast = countBelow(sortedEnds[place] ?? [], read.start)
        let atMost = countBelow(sortedStarts[place] ?? [], read.end ?? .max)
        if count < atLeast {
            anomalies.append(Anomaly(kind: .staleRead,
                                     message: "counter \(place.name) read \(count), but \(atLeast) increments were acknowledged before the read began",
                                     slice: [lastIncrement(of: place, endingBefore: read.start), read].compactMap { $0 }))
        } else if count > atMost {
            anomalies.append(Anomaly(kind: .phantomRead,
                                     message: "counter \(place.name) read \(count), but only \(atMost) increments not known to have failed had started by the read's end",
                                     slice: [read]))
        }
        if let previous = lastCounterRead[read.process]?[place], (previous.value ?? 0) > count {
            anomalies.append(Anomaly(kind: .backwardsRead,
                                     message: "p\(read.process) read counter \(place.name) = \(previous.value ?? 0), then \(count)",
                                     slice: [previous, read]))
        }
        lastCounterRead[read.process, default: [:]][place] = read
    }
    for final in finals {
        let counterPlaces = increments.keys.filter { $0.domain == final.domain }.sorted()
        for place in counterPlaces {
            let list = increments[place] ?? []
            let acknowledged = list.filter { $0.outcome == .ok }.count
            let unknown = list.filter { $0.outcome == .unknown }.count
            let count = final.value ?? 0
            if count < acknowledged || count > acknowledged + unknown {
                anomalies.append(Anomaly(kind: .counterMismatch,
                                         message: "counter \(place.name) ended at \(count) after \(acknowledged) acknowledged increments, \(unknown) of unknown outcome and \(list.count - acknowledged - unknown) failed",
                                         slice: [final]))
            }
        }
    }

    // Watchers: no collection told twice in a row, each `.old` the previous `.new`, and the last `.new` of a
    // watcher alive at the end the collection stored then (with the administrators' entries as a read merges
    // them: managed ones over everything, system ones under the user's).
    for (watcher, told) in notifications.sorted(by: { $0.key < $1.key }) {
        let ordered = told.sorted { $0.sequence < $1.sequence }
        for (index, notification) in ordered.enumerated() {
            if notification.old == notification.values {
                anomalies.append(Anomaly(kind: .repeatedNotification, message: "watcher \(watcher.name) was told a change from a collection to itself", slice: [notification]))
            }
            guard index > 0 else { continue }
            let previous = ordered[index - 1]
            if previous.values == notification.values {
                anomalies.append(Anomaly(kind: .repeatedNotification, message: "watcher \(watcher.name) was told the same collection twice in a row", slice: [previous, notification]))
            } else if notification.old != previous.values {
                anomalies.append(Anomaly(kind: .brokenNotificationChain, message: "watcher \(watcher.name) was told an .old that is not the previous .new", slice: [previous, notification]))
            }
        }
    }
    for (watcher, end) in settled.sorted(by: { $0.key < $1.key }) {
        guard let final = finals.first(where: { $0.domain == end.domain && $0.key == end.key }) else { continue }
        var expected = final.system ?? [:]
        for (name, value) in final.values ?? [:] { expected[name] = value }
        for (name, value) in final.managed ?? [:] { expected[name] = value }
        let last = notifications[watcher]?.max { $0.sequence < $1.sequence }
        let lastNew = last?.values ?? end.values ?? [:]
        if lastNew != expected {
            anomalies.append(Anomaly(kind: .lastNotificationNotFinal,
                                     message: "watcher \(watcher.name)'s last .new is not the stored collection after the run quiesced",
                                     slice: [last, end, final].compactMap { $0 }))
        }
    }
    return anomalies
}
