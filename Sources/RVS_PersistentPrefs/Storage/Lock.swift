import Foundation

/// A mutual-exclusion lock with a closure-scoped critical section.
///
/// A thin wrapper over `NSLock`, so that every lock in the package is taken and released the same way.
final class Lock: @unchecked Sendable {
    private let lock = NSLock()

    init() {}

    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// A value that is only ever read or changed while holding its own lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&value) }
    }
}
