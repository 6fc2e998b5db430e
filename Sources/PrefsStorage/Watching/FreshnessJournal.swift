import Synchronization

/// The generation of one path the process may watch (see ``FreshnessTracker``), kept by the
/// ``FreshnessJournal`` of a ``WatchEngine``: one per path, shared by every subscription to it and by every
/// domain object over it.
///
/// Its generation is 0 while no watch's events would reach the path, and otherwise changes, to a value never
/// used before, with every event that may concern it; it is written only under the engine's mutex, and read
/// without it, so that a read of an unchanged file takes no lock.
final class FileFreshness: FreshnessTracker {
    /// The generation shifted left by one, with whether it vouches for the file's contents in the low bit: one
    /// value, so that the flag read is always the one stored with the generation returned. 0: not reached.
    let state = Atomic<UInt64>(0)
    private let engine: WatchEngine

    init(engine: WatchEngine) { self.engine = engine }

    /// This process changed the file: its generation moves (see ``FreshnessTracker/changedHere()``).
    func changedHere() { engine.changedHere(self) }

    /// One atomic load when no watch reaches the path; else that, the engine's check for pending events
    /// (one `ioctl`), and one more load.
    func currentGeneration() -> (value: UInt64, vouchesContents: Bool)? {
        guard state.load(ordering: .acquiring) != 0 else { return nil }
        // Invariant F1: pending events first (then the generation is read).
        engine.takePendingEvents()
        let now = state.load(ordering: .acquiring)
        guard now != 0 else { return nil }
        return (now >> 1, now & 1 == 1)
    }
}

/// The generations of the paths an engine's watches reach, one tracker per path, and the values they take.
struct FreshnessJournal {
    private struct Entry {
        weak var tracker: FileFreshness?
    }

    private var trackers: [String: Entry] = [:]
    /// The last generation given: generations are never reused, whatever the path. Its engine's count of changes.
    private let clock: GenerationClock
    /// The count at which entries whose tracker is gone are dropped, doubled with the live ones.
    private var pruneAt = 64

    init(clock: GenerationClock) { self.clock = clock }

    /// The tracker of `path`, made on first use and shared while someone holds it.
    mutating func tracker(forPath path: String, engine: WatchEngine) -> FileFreshness {
        if let existing = trackers[path]?.tracker { return existing }
        if trackers.count >= pruneAt {
            trackers = trackers.filter { $0.value.tracker != nil }
            pruneAt = max(64, trackers.count * 2)
        }
        let tracker = FileFreshness(engine: engine)
        trackers[path] = Entry(tracker: tracker)
        return tracker
    }

    /// Gives `tracker` the next generation (or 0, not reached), then publishes it as the engine's count: the one
    /// place generations are given, only under the engine's mutex. In that order, so that a reader that sees the
    /// count sees the path's generation that moved it.
    private func give(_ tracker: FileFreshness, reached: Bool, vouchesContents: Bool) {
        let next = clock.last.load(ordering: .relaxed) &+ 1
        tracker.state.store(reached ? next << 1 | (vouchesContents ? 1 : 0) : 0, ordering: .releasing)
        clock.last.store(next, ordering: .releasing)
    }

    /// Something may have changed what lies at the path: a path the watch reaches gets a new generation.
    func touch(_ tracker: FileFreshness) {
        // Invariant F2: every event moves a generation (to a value never used before).
        let state = tracker.state.load(ordering: .relaxed)
        guard state != 0 else { return }
        give(tracker, reached: true, vouchesContents: state & 1 == 1)
    }

    /// Whether the engine's watches now deliver every event that may concern the path (`reached`), and
    /// whether its generation also vouches for the file's contents. Any change of either gives the path a
    /// new generation (or 0, when no longer reached; the engine's count moves then too), so nothing kept under
    /// the old one stays kept.
    func update(_ tracker: FileFreshness, reached: Bool, vouchesContents: Bool) {
        // Invariant F3: vouch only where events are complete.
        let vouches = reached && vouchesContents
        let state = tracker.state.load(ordering: .relaxed)
        guard (state != 0) != reached || (state & 1 == 1) != vouches else { return }
        give(tracker, reached: reached, vouchesContents: vouches)
    }
}

/// The last generation an engine gave: its count of changes (see ``WatchEngine/changeCount``).
final class GenerationClock: Sendable {
    let last = Atomic<UInt64>(0)
}
