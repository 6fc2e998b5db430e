import Foundation
import PrefsStorage
import TestSupport

/// Counts calls of a watch handler and lets a test wait for the count to reach a number.
///
/// The wait has a generous limit only so that a broken watcher fails the test instead of hanging it;
/// nothing is asserted about how long a notification takes.
final class CallCounter: @unchecked Sendable {
    private let calls = WaitableValue(0)

    /// Records one call.
    func fire() { calls.update { $0 += 1 } }

    /// The calls so far.
    var count: Int { calls.current }

    /// Waits until at least `target` calls were made; `false` if that never happened within `timeout`
    /// seconds (a minute unless told).
    func wait(forAtLeast target: Int, timeout: TimeInterval = 60) -> Bool { calls.wait(timeout: timeout) { $0 >= target } }
}
