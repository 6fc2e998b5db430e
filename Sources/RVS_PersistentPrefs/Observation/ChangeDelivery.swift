import PrefsPropertyList

// Telling an instance's observers of changes: one queue of changes per instance, delivered in order by
// whichever thread holds the instance's operation lock when the first change is queued. A write made while
// a handler runs (the instance is delivering) is made at once and queued: it is told after that handler
// returns, never by re-entering it, so a handler that writes what it observes cannot overflow the stack.

/// One change, as told to an instance's observers, streams and Swift Observation.
struct ChangeEvent {
    /// The collection before the change: what observers' `.old` values are read over.
    let before: [String: PropertyListValue]
    /// The collection the change produced: what `.new` values are read over, and what streams get.
    let after: [String: PropertyListValue]
    /// The entries Swift Observation is told of.
    let changedEntries: Set<String>
    /// Whether its `.prior` notifications are still to be sent: for a change made elsewhere, or a write
    /// made inside a handler. A write made otherwise sends them itself, before it is made.
    let sendsPriors: Bool
    /// The observers registered before a write through the instance; `nil` for a change whose
    /// observers are those registered when it is delivered.
    var audience: [ObserverList.Registration]? = nil
    /// The observers the write announced itself to with `.prior`: they hear it whatever it changed.
    var announced: Set<Int> = []
    /// Whether it was made elsewhere (another instance, process or machine): then Swift Observation is told
    /// of it on the main actor when watching was turned on there.
    var madeElsewhere = false
    /// For a change made elsewhere: `before` and `after` as the versions other watching instances share, so
    /// that observers' values are read over native values converted once for all of them.
    var delivered: (before: DeliveredCollection, after: DeliveredCollection)? = nil

    /// `before`, with the shared version of it when there is one.
    var sharedBefore: DeliveredCollection? { delivered?.before }
    /// `after`, with the shared version of it when there is one.
    var sharedAfter: DeliveredCollection? { delivered?.after }
}

/// What an instance's notifications need between operations. Guarded by the instance's operation lock.
struct NotificationState {
    /// The changes not told yet, oldest first.
    var pending: [ChangeEvent] = []
    /// Whether a thread is telling changes (it holds the operation lock): writes are then only queued.
    var isDelivering = false
    /// The depth of ``RVS_PersistentPrefs/withoutNotifying(_:)`` calls: writes inside tell nobody.
    var silenced = 0
    /// While an observer's value is read over one version of the collection: that version, which the
    /// instance's reads return (and its native form, once made).
    var pinned: [String: PropertyListValue]?
    var pinnedNative: [String: Any]?
    /// The shared version of `pinned`, when it is one (see ``DeliveredCollection``): its native form is
    /// taken from there, converted once for every instance.
    var pinnedShared: DeliveredCollection?
    /// While `observe` reads its key path once: the typed entries read, and whether anything else was.
    var recording: EntryReads?

    struct EntryReads {
        var typed: Set<String> = []
        var untyped = false
    }
}

extension PropertyListValue {
    /// Whether two stored forms (`nil`: absent) are the same, byte for byte as stored.
    static func same(_ a: PropertyListValue?, _ b: PropertyListValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return a.isIdentical(to: b)
        default: return false
        }
    }
}

extension RVS_PersistentPrefs {
    /// Makes the writes inside `body` tell none of this instance's observers: no key-path observer,
    /// ``changes`` stream or Swift Observation tracking hears them.
    ///
    /// Reach for it to apply a value that came from elsewhere without echoing it back, or to write from
    /// inside a handler without being told of that write:
    ///
    /// ```swift
    /// let token = prefs.observe(\.values) { prefs, _ in
    ///     prefs.withoutNotifying { prefs["lastSeen"] = Date() }
    /// }
    /// ```
    ///
    /// Other instances and processes that watch the collection (``watchesExternalChanges``) still hear the
    /// writes; this instance, if it watches, does not hear them later as changes made elsewhere. `body`
    /// runs as one operation of the instance: other threads' operations on it wait until it returns, so do
    /// not wait inside it for another thread that uses the instance. Writes other threads make meanwhile
    /// are not silenced.
    /// - Parameter body: The writes to make silently (and anything else).
    /// - Returns: What `body` returns.
    public func withoutNotifying<Result>(_ body: () throws -> Result) rethrows -> Result {
        try locked {
            notifications.silenced += 1
            defer { notifications.silenced -= 1 }
            return try body()
        }
    }

    /// Whether writes now tell nobody (inside ``withoutNotifying(_:)``). Under the operation lock.
    var isSilenced: Bool { notifications.silenced > 0 }

    /// Whether a handler is running: a write is then queued and told after it. Under the operation lock.
    var isDelivering: Bool { notifications.isDelivering }

    /// Queues `change` and, unless a handler is running (which tells it once it returns), tells every
    /// queued change. Under the operation lock.
    func tell(_ change: ChangeEvent) {
        notifications.pending.append(change)
        deliverPending()
    }

