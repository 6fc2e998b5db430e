import PrefsPropertyList
import PrefsStorage
import Synchronization

extension RVS_PersistentPrefs {
    /// Whether this instance's observers also hear changes to its collection made elsewhere: by other
    /// instances in this process, by other processes, and by the `harness defaults` inspector. Off by
    /// default, and then nothing is heard but writes through this instance.
    ///
    /// Turn it on when another party may change the collection while the instance lives: an app and its
    /// extension sharing a group suite, two windows each holding an instance, a daemon whose settings an
    /// administrator changes. With it on, key-path observers (see
    /// ``PrefsObserving/observe(_:options:isolation:changeHandler:)``), ``changes`` and Swift Observation are told of
    /// such a change:
    /// - only when the collection actually differs from what this instance last saw: a write to another
    ///   storage key in the same domain, or a rewrite of identical bytes, notifies nobody;
    /// - with `.new` read over the collection found to differ, and `.old` over the one the previous
    ///   notification carried as new (or the one the instance saw when watching began): an observer never
    ///   hears the same collection twice in a row, and `.old` never goes back to a value it was not told;
    /// - possibly coalesced: several changes in quick succession may make one notification, but the last
    ///   notification after a burst always carries the final stored value;
    /// - `.prior` notifications of a change made elsewhere come after the change, just before the others.
    ///
    /// A handler registered from an actor (the main actor included) runs on that actor (see
    /// ``PrefsObserving/observe(_:options:isolation:changeHandler:)``); Swift Observation's `onChange` runs on
    /// the main actor when watching was turned on there (a `@MainActor` model's `init`), else on a delivery
    /// thread. Other handlers for changes made elsewhere run on one of a few delivery threads that every
    /// watching instance of the process shares (an instance's deliveries always one at a time, in order; the
    /// instances watching one suite share one thread, told one after another), while the instance's
    /// operations on other threads wait, as they do during its own writes' handlers. Keep them short: a
    /// handler that blocks holds up other instances' deliveries (every instance of its suite), and one that
    /// waits for another instance's delivery, even the handler of a write, may wait for ever. The instance is
    /// not `Sendable`: keep it, and the state its handlers touch, safe to reach from those threads (an instance
    /// used from several threads already is).
    ///
    /// How changes are noticed: the process keeps one inotify instance for every watching instance and
    /// watches the domain file's directory (so a file replaced by rename, or created later with its
    /// directory, is seen). Where inotify cannot see every change (writes made by other machines on NFS,
    /// SMB or FUSE file systems, or inotify unavailable or out of watches) the file is also checked with
    /// `stat()` every ``DomainWatching/pollingInterval`` (1 second by default); see <doc:SharingAcrossMachines>.
    /// Watching covers the file domains of the instance's ``userDefaults`` as they are when it is turned
    /// on; after changing ``groupID`` or ``userDefaults``, turn it off and on again. A suite over an
    /// ``InMemoryDomainStorage`` has no file to watch: other instances' writes to it are not heard.
    public var watchesExternalChanges: Bool {
        get { externalChanges.isWatching }
        set {
            // Both under the operation lock, so that concurrent switches end in the last one's state. (The
            // watch thread never takes it, so stopping, which may wait for that thread, cannot deadlock.)
            // Exclusively: not while a write of another thread waits for its domain, which was told whether
            // the instance watches when it started.
            exclusively {
                if newValue {
                    swiftObservation.noteWatchingTurnedOn(onMainActor: HandlerIsolation.isOnMainQueue)
                    externalChanges.start(for: self)
                } else {
                    externalChanges.stop()
                }
            }
        }
    }

    /// The collection as stored now, through the search list, leaving ``lastError`` as it was; `nil` when
    /// it cannot be read. Kept as property-list values: no conversion to native values and back.
    ///
    /// A delivery (`deliveringChange`) of the suite whose sources are watched reads again only the sources
    /// whose watches fired since the last delivery, using the snapshot a watch handed over when it did (an etcd
    /// watch's event: no round trip), and what it read of the others before (see ``ExternalChanges/plan(for:fresh:)``).
    /// Only the search itself is served so: the `userDefaults` and `key` accessors, whose overrides may read
    /// other instances, and the handlers' own reads are answered as any read is.
    /// - Parameter recording: At the start of watching: every source is read, and what was read recorded.
    func currentCollectionForWatching(deliveringChange: Bool = false, recording: Bool = false) -> [String: PropertyListValue]? {
        foundForWatching(deliveringChange: deliveringChange, recording: recording)?.collection.entries
    }

