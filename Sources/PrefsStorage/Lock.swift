import Foundation

/// A mutual-exclusion lock with a closure-scoped critical section.
///
/// A thin wrapper over `NSLock`, so that every lock in the package is taken and released the same way.
package final class Lock: @unchecked Sendable {
    private let lock = NSLock()

    package init() {}

    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// A value that is only ever read or changed while holding its own lock.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&value) }
    }
}

/// A value behind a condition variable: every change wakes the threads waiting for the value to reach
/// a state, as deliveries counted for a test, or handler calls a test waits for.
package final class WaitableValue<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// The value now.
    package var current: Value {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    /// Changes the value and wakes every waiter.
    package func update(_ body: (inout Value) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        body(&value)
        condition.broadcast()
    }

    /// Waits until `reached` holds for the value; `false` if it still does not after `timeout` seconds
    /// (a minute unless told; `nil`, for ever), so that something that never happens fails its test
    /// instead of hanging it.
    package func wait(timeout: TimeInterval? = 60, until reached: (Value) -> Bool) -> Bool {
        let limit = timeout.map { Date().addingTimeInterval($0) }
        condition.lock()
        defer { condition.unlock() }
        while !reached(value) {
            guard let limit else {
                condition.wait()
                continue
            }
            if !condition.wait(until: limit) { return reached(value) }
        }
        return true
    }
}
