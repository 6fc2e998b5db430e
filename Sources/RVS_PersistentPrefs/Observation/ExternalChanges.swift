import Foundation

extension RVS_PersistentPrefs {
    /// Whether this instance's observers also hear changes to its collection made elsewhere: by other
    /// instances in this process, by other processes, and by the `harness defaults` inspector. Off by
    /// default, and then nothing is heard but writes through this instance.
    ///
    /// Turn it on when another party may change the collection while the instance lives: an app and its
    /// extension sharing a group suite, two windows each holding an instance, a daemon whose settings an
    /// administrator changes. With it on, key-path observers (see
    /// ``PrefsObserving/observe(_:options:changeHandler:)``), ``changes`` and Swift Observation are told of
    /// such a change:
    /// - only when the collection actually differs from what this instance last saw: a write to another
    ///   storage key in the same domain, or a rewrite of identical bytes, notifies nobody;
    /// - with `.old` carrying the collection this instance last saw (read through the instance's own
    ///   typed properties), `.new` the one stored now;
    /// - possibly coalesced: several changes in quick succession may make one notification, but the last
    ///   notification after a burst always carries the final stored value;
    /// - `.prior` notifications of a change made elsewhere come after the change, just before the others.
    ///
    /// Handlers for changes made elsewhere run on a private serial dispatch queue of the instance, while
    /// the instance's operations on other threads wait, as they do during its own writes' handlers. The
    /// instance is not `Sendable`: keep it, and the state its handlers touch, safe to reach from that
    /// queue (an instance used from several threads already is).
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
            locked {
                if newValue {
                    externalChanges.start(for: self)
                } else {
                    externalChanges.stop()
                }
            }
        }
    }

    /// The collection as stored now, through the search list, leaving ``lastError`` as it was; `nil` when
    /// it cannot be read. Kept as property-list values: no conversion to native values and back.
    func currentCollectionForWatching() -> [String: PropertyListValue]? {
        guard let suite = userDefaults else { return nil }
        do throws(PrefsError) {
            guard let found = try suite.find(key) else { return [:] }
            return found.value.dictionaryValue ?? [:]
        } catch {
            return nil
        }
    }

    /// What a successful write through the instance tells Swift Observation and the watcher.
    /// - Parameters:
    ///   - named: The entries the write set or removed.
    ///   - before: For a whole replacement, the collection before it, so that the entries that differ
    ///     are told.
    ///   - written: The collection the write stored, when the writer knows it whole (an assignment of
    ///     `values`): then no read is needed to learn what changed, unless the instance watches.
    func didWrite(entries named: Set<String>, before: [String: PropertyListValue]?, written: [String: PropertyListValue]? = nil) {
        var changed = named
        if before != nil || externalChanges.isWatching {
            let after = externalChanges.isWatching || written == nil ? currentCollectionForWatching() : written
            if let before, let after { changed.formUnion(Self.entriesThatDiffer(before, after)) }
            if let after { externalChanges.sawOwnWrite(after, changing: changed) }
        }
        notifyObservedChange(ofEntries: changed)
    }
}

/// The watching state of one instance: the file watches, what the instance last saw, and the queue its
/// notifications of changes made elsewhere run on.
final class ExternalChanges: @unchecked Sendable {
    private let lock = Lock()
    // Guarded by `lock`.
    private var watches: [any DomainChangeWatch] = []
    /// Whether watching is on (even where no domain of the suite can tell of changes).
    private var active = false
    private var lastSeen: [String: PropertyListValue]?
    private var deliveryScheduled = false
    private weak var owner: RVS_PersistentPrefs?
    private let queue = DispatchQueue(label: "RVS_PersistentPrefs.externalChanges")