    /// ``currentCollectionForWatching(deliveringChange:recording:)``, as the version every watching instance that
    /// finds it in the same snapshot under the same storage key shares (see ``DeliveredCollection``), with the
    /// snapshot the search found it in (`nil` for none, or a value built from several domains).
    func foundForWatching(deliveringChange: Bool, recording: Bool = false) -> (collection: DeliveredCollection, snapshot: DomainSnapshot?)? {
        guard let suite = try? suiteForOperation() else { return nil }
        let storageKey = key
        let plan = deliveringChange || recording ? externalChanges.plan(for: suite, fresh: recording) : nil
        do throws(PrefsError) {
            let found: DefaultsSuite.Found?
            if let plan {
                var ignored: [PrefsError] = []
                found = try suite.find(storageKey, collection: false, problems: &ignored, reading: plan.snapshot(of:))
                externalChanges.remember(plan, of: suite)
            } else {
                found = try suite.find(storageKey)
            }
            guard let found else { return (DeliveredCollection.found([:], in: nil, storageKey: storageKey), nil) }
            let collection = DeliveredCollection.found(found.value.dictionaryValue ?? [:], in: found.snapshot, storageKey: storageKey)
            return (collection, found.snapshot)
        } catch {
            // What it read is not recorded: the next delivery reads every source.
            if plan != nil { externalChanges.forgetReads() }
            return nil
        }
    }

    /// Called on a delivery thread when a watched domain may have changed: compares the stored collection
    /// with what the instance's observers were last told and, if it differs, tells exactly that change.
    func deliverExternalChange() {
        // Exclusively: after a write in progress is told (its domain's round trips run without the operation
        // lock over etcd), never in the middle of it, so that the change is not told twice.
        exclusively {
            // Only the search that finds the change: a handler's own reads are answered as always.
            guard let (current, snapshot) = foundForWatching(deliveringChange: true) else { return }
            guard let (previous, changed) = externalChanges.replaceLastTold(with: current) else { return }
            var change = ChangeEvent(before: previous.entries, after: current.entries, changedEntries: changed, sendsPriors: true, madeElsewhere: true)
            // What observers' key paths are read over: the versions other instances found too, converted once.
            change.delivered = (previous, current)
            tell(change)
            // Once per change for the suite, however many of its instances hear it.
            userDefaults?.postDidChange(afterChangeFoundIn: snapshot)
        }
    }
}

/// The watching state of one instance: its domain watches, and the collection its observers were last
/// told, which every change made elsewhere is compared with.
final class ExternalChanges: Sendable {
    private struct State {
        var watches: [any DomainChangeWatch] = []
        /// Whether watching is on (even where no domain of the suite can tell of changes).
        var active = false
        /// The collection the instance's observers were last told (or saw when watching began): the version
        /// other watching instances found too, when a delivery (or the start of watching) found it.
        var lastTold: DeliveredCollection?
        var deliveryScheduled = false
        /// Moves each time watching stops: a handler's call queued to its actor for a change made elsewhere is
        /// made only while this is the era it was queued in (see ``isWatching(inEra:)``).
        var era = 0
        /// Deliveries completed, whether or not they told anything.
        var deliveries = 0
        var deliveryHook: (@Sendable () -> Void)?
        /// The instance, for the delivery thread; set when watching starts.
        var owner: InstanceReference?
        /// What deliveries know of the watched suite's sources.
        var reads: SourceReads?
        /// The shared delivery thread the deliveries run on, one at a time: the watched suite's (see
        /// ``DeliveryLane/lane(for:)``); set when watching starts.
        var lane: DeliveryLane?
    }