    /// Tells the queued changes in order, unless a handler is already running on this thread.
    func deliverPending() {
        guard !notifications.isDelivering else { return }
        notifications.isDelivering = true
        defer { notifications.isDelivering = false }
        var next = 0
        while next < notifications.pending.count {
            let change = notifications.pending[next]
            next += 1
            deliver(change)
            if next > 64 {
                // Handlers that keep writing keep the queue growing at its end: drop what was told.
                notifications.pending.removeFirst(next)
                next = 0
            }
        }
        notifications.pending.removeAll(keepingCapacity: true)
    }

    /// Runs `body`, a handler called outside a delivery (`.initial`, `.prior` before a write), as a
    /// delivery: writes inside it are queued, and told once it returns, unless this thread was delivering already.
    func asHandler(_ body: () -> Void) {
        let wasDelivering = notifications.isDelivering
        notifications.isDelivering = true
        body()
        notifications.isDelivering = wasDelivering
        if !wasDelivering { deliverPending() }
    }

    /// Tells one change: `.prior` notifications if it still owes them, then every observer that hears
    /// it in the order they were added, then the streams, then Swift Observation.
    private func deliver(_ change: ChangeEvent) {
        let audience = (change.audience ?? observers.observers).filter { registration in
            change.announced.contains(registration.id) || registration.observer.hears(change, by: self)
        }
        if change.sendsPriors {
            for registration in audience where registration.observer.wantsPrior && observers.isRegistered(registration.id) {
                call(registration, madeElsewhere: change.madeElsewhere) { $0.sendPrior(to: self, before: change.before, shared: change.sharedBefore) }
            }
        }
        for registration in audience where observers.isRegistered(registration.id) {
            // A handler that runs here is called directly: no call queued, nothing made for it.
            if registration.observer.isolation == nil {
                registration.observer.send(change, to: self)
            } else {
                call(registration, madeElsewhere: change.madeElsewhere) { $0.send(change, to: self) }
            }
        }
        observers.publish(PrefsChange(collection: change.after))
        if change.madeElsewhere, let isolation = swiftObservation.isolationForExternalChanges {
            // SPEC §12: a change made elsewhere never runs a main-actor model's tracking off the main actor.
            // One queued call tells every change noted until it runs (see `noteExternalChange`).
            if swiftObservation.noteExternalChange(ofEntries: change.changedEntries) {
                let era = externalChanges.era
                isolation.submit(HandlerIsolation.Call { [self] in
                    locked {
                        let entries = swiftObservation.takeExternalChanges()
                        // Watching turned off since: nothing more is heard of changes made elsewhere.
                        guard externalChanges.isWatching(inEra: era) else { return }
                        notifyObservedChange(ofEntries: entries)
                    }
                })
            }
        } else {
            notifyObservedChange(ofEntries: change.changedEntries)
        }
    }

    /// Calls one observer's handler through `body` where it must run (SPEC §12): here, for a handler
    /// registered from a nonisolated context or already on its actor; otherwise queued to its actor, where
    /// the call takes the operation lock again and is made only if the observer is still registered and, for a
    /// change made elsewhere, watching has not been turned off since ("off, nothing is heard but writes through
    /// this instance", whatever was queued before). Under the operation lock.
    func call(_ registration: ObserverList.Registration, madeElsewhere: Bool = false, _ body: @escaping (any AnyPrefsObserver) -> Void) {
        let observer = registration.observer
        guard let isolation = observer.isolation else { return body(observer) }
        let era = madeElsewhere ? externalChanges.era : nil
        isolation.submit(HandlerIsolation.Call { [self] in
            locked {
                guard observers.isRegistered(registration.id) else { return }
                if let era, !externalChanges.isWatching(inEra: era) { return }
                asHandler { body(observer) }
            }
        })
    }

    /// Runs `body` with the instance's reads returning `collection`: how an observer's value is read over
    /// the version of the collection a notification carries.
    /// - Parameter shared: `collection` as the version other instances share, when it is one: its native form
    ///   is then the shared one.
    func reading<Result>(_ collection: [String: PropertyListValue], shared: DeliveredCollection? = nil, _ body: () -> Result) -> Result {
        let saved = (notifications.pinned, notifications.pinnedNative, notifications.pinnedShared)
        notifications.pinned = collection
        notifications.pinnedNative = nil
        notifications.pinnedShared = shared
        defer { (notifications.pinned, notifications.pinnedNative, notifications.pinnedShared) = saved }
        return body()
    }

    /// The native form of the pinned collection, made once per pin (or once for every instance, for a shared
    /// version); `nil` when nothing is pinned.
    func pinnedValues() -> [String: Any]? {
        guard let pinned = notifications.pinned else { return nil }
        if let native = notifications.pinnedNative { return native }
        let native: [String: Any]
        if let shared = notifications.pinnedShared {
            native = shared.native(counting: self)
        } else {
            native = pinned.nativeValues
            deliveryConversions.add(1, ordering: .relaxed)
        }
        notifications.pinnedNative = native
        return native
    }

    /// Runs `body`, noting the entries it reads: the typed entries it read, when it read nothing else
    /// (nothing but `@Entry` properties), else `nil`.
    func readingEntries<Result>(_ body: () -> Result) -> (Result, Set<String>?) {
        let saved = notifications.recording
        notifications.recording = NotificationState.EntryReads()
        defer { notifications.recording = saved }
        let result = body()
        let reads = notifications.recording!
        return (result, reads.untyped || reads.typed.isEmpty ? nil : reads.typed)
    }

