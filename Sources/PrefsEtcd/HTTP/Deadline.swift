import Glibc

/// A moment on the monotonic clock by which a step must be done: every connect, send and receive of the HTTP
/// client waits in `poll()` for at most the time left, so no step can block past the operation's timeout.
struct Deadline: Sendable, Comparable {
    let instant: ContinuousClock.Instant

    init(_ instant: ContinuousClock.Instant) { self.instant = instant }

    /// `duration` from now.
    static func after(_ duration: Duration) -> Deadline { Deadline(.now + duration) }

    /// The earlier of the two.
    func capped(at other: Deadline) -> Deadline { min(self, other) }

    var hasPassed: Bool { ContinuousClock.now >= instant }

    var remaining: Duration { max(.zero, instant - .now) }

    /// What is left, in whole milliseconds rounded up, for `poll()` (at least 0, at most `Int32.max`).
    var pollMilliseconds: Int32 {
        let left = remaining.components
        let milliseconds = left.seconds * 1000 + (left.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    static func < (a: Deadline, b: Deadline) -> Bool { a.instant < b.instant }
}