    /// What the deliveries of one watched suite know of its sources (by index in its `sources`), so that a
    /// delivery reads again only what changed (SPEC §10, "A delivery reads what changed").
    ///
    /// Arrays by index and bit sets, not dictionaries: every watching instance makes one plan per change, and
    /// dictionaries made and grown per plan cost more than the search itself (issue 27, "watchers scale linearly").
    /// A suite has at most 64 sources (``DefaultsSuite`` counts the sources a search consulted in 64 bits).
    struct SourceReads {
        let suite: DefaultsSuite
        /// The sources whose watches tell of their changes (bit `index`); the others are read by every delivery,
        /// unless their generation shows them unchanged.
        let watched: UInt64
        /// The snapshot of each source that the last read found (and, for a source with no watch, the
        /// generation it reported before that read); `nil` where none is known.
        var known: [SourceRead?]
        /// The snapshots watches handed over since, and the sources whose watches fired without one (bit `index`).
        var handedOver: [Int: DomainSnapshot] = [:]
        var changed: UInt64 = 0

        init(suite: DefaultsSuite, watched: UInt64) {
            (self.suite, self.watched) = (suite, watched)
            known = Array(repeating: nil, count: suite.sources.count)
        }

        func isWatched(_ index: Int) -> Bool { watched & (1 << UInt64(index)) != 0 }
    }

    /// What one read of a source found: its snapshot, and for a source with no watch the generation it
    /// reported before the read.
    struct SourceRead {
        let snapshot: DomainSnapshot
        let generation: UInt64?
    }

    /// How one delivery's search takes each source's snapshot.
    ///
    /// It makes nothing per source: what deliveries knew is shared with the instance's state (copied only if
    /// that changes meanwhile), and what the search reads (one source, most often) is kept inline.
    final class DeliveryPlan {
        private let suite: DefaultsSuite
        /// What the last delivery read, by source; `nil` for every source at the start of watching (`fresh`).
        private var known: [SourceRead?]?
        private let watched: UInt64
        /// The sources to read again: their watches fired (bit `index`).
        private let changed: UInt64
        private let handedOver: [Int: DomainSnapshot]
        /// What the search read (or took from a watch) that the next delivery must know: the first inline,
        /// any more after it.
        private(set) var firstTaken: (index: Int, read: SourceRead)?
        private(set) var moreTaken: [(index: Int, read: SourceRead)] = []

        init(suite: DefaultsSuite, known: [SourceRead?]?, watched: UInt64, changed: UInt64, handedOver: [Int: DomainSnapshot]) {
            (self.suite, self.known, self.watched, self.changed, self.handedOver) = (suite, known, watched, changed, handedOver)
        }

        /// Lets go of what the last delivery read, once the search is done: the instance's state then updates
        /// it in place instead of copying it.
        func finish() { known = nil }

        private func take(_ index: Int, _ read: SourceRead) {
            if firstTaken == nil { firstTaken = (index, read) } else { moreTaken.append((index, read)) }
        }

        /// The snapshot of source `index`: the one its watch handed over, one known unchanged (its watch did
        /// not fire, or it reports the generation it reported before the read that found it), or a read.
        func snapshot(of index: Int) throws(PrefsError) -> DomainSnapshot {
            let bit: UInt64 = 1 << UInt64(index)
            let isWatched = watched & bit != 0
            let storage = suite.sources[index].storage
            if let known {
                if let handed = handedOver[index] {
                    take(index, SourceRead(snapshot: handed, generation: nil))
                    return handed
                }
                if changed & bit == 0, let read = known[index] {
                    // A watched source whose watch did not fire; a source with no watch whose generation is
                    // the one it reported before the read that found it (compared outside any lock: a file
                    // domain's generation takes its engine's events).
                    if isWatched { return read.snapshot }
                    if let generation = read.generation, storage.generation == generation { return read.snapshot }
                }
            }
            // Invariant F5: evidence before the read (the generation, for a source no watch tells of).
            let generation = isWatched ? nil : storage.generation
            let snapshot = try storage.snapshot()
            take(index, SourceRead(snapshot: snapshot, generation: generation))
            return snapshot
        }
    }