    /// While notifications of a change made elsewhere are prepared: the collection the instance last saw,
    /// which its reads return, so that `.old` is evaluated through the instance's own key paths. Read and
    /// written only under the instance's operation lock.
    var pinnedCollection: [String: Any]?
    /// The same collection as property-list values, which typed entries' reads decode (see `loadEntry`).
    var pinnedEntries: [String: PropertyListValue]?

    /// Deliveries completed (whether or not they notified), for tests that must know a change made
    /// elsewhere has been looked at before asserting that it notified nobody.
    private let completedDeliveries = WaitableValue(0)

    init() {}

    /// The number of deliveries completed so far.
    var deliveriesCompleted: Int { completedDeliveries.current }

    /// Waits until at least `count` deliveries have completed; `false` if that did not happen within a
    /// minute (a broken watcher fails its test instead of hanging it).
    func waitForDeliveries(atLeast count: Int) -> Bool {
        completedDeliveries.wait { $0 >= count }
    }

    var isWatching: Bool { lock.withLock { active } }

    /// Starts watching the file domains of `owner`'s suite (called under its operation lock). The watches
    /// are in place before the collection is read, so no change falls in between.
    func start(for owner: RVS_PersistentPrefs) {
        guard !isWatching, let suite = owner.userDefaults else { return }
        let made = suite.sources.compactMap { source in
            source.storage.watchChanges { [weak self] in self?.scheduleDelivery() }
        }
        let seen = owner.currentCollectionForWatching()
        lock.withLock {
            self.owner = owner
            watches = made
            active = true
            lastSeen = seen
        }
    }

    /// Stops watching; idempotent. May be called from a handler.
    func stop() {
        let stopped = lock.withLock { () -> [any DomainChangeWatch] in
            defer { watches = []; active = false; lastSeen = nil }
            return watches
        }
        for watch in stopped { watch.cancel() }
    }

    /// Records the entries a write through the instance changed, as they are after it, so that its own
    /// write is not told again as a change made elsewhere.
    ///
    /// Only those entries: the collection read after the write also holds whatever was changed elsewhere
    /// just before it, not yet delivered. Left as last seen, such entries still differ when the delivery
    /// runs (the own write's event brings one, if the other change's event did not), which then tells them
    /// to every kind of observer with the right old values.
    func sawOwnWrite(_ collection: [String: PropertyListValue], changing changed: Set<String>) {
        lock.withLock {
            guard active else { return }
            var seen = lastSeen ?? [:]
            for name in changed { seen[name] = collection[name] }
            lastSeen = seen
        }
    }

    /// Called on the watch thread: one delivery is queued for any number of events until it starts.
    private func scheduleDelivery() {
        let schedule = lock.withLock { () -> Bool in
            guard active, !deliveryScheduled else { return false }
            deliveryScheduled = true
            return true
        }
        if schedule { queue.async { self.deliver() } }
    }

    /// Compares the stored collection with what the instance last saw and notifies if it differs.
    private func deliver() {
        defer { completedDeliveries.update { $0 += 1 } }
        let owner = lock.withLock { () -> RVS_PersistentPrefs? in
            deliveryScheduled = false
            return active ? self.owner : nil
        }
        guard let owner else { return }
        owner.locked {
            guard let current = owner.currentCollectionForWatching() else { return }
            let found = lock.withLock { () -> (previous: [String: PropertyListValue], changed: Set<String>)? in
                guard active else { return nil }
                let seen = lastSeen ?? [:]
                let changed = RVS_PersistentPrefs.entriesThatDiffer(seen, current)
                if changed.isEmpty { return nil }
                lastSeen = current
                return (seen, changed)
            }
            guard let (previous, changed) = found else { return }
            pinnedCollection = previous.nativeValues
            pinnedEntries = previous
            let change = owner.observers.prepareChange(of: owner)
            pinnedCollection = nil
            pinnedEntries = nil
            change?.willChange()
            change?.didChange()
            owner.notifyObservedChange(ofEntries: changed)
            owner.userDefaults?.postDidChange()
        }
    }
}
