import PrefsPropertyList
import Synchronization

/// A domain kept in memory: the same behaviour as a file domain, for tests and for values that must
/// not outlive the process. Safe to use from several threads.
///
/// Every object is one domain. Two suites (or two instances) given the same object share it, and an
/// instance watching changes made elsewhere (``DomainStorage/watchChanges(_:)``) hears the other's writes.
public final class InMemoryDomainStorage: DomainStorage {
    private struct State {
        var snapshot: DomainSnapshot
        /// Moved by every change (Invariant F6: an in-memory domain's generation is its version).
        var version: UInt64 = 1
    }
    private let state: PrefsMutex<State>
    /// The watches, under a lock of their own, so that a watch started or stopped inside this domain's
    /// transform (whose thread holds `state`) does not wait for itself.
    private let watchers = PrefsMutex<(handlers: [Int: @Sendable () -> Void], next: Int)>(([:], 0))
    /// The thread running this domain's transform, for reads and writes it makes of the domain itself.
    private let transformOwner = TransformOwnership()

    /// A description used in messages.
    public let location: String

    /// Makes a domain holding `contents`; an empty dictionary makes a domain that does not exist yet.
    public init(contents: [String: PropertyListValue] = [:], location: String = "in-memory domain") {
        self.state = PrefsMutex(State(snapshot: contents.isEmpty ? .missing : DomainSnapshot(contents: contents)))
        self.location = location
    }

    /// Whether the domain has been written and not emptied since.
    public var isKnownToExist: Bool {
        if let started = transformOwner.snapshotForOwnThread { return started.exists }
        return state.withLock { $0.snapshot.exists }
    }

    /// The current contents; never throws.
    public func snapshot() throws(PrefsError) -> DomainSnapshot {
        // From inside this domain's own transform: what it started from (the lock is this thread's).
        if let started = transformOwner.snapshotForOwnThread { return started }
        return state.withLock { $0.snapshot }
    }

    /// Its version, moved by every change; `nil` inside its own transform, where a read returns what the
    /// transform started from.
    public var generation: UInt64? {
        if transformOwner.isOwnThread { return nil }
        return state.withLock { $0.version }
    }

    /// Changes the contents under the domain's lock, then tells every watch of a change.
    ///
    /// An in-memory domain is always readable, so `policy` makes no difference. Nothing changes if
    /// `transform` throws or leaves the contents as they were.
    /// - Returns: The snapshot after the change (the same object when nothing changed).
    /// - Throws: What `transform` throws.
    @discardableResult
    public func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        // From inside this domain's own transform: it would wait for the lock its own thread holds.
        if transformOwner.isOwnThread { throw TransformOwnership.nestedWrite(path: location, lockPath: location) }
        let (result, changed) = try state.withLock { (state: inout State) throws(PrefsError) -> (DomainSnapshot, Bool) in
            let current = state.snapshot
            var contents = current.contents
            try transformOwner.running(from: current) { () throws(PrefsError) in try transform(&contents) }
            // The same limits as a file domain's, so that code tested in memory behaves the same on disk.
            try DomainLimits.check(contents, location: location)
            let unchanged = current.exists
                ? PropertyListValue.dictionary(contents, isIdenticalTo: current.contents)
                : contents.isEmpty
            // Invariant F9: the snapshot is the generation (unchanged: the same object).
            if unchanged { return (current, false) }
            state.snapshot = DomainSnapshot(contents: contents)
            state.version += 1
            return (state.snapshot, true)
        }
        // Outside the lock: a handler may read the domain. A watch started after the change may be told of
        // it too, which a watch allows.
        if changed {
            for onChange in watchers.withLock({ Array($0.handlers.values) }) { onChange() }
        }
        return result
    }

    /// Tells `onChange` after every change made through this object, by anyone.
    public func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        let identifier = watchers.withLock { watchers in
            watchers.next += 1
            watchers.handlers[watchers.next] = onChange
            return watchers.next
        }
        return InMemoryWatch { [weak self] in
            _ = self?.watchers.withLock { $0.handlers.removeValue(forKey: identifier) }
        }
    }
}

/// The watch of an ``InMemoryDomainStorage``: removes its handler when cancelled or released.
private final class InMemoryWatch: DomainChangeWatch {
    private let stop: PrefsMutex<(@Sendable () -> Void)?>

    init(stop: @escaping @Sendable () -> Void) { self.stop = PrefsMutex(stop) }

    func cancel() {
        let stop = self.stop.withLock { current in
            defer { current = nil }
            return current
        }
        stop?()
    }

    deinit { cancel() }
}