    /// The plan of a delivery's read of `suite` (or of the first read when watching starts, `fresh`: every
    /// source read): what changed since the last delivery is taken, so that a change told later schedules
    /// another. `nil` when `suite` is not the one watched (an override of `userDefaults` that changed): the
    /// delivery then searches as any read does.
    func plan(for suite: DefaultsSuite, fresh: Bool) -> DeliveryPlan? {
        state.withLock { state -> DeliveryPlan? in
            guard let reads = state.reads, reads.suite === suite else { return nil }
            if !reads.handedOver.isEmpty { state.reads?.handedOver = [:] }
            state.reads?.changed = 0
            return DeliveryPlan(suite: suite, known: fresh ? nil : reads.known, watched: reads.watched,
                                changed: reads.changed, handedOver: reads.handedOver)
        }
    }

    /// Records what a delivery's search read of `suite`'s sources, for the next.
    func remember(_ plan: DeliveryPlan, of suite: DefaultsSuite) {
        plan.finish()
        guard let first = plan.firstTaken else { return }
        state.withLock { state in
            guard state.reads?.suite === suite else { return }
            state.reads?.known[first.index] = first.read
            for (index, read) in plan.moreTaken { state.reads?.known[index] = read }
        }
    }

    /// Forgets what deliveries read: the next reads every source (after a read that failed).
    func forgetReads() {
        state.withLock { state in
            guard let count = state.reads?.known.count else { return }
            state.reads?.known = Array(repeating: nil, count: count)
        }
    }

    private let state = PrefsMutex(State())

    init() {}

    var isWatching: Bool { state.withLock { $0.active } }

    /// The lane the deliveries run on while watching; `nil` when not watching.
    var deliveryLane: DeliveryLane? { state.withLock { $0.lane } }

    /// The number of deliveries completed so far (whether or not they told anything).
    package var deliveriesCompleted: Int { state.withLock { $0.deliveries } }

    /// Called after each delivery completes, for a test that waits for one (see the test support's
    /// `waitForDeliveries(atLeast:)`); `nil` by default.
    package var deliveryHook: (@Sendable () -> Void)? {
        get { state.withLock { $0.deliveryHook } }
        set { state.withLock { $0.deliveryHook = newValue } }
    }

    /// Starts watching the domains of `owner`'s suite (called under its operation lock). The watches are
    /// in place before the collection is read, so no change falls in between.
    func start(for owner: RVS_PersistentPrefs) {
        guard !isWatching, let suite = try? owner.suiteForOperation() else { return }
        var made: [any DomainChangeWatch] = []
        var watched: UInt64 = 0
        for (index, source) in suite.sources.enumerated() {
            // One watch of the domain for every watching instance of the process (see SharedDomainWatch).
            guard let watch = SharedDomainWatch.join(source.storage, { [weak self] snapshot in
                self?.scheduleDelivery(source: index, handingOver: snapshot)
            }) else { continue }
            made.append(watch)
            watched |= 1 << UInt64(index)
        }
        let lane = DeliveryLane.lane(for: suite)
        state.withLock { state in
            state.reads = SourceReads(suite: suite, watched: watched)
            state.lane = lane
        }
        let seen = owner.foundForWatching(deliveringChange: false, recording: true)?.collection
        let missed = state.withLock { state -> Bool in
            state.owner = InstanceReference(owner)
            state.watches = made
            state.active = true
            state.lastTold = seen
            // A watch's call after the first read's plan and before this point found watching inactive and queued
            // nothing: its change may be newer than what the first read found, so a delivery looks.
            guard let reads = state.reads, reads.changed != 0 || !reads.handedOver.isEmpty, !state.deliveryScheduled else {
                return false
            }
            // A snapshot handed over meanwhile may be older than what the first read found (its round trip
            // answered after the watch's event): the delivery reads those sources instead of using it.
            for index in reads.handedOver.keys { state.reads?.changed |= 1 << UInt64(index) }
            state.reads?.handedOver = [:]
            state.deliveryScheduled = true
            return true
        }
        if missed { queueDelivery(on: lane) }
        // The observers registered before watching began classified over what it found (see
        // AnyPrefsObserver.classify): work of the start, not of the first change, which every watcher hears at once.
        if let seen { for registration in owner.observers.observers { registration.observer.classify(owner, over: seen) } }
    }

