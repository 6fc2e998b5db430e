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
    /// thread. Other handlers for changes made
    /// elsewhere run on one of a few delivery threads that every watching
    /// instance of the process shares (an instance's deliveries always one at a time, in order), while the
    /// instance's operations on other threads wait, as they do during its own writes' handlers. Keep them
    /// short: a handler that blocks holds up other instances' deliveries, and one that waits for another
    /// instance's delivery may wait for ever. The instance is not `Sendable`: keep it, and the state its
    /// handlers touch, safe to reach from those threads (an instance used from several threads already is).
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
    /// - Parameter deliveringChange: Whether this is the read of a change delivery (see `ChangeDeliveryRead`):
    ///   then only the search itself is, not the `userDefaults` and `key` accessors, whose overrides may read
    ///   other instances and must be answered as any read is.
    func currentCollectionForWatching(deliveringChange: Bool = false) -> [String: PropertyListValue]? {
        foundForWatching(deliveringChange: deliveringChange)?.collection
    }

    /// ``currentCollectionForWatching(deliveringChange:)``, with the snapshot the search found it in (`nil` for
    /// none, or a value built from several domains).
    private func foundForWatching(deliveringChange: Bool) -> (collection: [String: PropertyListValue], snapshot: DomainSnapshot?)? {
        guard let suite = try? suiteForOperation() else { return nil }
        let storageKey = key
        do throws(PrefsError) {
            let found = deliveringChange
                ? try ChangeDeliveryRead.reading { () throws(PrefsError) in try suite.find(storageKey) }
                : try suite.find(storageKey)
            guard let found else { return ([:], nil) }
            return (found.value.dictionaryValue ?? [:], found.snapshot)
        } catch {
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
            guard let previous = externalChanges.replaceLastTold(with: current) else { return }
            let changed = Self.entriesThatDiffer(previous, current)
            tell(ChangeEvent(before: previous, after: current, changedEntries: changed, sendsPriors: true, madeElsewhere: true))
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
        /// The collection the instance's observers were last told (or saw when watching began).
        var lastTold: [String: PropertyListValue]?
        var deliveryScheduled = false
        /// Deliveries completed, whether or not they told anything.
        var deliveries = 0
        var deliveryHook: (@Sendable () -> Void)?
        /// The instance, for the delivery thread; set when watching starts.
        var owner: InstanceReference?
    }

    private let state = PrefsMutex(State())
    /// The shared delivery thread this instance's deliveries run on, one at a time.
    private let lane: DeliveryLane

    init() {
        lane = DeliveryLane.next()
    }

    var isWatching: Bool { state.withLock { $0.active } }

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
        let made = suite.sources.compactMap { source in
            source.storage.watchChanges { [weak self] in self?.scheduleDelivery() }
        }
        let seen = owner.currentCollectionForWatching()
        state.withLock { state in
            state.owner = InstanceReference(owner)
            state.watches = made
            state.active = true
            state.lastTold = seen
        }
    }

    /// Stops watching; idempotent. May be called from a handler.
    func stop() {
        let stopped = state.withLock { state -> [any DomainChangeWatch] in
            defer { state.watches = []; state.active = false; state.lastTold = nil }
            return state.watches
        }
        for watch in stopped { watch.cancel() }
    }

    /// The collection the observers were last told, for a write through the instance to start from
    /// (`[:]` when the first read failed).
    var collectionLastTold: [String: PropertyListValue] { state.withLock { $0.lastTold ?? [:] } }

    /// Records what a write through the instance told (or, when silenced, would have told), so that it is
    /// not told again as a change made elsewhere.
    func sawOwnWrite(_ collection: [String: PropertyListValue]) {
        state.withLock { state in
            if state.active { state.lastTold = collection }
        }
    }

    /// Makes `current` the collection last told, and returns the one it replaces; `nil` when it is the
    /// same (nothing to tell) or watching stopped.
    func replaceLastTold(with current: [String: PropertyListValue]) -> [String: PropertyListValue]? {
        state.withLock { state in
            guard state.active else { return nil }
            let previous = state.lastTold ?? [:]
            if PropertyListValue.dictionary(previous, isIdenticalTo: current) { return nil }
            state.lastTold = current
            return previous
        }
    }

    /// Called on the watch thread: one delivery is queued for any number of events until it starts.
    private func scheduleDelivery() {
        let schedule = state.withLock { state -> Bool in
            guard state.active, !state.deliveryScheduled else { return false }
            state.deliveryScheduled = true
            return true
        }
        guard schedule else { return }
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
