import PrefsStorage
import Synchronization

/// One watch of a domain (``DomainStorage/watchChanges(handingOver:)``) shared by every watching instance of the
/// process whose search list holds that domain object: each instance is a member, and every call of the watch
/// is passed to every member.
///
/// Why: 2,000 instances of one suite each placed their own watch of each of its domains: 2,000 subscriptions
/// for the watch engine to add, remove and call one by one (about a third of the cost of starting and of
/// telling a change, issue 27 "watchers scale linearly"). A watch is about the domain, not the instance: one per
/// domain object serves all, for the local domains (see ``join(_:_:)``).
///
/// Each member hears what its own watch would have told it: calls for every change after it joined (the
/// watch is in place before `join` returns, so before the member's first read), possibly coalesced, and
/// possibly calls when nothing changed; the member reads and compares as before.
final class SharedDomainWatch: Sendable {
    typealias Handler = @Sendable (DomainSnapshot?) -> Void

    private struct Members {
        /// By member: any order will do (each member is an instance of its own, its delivery queued on its suite's
        /// lane, and no delivery may wait for another's), and
        /// leaving is then one removal, not a search among thousands.
        var handlers: [Int: Handler] = [:]
        var watch: (any DomainChangeWatch)?
        /// Set when the last member left (or the domain cannot tell of changes): a new member makes a new one.
        var retired = false
    }

    private let storage: any DomainStorage
    private let key: Key

    /// What a watch is shared by: the domain object, and the settings a watch started now would take
    /// (``DomainWatching`` applies to watches started afterwards, so an instance that starts watching after
    /// they changed gets a watch of its own with the new ones).
    private struct Key: Hashable {
        let storage: ObjectIdentifier
        let pollingInterval: Duration
        let fallback: Int

        init(_ storage: any DomainStorage) {
            self.storage = ObjectIdentifier(storage)
            let settings = (storage as? FileDomainStorage)?.watchSettings
                ?? (DomainWatching.forcedFallback, DomainWatching.pollingInterval)
            pollingInterval = settings.pollingInterval
            fallback = switch settings.fallback {
            case .none: 0
            case .inotifyUnavailable: 1
            case .watchLimitReached: 2
            case .eventsIncomplete: 3
            }
        }
    }
    /// The members and the watch. A leaf: nothing is taken while it is held, and no handler runs under it.
    private let members = PrefsMutex(Members())
    /// Held while the domain's watch is started or cancelled, so that a member joining meanwhile waits until it
    /// is in place. Taken under an instance's operation lock (watching is switched under it), before any lock
    /// of the storage layer (which starting a watch takes); the watch's calls never take it.
    private let lifecycle = PrefsMutex<Void>(())

    /// The shared watch of each domain object watched now. A leaf.
    private static let watches = PrefsMutex<[Key: SharedDomainWatch]>([:])
    private static let lastMemberID = Atomic<Int>(0)

    private init(storage: any DomainStorage, key: Key) {
        (self.storage, self.key) = (storage, key)
    }

    /// Makes `handler` hear every call of `storage`'s watch, starting that watch if no member has; `nil` when the
    /// domain cannot tell of changes (its `watchChanges` returns `nil`). Cancelling the membership, or releasing
    /// it, leaves; the last member to leave cancels the watch.
    ///
    /// Only the package's local domains (files, administrators' files, memory) share: starting their watch makes
    /// no network round trip, so `lifecycle` is held for moments. An etcd domain's watch, or a backend's of its own,
    /// may wait for a network or anything else to start (etcd reads the domain's revision first, up to its
    /// timeout), and every instance joining or leaving, reads included, would wait on `lifecycle` meanwhile
    /// (issue 27: no instance lock across a round trip): each of their instances keeps a watch of its own.
    static func join(_ storage: any DomainStorage, _ handler: @escaping Handler) -> (any DomainChangeWatch)? {
        guard storage is FileDomainStorage || storage is AdministratorDomainStorage || storage is InMemoryDomainStorage else {
            return storage.watchChanges(handingOver: handler)
        }
        let key = Key(storage)
        while true {
            let shared = watches.withLock { watches -> SharedDomainWatch in
                if let existing = watches[key] { return existing }
                let made = SharedDomainWatch(storage: storage, key: key)
                watches[key] = made
                return made
            }
            // `nil`: it was retired meanwhile (its last member left); join the next one.
            guard let outcome = shared.add(handler) else { continue }
            return outcome
        }
    }

    /// Adds a member, starting the watch if it is the first: its membership, or `.some(nil)` when the domain
    /// cannot tell of changes; `nil` when this shared watch was retired meanwhile.
    private func add(_ handler: @escaping Handler) -> (any DomainChangeWatch)?? {
        lifecycle.withLock { _ -> (any DomainChangeWatch)?? in
            let id = Self.lastMemberID.add(1, ordering: .relaxed).newValue
            let needsWatch = members.withLock { members -> Bool? in
                if members.retired { return nil }
                members.handlers[id] = handler
                return members.watch == nil
            }
            guard let needsWatch else { return nil }
            if needsWatch {
                // Weak: the watch is kept by this object, and a call after the last member left finds it gone.
                guard let watch = storage.watchChanges(handingOver: { [weak self] snapshot in self?.tell(snapshot) }) else {
                    retire()
                    return .some(nil)
                }
                members.withLock { $0.watch = watch }
            }
            return .some(Membership(watch: self, id: id))
        }
    }

    /// Passes one call of the domain's watch to every member, outside the members' lock (a member's handler may
    /// make another instance join or leave).
    private func tell(_ snapshot: DomainSnapshot?) {
        let handlers = members.withLock { $0.handlers }
        for handler in handlers.values { handler(snapshot) }
    }

    /// Removes a member; the last one cancels the watch.
    fileprivate func leave(_ id: Int) {
        lifecycle.withLock { _ in
            let isLast = members.withLock { members -> Bool in
                members.handlers[id] = nil
                return members.handlers.isEmpty && !members.retired
            }
            if isLast { retire() }
        }
    }

    /// Stops the watch and forgets this object, so that the next member starts a new one. Under `lifecycle`.
    private func retire() {
        let watch = members.withLock { members -> (any DomainChangeWatch)? in
            members.retired = true
            members.handlers = [:]
            defer { members.watch = nil }
            return members.watch
        }
        Self.watches.withLock { watches in
            if watches[key] === self { watches[key] = nil }
        }
        // Outside every leaf lock: cancelling may wait for the watch's thread, whose calls take the members' lock.
        watch?.cancel()
    }

    /// One member's place; cancelling it (or releasing it) leaves.
    private final class Membership: DomainChangeWatch {
        private let watch: SharedDomainWatch
        private let id: Int
        private let left = Atomic<Bool>(false)

        init(watch: SharedDomainWatch, id: Int) {
            (self.watch, self.id) = (watch, id)
        }

        func cancel() {
            guard !left.exchange(true, ordering: .acquiringAndReleasing) else { return }
            watch.leave(id)
        }

        deinit { cancel() }
    }
}