    /// Stops watching; idempotent. May be called from a handler.
    func stop() {
        let stopped = state.withLock { state -> [any DomainChangeWatch] in
            defer { state.watches = []; state.active = false; state.lastTold = nil; state.reads = nil; state.lane = nil }
            if state.active { state.era += 1 }
            return state.watches
        }
        for watch in stopped { watch.cancel() }
    }

    /// The watching era now: a call queued for a change made elsewhere notes it, and is made only if watching has
    /// not stopped since (``isWatching(inEra:)``).
    var era: Int { state.withLock { $0.era } }

    /// Whether watching is on and has not stopped since `era` was noted.
    func isWatching(inEra era: Int) -> Bool { state.withLock { $0.active && $0.era == era } }

    /// The collection the observers were last told (or saw when watching began), while watching.
    var lastTold: DeliveredCollection? { state.withLock { $0.lastTold } }

    /// Records what a write through the instance told (or, when silenced, would have told), so that it is
    /// not told again as a change made elsewhere.
    ///
    /// What the last delivery read of the writable domain, and any snapshot its watch handed over, is from before
    /// the write: a delivery queued before it, reusing them while the write's event is not drained yet, would tell
    /// the write undone (its collection, then the earlier one). So the next delivery reads that domain again, and
    /// finds what the write made. (Only it: over etcd each other source read again is a round trip.)
    func sawOwnWrite(_ collection: [String: PropertyListValue]) {
        state.withLock { state in
            guard state.active else { return }
            state.lastTold = DeliveredCollection(collection)
            guard let reads = state.reads,
                  let index = reads.suite.sources.firstIndex(where: { $0.role == .persistent }) else { return }
            // A source with no watch is read again anyway: the write moved its generation.
            if reads.watched & (1 << UInt64(index)) != 0 { state.reads?.changed |= 1 << UInt64(index) }
            state.reads?.handedOver[index] = nil
        }
    }

    /// Makes `current` the collection last told, and returns the one it replaces with the names of the entries
    /// that differ; `nil` when it is the same (nothing to tell) or watching stopped.
    func replaceLastTold(with current: DeliveredCollection) -> (previous: DeliveredCollection, changed: Set<String>)? {
        // What changed, worked out outside the state's lock (once for every instance that was last told the
        // same version); the last told is then replaced only if it is still the one compared.
        guard let previous = state.withLock({ state in state.active ? state.lastTold ?? DeliveredCollection([:]) : nil }),
              let changed = current.changes(since: previous) else { return nil }
        let replaced = state.withLock { state -> Bool in
            guard state.active else { return false }
            // Only a write through the instance replaces it meanwhile, and it holds the operation lock the
            // caller holds: the check is a guard, not a race that happens.
            guard state.lastTold == nil || state.lastTold === previous else { return false }
            state.lastTold = current
            return true
        }
        return replaced ? (previous, changed) : nil
    }

    /// Called on the watch thread of source `index`: notes what changed (the snapshot its watch handed over,
    /// else that it must be read again); one delivery is queued for any number of events until it starts.
    private func scheduleDelivery(source index: Int, handingOver snapshot: DomainSnapshot?) {
        let lane = state.withLock { state -> DeliveryLane? in
            if let snapshot {
                state.reads?.handedOver[index] = snapshot
                state.reads?.changed &= ~(1 << UInt64(index))
            } else {
                if state.reads?.handedOver.isEmpty == false { state.reads?.handedOver[index] = nil }
                state.reads?.changed |= 1 << UInt64(index)
            }
            guard state.active, !state.deliveryScheduled, let lane = state.lane else { return nil }
            state.deliveryScheduled = true
            return lane
        }
        if let lane { queueDelivery(on: lane) }
    }

    /// Queues one delivery on the instance's lane (`deliveryScheduled` was set by the caller).
    private func queueDelivery(on lane: DeliveryLane) {
        lane.run { [self] in
            let owner = state.withLock { state -> InstanceReference? in
                state.deliveryScheduled = false
                return state.active ? state.owner : nil
            }
            owner?.instance?.deliverExternalChange()
            let hook = state.withLock { state -> (@Sendable () -> Void)? in
                state.deliveries += 1
                return state.deliveryHook
            }
            hook?()
        }
    }
}
