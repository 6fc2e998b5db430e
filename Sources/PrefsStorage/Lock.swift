import Foundation
import PrefsPropertyList

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
