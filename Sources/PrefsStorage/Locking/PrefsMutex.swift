import CPrefsLinux
import Synchronization

/// The package's mutex: `Synchronization.Mutex`'s shape and cost, with every hand-over visible to
/// ThreadSanitizer.
///
/// Why not `Synchronization.Mutex`: on Linux its contended paths are `FUTEX_LOCK_PI` and `FUTEX_UNLOCK_PI`
/// system calls, in which the kernel itself takes and gives the lock word, in the uninstrumented standard
/// library. ThreadSanitizer then sees no release and no acquire between two threads that took the lock in
/// turn, and reports the accesses it guards as data races: a program built with `-sanitize=thread` that used
/// this library printed about forty such reports, none of them a race. Here both sides of every hand-over
/// are user-space atomics on the lock word (taking it is a compare-and-swap or an exchange with acquiring
/// ordering, giving it an exchange with releasing ordering), compiled into this package, so a sanitized
/// build instruments them; the futex system calls only put threads to sleep and wake them.
///
/// The lock is Drepper's futex mutex ("Futexes Are Tricky", mutex 2: 0 free, 1 held, 2 held with waiters),
/// as `cprefs_lock` is. Uncontended, taking and giving it is one compare-and-swap and one exchange inlined
/// at the caller, as `Mutex`'s are, so the read path costs what it did.
///
/// A class rather than a non-copyable struct: every lock of the package is a stored `let` of a long-lived
/// object or a static, and a class gives the lock word a fixed address without the standard library's
/// underscored storage types. Not recursive: a thread that takes it twice waits for ever.
package final class PrefsMutex<Value>: @unchecked Sendable {
    /// The lock word, at a fixed address for the lock's life, as a futex word must be.
    @usableFromInline let word: UnsafeMutablePointer<Atomic<UInt32>>
    /// The guarded value: touched only between `lock()` and `unlock()`, so the exclusivity of its accesses
    /// is the lock's, and no dynamic check is needed. With a byte beside it, so that a value of no size
    /// (`PrefsMutex<Void>`) still lies inside this object: alone, it was at the object's end, which is the next
    /// heap block's start, and ThreadSanitizer took each `withLock` for a write there, racing with whatever
    /// another thread did with that block (reports at every start and stop of watching from several threads).
    @usableFromInline @exclusivity(unchecked) var storage: (value: Value, inside: UInt8)

    /// A lock guarding `value`.
    package init(_ value: Value) {
        word = .allocate(capacity: 1)
        word.initialize(to: Atomic(0))
        storage = (value, 0)
    }

    deinit {
        word.deinitialize(count: 1)
        word.deallocate()
    }

    /// Runs `body` with the value, holding the lock: as `Mutex.withLock`.
    @inlinable @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&storage.value)
    }

    /// Takes the lock: one compare-and-swap when it is free, else sleeps in `lockContended()`.
    @inlinable @inline(__always)
    func lock() {
        if word.pointee.compareExchange(expected: 0, desired: 1, successOrdering: .acquiring, failureOrdering: .relaxed).exchanged {
            return
        }
        lockContended()
    }

    /// Marks the word as having waiters and sleeps until it was free when marked.
    @usableFromInline
    func lockContended() {
        while word.pointee.exchange(2, ordering: .acquiring) != 0 {
            cprefs_futex_wait(UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self), 2)
        }
    }

    /// Gives the lock back, waking one sleeper if any marked the word.
    @inlinable @inline(__always)
    func unlock() {
        if word.pointee.exchange(0, ordering: .releasing) == 2 {
            wakeOne()
        }
    }

    /// Wakes one thread sleeping in `lockContended()`.
    @usableFromInline
    func wakeOne() {
        cprefs_futex_wake_one(UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self))
    }
}
