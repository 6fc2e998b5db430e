import Foundation

// Shared state for tests and the bench: what their handlers record, and values a test waits for. Kept
// out of the library. Behind `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`, so that a
// test run under ThreadSanitizer sees these locks (Mutex's contended paths are system calls it cannot see).

/// A value that is only ever read or changed while holding its own lock, shared by reference (tests use it
/// for what their handlers record).
package final class Locked<Value: Sendable>: Sendable {
    private let lock = NSLock()
    /// Touched only while `lock` is held.
    nonisolated(unsafe) private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> sending Result) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A value behind a condition: every change wakes the threads waiting for the value to reach a state, as
/// deliveries counted for a test, or handler calls a test waits for.
package final class WaitableValue<Value: Sendable>: Sendable {
    private let value: Locked<Value>
    /// Signals changes only: a waiter holds it from its check of the value until it sleeps, and an update
    /// takes it after changing the value, so no wake-up falls in between.
    private let changed = NSCondition()

    package init(_ value: Value) { self.value = Locked(value) }

    /// The value now.
    package var current: Value { value.withLock { $0 } }

    /// Changes the value and wakes every waiter.
    package func update(_ body: (inout Value) -> Void) {
        value.withLock { body(&$0) }
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Waits until `reached` holds for the value; `false` if it still does not after `timeout` seconds
    /// (a minute unless told; `nil`, for ever), so that something that never happens fails its test
    /// instead of hanging it.
    package func wait(timeout: TimeInterval? = 60, until reached: (Value) -> Bool) -> Bool {
        let limit = timeout.map { Date().addingTimeInterval($0) }
        changed.lock()
        defer { changed.unlock() }
        while !reached(current) {
            guard let limit else {
                changed.wait()
                continue
            }
            if !changed.wait(until: limit) { return reached(current) }
        }
        return true
    }
}
