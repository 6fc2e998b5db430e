import Glibc

/// The recursive lock that serializes one instance's operations (an observer may read or write the
/// instance from inside a notification, on the thread that holds it).
///
/// A `pthread` recursive mutex of its own rather than Foundation's `NSRecursiveLock`: every read takes it
/// more than once, and the read hot path has no instructions to spare for a wrapper's.
final class OperationLock {
    /// At a fixed address for the object's life, as a `pthread` mutex must be.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func lock() { pthread_mutex_lock(mutex) }

    @inline(__always)
    func unlock() { pthread_mutex_unlock(mutex) }
}