    /// The collection as a read of ``values`` finds it now, as property-list values: `[:]` when it cannot
    /// be read (which leaves ``lastError`` alone).
    func collectionAsRead() -> [String: PropertyListValue] {
        var problems: [PrefsError] = []  // an administrator's file skipped: reported by the instance's own reads
        guard let collection = try? collection(), let found = try? collection.read(problems: &problems),
              let entries = try? collection.entries(of: found) else { return [:] }
        return entries
    }
}

/// What telling one write through the instance needs, gathered before the write: who is told, and
/// the collection before it.
struct WriteNotification {
    /// Inside ``RVS_PersistentPrefs/withoutNotifying(_:)``: nobody is told (a watching instance still
    /// records the write as seen).
    let silenced: Bool
    /// Made while a handler runs: its `.prior` notifications are sent when it is told, after the write.
    let nested: Bool
    let watching: Bool
    /// The observers registered before the write.
    let audience: [ObserverList.Registration]
    /// The collection before the write: for a watching instance, the one its observers were last told;
    /// else read before the write, when anything needs it.
    let before: [String: PropertyListValue]?

    /// Whether a `.prior` notification is about to be sent before the write: then the write is checked
    /// before the lock is taken, so that no prior announces a write that is then refused.
    var sendsPriors: Bool { !silenced && !nested && audience.contains { $0.observer.wantsPrior } }
}

extension RVS_PersistentPrefs {
    /// Before a write: gathers what telling it needs (see ``WriteNotification``). Under the operation lock.
    func prepareNotification(of write: CollectionWrite) -> WriteNotification {
        let silenced = isSilenced
        let watching = externalChanges.isWatching
        let audience = silenced ? [] : observers.observers
        let before: [String: PropertyListValue]?
        if watching {
            // What the observers were last told (`[:]` when watching's first read failed).
            before = externalChanges.lastTold?.entries ?? [:]
        } else if !silenced && (!audience.isEmpty || isDelivering || write.replacement != nil && swiftObservation.tracksEntries) {
            // Who needs the collection before the write: the observers (for `.old`, and whether they hear it); a
            // handler's nested write, told once the handler returns to the observers registered then (it may have
            // registered one meanwhile); and for a whole replacement, Swift Observation's tracking of single
            // entries (which of them differ). Not the streams: they are given the collection after. So an
            // instance whose entries are read only through `values` (as Apple-platform code reads them), with no
            // observer, replaces its collection without reading it first.
            before = collectionAsRead()
        } else {
            before = nil
        }
        return WriteNotification(silenced: silenced, nested: isDelivering, watching: watching, audience: audience, before: before)
    }

    /// Sends the `.prior` notifications of a write about to be made (it passed validation) to the
    /// observers that hear it, and returns them: they hear the write whatever it turns out to change.
    func announce(_ write: CollectionWrite, _ notification: WriteNotification) -> Set<Int> {
        guard notification.sendsPriors else { return [] }
        let before = notification.before ?? [:]
        let announced = notification.audience.filter { $0.observer.wantsPrior && $0.observer.announces(write, to: self, over: before) }
        asHandler {
            for registration in announced where observers.isRegistered(registration.id) {
                call(registration) { $0.sendPrior(to: self, before: before, shared: nil) }
            }
        }
        return Set(announced.map(\.id))
    }

    /// After a successful write: tells it, or, inside ``withoutNotifying(_:)``, only records it as seen.
    func tellWrite(_ write: CollectionWrite, _ notification: WriteNotification, announced: Set<Int>) {
        if notification.silenced && !notification.watching { return }
        // Read unless nobody can be told it: a nested write is told once its handler returns, to whoever is
        // registered then.
        let after = notification.watching || notification.nested || !observers.isEmpty ? collectionAsRead() : (write.replacement ?? [:])
        let before = notification.before ?? [:]
        var changed = write.namedEntries
        if write.replacement != nil {
            if notification.before != nil {
                changed.formUnion(Self.entriesThatDiffer(before, after))
            } else {
                // Not read before the write, as no single entry was known to Swift Observation then; one read
                // since (on another thread, while an etcd round trip ran without the operation lock) may have seen
                // either version, so it is told as possibly changed rather than missed.
                changed.formUnion(swiftObservation.trackedEntries)
            }
        }
        var told = after
        if notification.watching {
            // What the observers were last told, with this write's entries as they are now: a change made
            // elsewhere just before it, to other entries, is told by its own delivery, from the value the
            // instance last saw.
            told = before
            for name in changed { told[name] = after[name] }
            externalChanges.sawOwnWrite(told)
        }
        guard !notification.silenced else { return }
        notifications.pending.append(ChangeEvent(
            before: before, after: told, changedEntries: changed, sendsPriors: notification.nested,
            audience: notification.nested ? nil : notification.audience, announced: announced
        ))
        if !notification.nested { deliverPending() }
    }
}
