import Synchronization

/// The generation of one path the process may watch (see ``FreshnessTracker``), kept by the
/// ``FreshnessJournal`` of a ``WatchEngine``: one per path, shared by every subscription to it and by every
/// domain object over it.
///
/// `generation` is 0 while no watch's events would reach the path, and otherwise changes, to a value never
/// used before, with every event that may concern it; it and `vouchesContents` are written only under the
/// engine's mutex, and read without it, so that a read of an unchanged file takes no lock.
final class FileFreshness: FreshnessTracker {
    let generation = Atomic<UInt64>(0)
    /// Whether the generation also vouches for the file's contents (see ``FreshnessTracker/currentGeneration()``).
    let vouchesContents = Atomic<Bool>(false)
    private let engine: WatchEngine

    init(engine: WatchEngine) { self.engine = engine }

    /// This process changed the file: its generation moves (see ``FreshnessTracker/changedHere()``).
    func changedHere() { engine.changedHere(self) }

    /// One atomic load when no watch reaches the path; else that, the engine's check for pending events
    /// (one `ioctl`), and three more loads.
    func currentGeneration() -> (value: UInt64, vouchesContents: Bool)? {
        guard generation.load(ordering: .acquiring) != 0 else { return nil }
        // Invariant F1: pending events first (then the generation is read).
        engine.takePendingEvents()
        // Read twice around the flag, so that the flag belongs to the generation returned: every change of the
        // flag moves the generation too.
        let value = generation.load(ordering: .acquiring)
        let vouches = vouchesContents.load(ordering: .acquiring)
        guard value != 0, generation.load(ordering: .acquiring) == value else { return nil }
        return (value, vouches)
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

    /// The one place generations are given (only under the engine's mutex).
    private func nextGeneration() -> UInt64 {
        clock.last.add(1, ordering: .acquiringAndReleasing).newValue
    }

    /// Something may have changed what lies at the path: a path the watch reaches gets a new generation.
    func touch(_ tracker: FileFreshness) {
        // Invariant F2: every event moves a generation (to a value never used before).
        guard tracker.generation.load(ordering: .relaxed) != 0 else { return }
        tracker.generation.store(nextGeneration(), ordering: .releasing)
    }

    /// Whether the engine's watches now deliver every event that may concern the path (`reached`), and
    /// whether its generation also vouches for the file's contents. Any change of either gives the path a
    /// new generation (or 0, when no longer reached), so nothing kept under the old one stays kept.
    func update(_ tracker: FileFreshness, reached: Bool, vouchesContents: Bool) {
        // Invariant F3: vouch only where events are complete.
        let vouches = reached && vouchesContents
        let isReached = tracker.generation.load(ordering: .relaxed) != 0
        guard isReached != reached || tracker.vouchesContents.load(ordering: .relaxed) != vouches else { return }
        tracker.vouchesContents.store(vouches, ordering: .releasing)
        // A path no longer reached moves the engine's count too, so that the count covers every change.
        let next = nextGeneration()
        tracker.generation.store(reached ? next : 0, ordering: .releasing)
    }
}

/// The last generation an engine gave: its count of changes (see ``WatchEngine/changeCount``).
final class GenerationClock: Sendable {
    let last = Atomic<UInt64>(0)
}
