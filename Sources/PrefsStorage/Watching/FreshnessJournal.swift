import Synchronization

/// The read freshness of one file the process may watch: the token its reads compare (see
/// ``FreshnessTracker``), kept by the ``FreshnessJournal`` of a ``WatchEngine``.
///
/// The stamp is 0 while no watch vouches for the file, and otherwise changes, to a value never used
/// before, with every event that may concern the file; it is written only under the engine's mutex, and
/// read without it, so that a read of an unchanged file takes no lock (see ``currentToken()``).
final class FileFreshness: FreshnessTracker {
    let stamp = Atomic<UInt64>(0)
    /// Every event taken that may concern the file, vouched for or not (see ``changeCount()``).
    let events = Atomic<UInt64>(0)
    /// Whether an inotify watch of the engine would deliver every event that may concern the file: of its
    /// directory, or of the deepest existing ancestor while the directory does not exist, on a file system
    /// whose events are complete, with no polling fallback. Without it `events` may stand still while the
    /// file changes (a watch that could not be placed, the watch limit reached), so it counts for nothing.
    let eventsCovered = Atomic<Bool>(false)
    private let engine: WatchEngine

    init(engine: WatchEngine) { self.engine = engine }

    /// One atomic load when no watch vouches; else that, the engine's check for pending events (one
    /// `ioctl`), and a second load.
    func currentToken() -> FreshnessToken? {
        guard stamp.load(ordering: .acquiring) != 0 else { return nil }
        // Invariant F1: pending events first (then the stamp is compared).
        engine.takePendingEvents()
        let value = stamp.load(ordering: .acquiring)
        return value == 0 ? nil : FreshnessToken(value)
    }

    /// Pending events taken first (one `ioctl`), then two atomic loads; `nil` while no watch's events
    /// would reach the file (see ``eventsCovered``).
    func changeCount() -> UInt64? {
        // Invariant F1: pending events first. Invariant F8: counted only while covered.
        engine.takePendingEvents()
        guard eventsCovered.load(ordering: .acquiring) else { return nil }
        return events.load(ordering: .acquiring)
    }
}

/// The trackers of the files an engine's watches can vouch for, one per path, and the stamps they take.
struct FreshnessJournal {
    private struct Entry {
        weak var tracker: FileFreshness?
    }

    private var trackers: [String: Entry] = [:]
    private var lastStamp: UInt64 = 0
    /// The count at which entries whose tracker is gone are dropped, doubled with the live ones.
    private var pruneAt = 64

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

    /// Whether the engine's watches now deliver every event that may concern the file (see
    /// ``FileFreshness/eventsCovered``). Losing that moves the count and the epoch, so nothing trusted on
    /// the count stays trusted.
    func setCovered(_ tracker: FileFreshness, _ covered: Bool) {
        // Invariant F6: every change moves the epoch (here, of what events cover).
        // Invariant F8: counted only while covered.
        guard tracker.eventsCovered.load(ordering: .relaxed) != covered else { return }
        if !covered { tracker.events.add(1, ordering: .releasing) }
        tracker.eventsCovered.store(covered, ordering: .releasing)
        ReadEpoch.advance()
    }

    /// Something may have changed the file: a tracker that vouches gets a new stamp.
    mutating func touch(_ tracker: FileFreshness) {
        // Invariant F2: every event moves a stamp (to a value never used before).
        // Invariant F6: every change moves the epoch.
        tracker.events.add(1, ordering: .releasing)
        // Whether vouched or not: a count of events an administrator's domain trusts has moved.
        defer { ReadEpoch.advance() }
        guard tracker.stamp.load(ordering: .relaxed) != 0 else { return }
        lastStamp &+= 1
        tracker.stamp.store(lastStamp, ordering: .releasing)
    }

    /// Whether a watch vouches for the file now: one that starts vouching gets a new stamp, one that stops
    /// gets 0.
    mutating func setVouched(_ tracker: FileFreshness, _ vouched: Bool) {
        // Invariant F6: every change moves the epoch (here, of what the engine vouches for).
        let current = tracker.stamp.load(ordering: .relaxed)
        if !vouched {
            if current != 0 {
                tracker.events.add(1, ordering: .releasing)
                tracker.stamp.store(0, ordering: .releasing)
                ReadEpoch.advance()
            }
        } else if current == 0 {
            tracker.events.add(1, ordering: .releasing)
            lastStamp &+= 1
            tracker.stamp.store(lastStamp, ordering: .releasing)
            ReadEpoch.advance()
        }
    }
}
