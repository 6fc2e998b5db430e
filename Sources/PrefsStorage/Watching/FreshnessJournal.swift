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
    /// Where generations come from (never reused, whatever the path), and its engine's count of changes.
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

    /// Gives `tracker` a new generation (or 0, not reached), then moves the engine's count: under the engine's
    /// mutex, for what its events and watches tell. A generation is taken from the clock (see ``GenerationClock``).
    private func give(_ tracker: FileFreshness, reached: Bool, vouchesContents: Bool) {
        clock.give(tracker, reached: reached, vouchesContents: vouchesContents)
    }

    /// Something may have changed what lies at the path: a path the watch reaches gets a new generation.
    func touch(_ tracker: FileFreshness) {
        // Invariant F2: every event moves a generation (to a value never used before).
        clock.touch(tracker)
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

/// Where an engine's generations come from, and its count of changes (see ``WatchEngine/changeCount``).
///
/// Lock-free, so that a file domain's own write moves its path's generation (``touch(_:)``, through
/// `FileFreshness.changedHere`) without waiting for the engine's mutex, which the watch thread holds while it
/// applies events (making system calls: `lstat`, `inotify_add_watch`); the engine's own changes, made under
/// that mutex, take their generations here too. Two rules keep it sound:
/// - Every generation is a value of `last` taken by an atomic increment: never given twice, whatever the path.
/// - `last` is incremented again after each generation is stored: a reader that loads the count, then the
///   generations, and later finds the same count knows that no generation was stored in between (a store
///   after its loads moves the count after it; one before them is what it loaded).
final class GenerationClock: Sendable {
    /// The count: moved (at least) twice per generation given, never back.
    let last = Atomic<UInt64>(0)

    /// Gives `tracker` a new generation (or 0, not reached), then moves the count. Under the engine's mutex;
    /// a concurrent ``touch(_:)`` of the same tracker may be overwritten, by a generation never stored before
    /// either, which moves it as much.
    func give(_ tracker: FileFreshness, reached: Bool, vouchesContents: Bool) {
        let next = last.add(1, ordering: .relaxed).newValue
        tracker.state.store(reached ? next << 1 | (vouchesContents ? 1 : 0) : 0, ordering: .releasing)
        last.add(1, ordering: .releasing)
    }

    /// Gives a path the watch reaches a new generation, keeping whether it vouches for the file's contents; a
    /// path not reached (0) stays so. With no lock: a compare-and-swap, so that a change of the path's state
    /// made meanwhile under the engine's mutex is never undone.
    func touch(_ tracker: FileFreshness) {
        // Invariant F2: every event moves a generation (to a value never used before).
        var state = tracker.state.load(ordering: .acquiring)
        while state != 0 {
            let next = last.add(1, ordering: .relaxed).newValue
            let (exchanged, found) = tracker.state.compareExchange(
                expected: state, desired: next << 1 | state & 1, ordering: .acquiringAndReleasing)
            if exchanged {
                last.add(1, ordering: .releasing)
                return
            }
            state = found
        }
    }
}
