import Glibc
import Synchronization

/// The recursive lock that serializes one instance's operations (an observer may read or write the
/// instance from inside a notification, on the thread that holds it).
///
/// A plain `pthread` mutex with the owning thread beside it, rather than Foundation's `NSRecursiveLock` or
/// a `pthread` recursive mutex: every read takes it more than once (the operation, then the ``key`` and
/// ``lastError`` accessors, which a subclass may override), and taking it again on the owning thread is
/// then a load and a compare instead of a call into the mutex.
final class OperationLock {
    /// At a fixed address for the object's life, as a `pthread` mutex must be.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The thread holding the mutex, 0 when none. Only the holder stores its own identity, and it stores 0
    /// before it unlocks, so a thread finds its own identity here exactly while it holds the lock.
    private let owner = Atomic<UInt>(0)
    /// How many times the owner took the lock; touched only by the owner, while it holds the mutex.
    @exclusivity(unchecked) private var depth = 0

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func lock() {
        let me = UInt(pthread_self())
        if owner.load(ordering: .relaxed) == me {
            depth &+= 1
            return
        }
        pthread_mutex_lock(mutex)
        owner.store(me, ordering: .relaxed)
        depth = 1
    }

    @inline(__always)
    func unlock() {
        depth &-= 1
        if depth == 0 {
            owner.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
    }
}
