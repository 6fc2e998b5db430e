import Foundation

/// Counts calls of a watch handler and lets a test wait for the count to reach a number.
///
/// The wait has a generous limit only so that a broken watcher fails the test instead of hanging it;
/// nothing is asserted about how long a notification takes.
final class CallCounter: @unchecked Sendable {
    private let condition = NSCondition()
    private var calls = 0

    /// Records one call.
    func fire() {
        condition.lock()
        calls += 1
        condition.broadcast()
        condition.unlock()
    }

    /// The calls so far.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return calls
    }

    /// Waits until at least `target` calls were made; `false` if that never happened within a minute.
    func wait(forAtLeast target: Int) -> Bool {
        let limit = Date().addingTimeInterval(60)
        condition.lock()
        defer { condition.unlock() }
        while calls < target {
            if !condition.wait(until: limit) { return calls >= target }
        }
        return true
    }
}
