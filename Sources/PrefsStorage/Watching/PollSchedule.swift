/// When the watch thread polls with `stat()`: every subscription that polls is checked at the shortest
/// polling interval among them.
struct PollSchedule {
    private var lastPoll = ContinuousClock.now

    /// Starts counting from now (a new watch thread).
    mutating func restart() { lastPoll = .now }

    /// Milliseconds until the next poll is due, or -1 to wait for events alone.
    /// - Parameters:
    ///   - interval: The shortest polling interval of the subscriptions that poll, or `nil` for none.
    ///   - canBeWoken: Whether the thread has a wake-up descriptor; without one it checks for its end now and then.
    func timeout(interval: Duration?, canBeWoken: Bool) -> Int32 {
        let cap: Duration? = canBeWoken ? nil : .milliseconds(100)
        guard let interval = interval ?? cap else { return -1 }
        let remaining = max(.zero, min(interval - (ContinuousClock.now - lastPoll), cap ?? interval))
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + (attoseconds > 0 ? 1 : 0))
    }

    /// Whether a poll is due now; if so, the next one is counted from now.
    mutating func takeDuePoll(interval: Duration?) -> Bool {
        guard let interval, ContinuousClock.now - lastPoll >= interval else { return false }
        lastPoll = .now
        return true
    }
}
