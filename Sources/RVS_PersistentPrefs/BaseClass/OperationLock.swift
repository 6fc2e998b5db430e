import CPrefsLinux
import Glibc
import Synchronization

/// The recursive lock that serializes one instance's operations (an observer may read or write the
/// instance from inside a notification, on the thread that holds it).
///
/// A futex lock word (CPrefsLinux's `cprefs_lock`) with the owning thread beside it, rather than
/// Foundation's `NSRecursiveLock` or a `pthread` recursive mutex: every read takes it more than once (the
/// operation, then the ``key`` and ``lastError`` accessors, which a subclass may override). Taking it
/// uncontended is one compare-and-swap, and taking it again on the owning thread a load and a compare.
final class OperationLock {
    /// At a fixed address for the object's life, as a futex word must be.
    private let word: UnsafeMutablePointer<UInt32>
    /// The thread holding the lock, 0 when none. Only the holder stores its own identity, and it stores 0
    /// before it unlocks, so a thread finds its own identity here exactly while it holds the lock.
    private let owner = Atomic<UInt>(0)
    /// How many times the owner took the lock; touched only by the owner, while it holds the lock.
    @exclusivity(unchecked) private var depth = 0

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit {
        word.deallocate()
    }

    @inline(__always)
    func lock() {
        let me = UInt(pthread_self())
        if owner.load(ordering: .relaxed) == me {
            depth &+= 1
            return
        }
        cprefs_lock(word)
        owner.store(me, ordering: .relaxed)
        depth = 1
    }

    @inline(__always)
    func unlock() {
        depth &-= 1
        if depth == 0 {
            owner.store(0, ordering: .relaxed)
            cprefs_unlock(word)
        }
    }

    /// Whether the calling thread holds the lock (at any depth).
    var isHeldByCurrentThread: Bool { owner.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Runs `body` with the lock released, and takes it again before returning (also when `body` throws): for
    /// the part of an operation that waits on something slow and touches none of what the lock guards (a write's
    /// network round trips, see `RVS_PersistentPrefs.perform`). The caller holds the lock exactly once; taken more
    /// deeply (an operation inside another on this thread, which promised to be one operation), the lock stays
    /// held while `body` runs.
    func whileReleased<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        guard isHeldByCurrentThread, depth == 1 else { return try body() }
        unlock()
        defer { lock() }
        return try body()
    }
}
