import Dispatch
import PrefsStorage
import Synchronization

/// The calls a watch's handler received, counted as each begins, with a way to wait for more: by a
/// semaphore each call signals, never by sleeping and looking again.
final class CallCounter: Sendable {
    private let calls = PrefsMutex(0)
    private let signal = DispatchSemaphore(value: 0)

    /// Records one call; the first thing the handler does, so that a call begun is a call counted.
    func record() {
        calls.withLock { $0 += 1 }
        signal.signal()
    }

    /// The calls so far.
    var count: Int { calls.withLock { $0 } }

    /// Waits until more than `count` calls were made, for at most `limit`.
    /// - Returns: Whether they were.
    func wait(forMoreThan count: Int, within limit: Duration) -> Bool {
        let deadline = DispatchTime.now() + Self.interval(limit)
        while self.count <= count {
            if signal.wait(timeout: deadline) == .timedOut { return self.count > count }
        }
        return true
    }

    /// Waits until no call came for `period`: what was in flight has arrived.
    func waitUntilQuiet(for period: Duration) {
        while signal.wait(timeout: .now() + Self.interval(period)) == .success {}
    }

    private static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(min(seconds, Int64(Int.max / 1_000_000_000 - 1))) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
