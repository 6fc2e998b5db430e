import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// A watch thread that cannot be made (pthread_create fails, as it does when the process is out of
/// threads) must neither crash the last `remove` nor leave the watches unserved for good.
@Suite("Watching when the watch thread cannot be made")
struct WatchThreadFailureTests {
    let directory = TemporaryDirectory()

    @Test("a watch made when the thread cannot be made polls, is served by the next thread made, and is removed without a join")
    func failedThreadCreation() throws {
        // An engine of its own: the process's shared one may already have a thread from tests running in parallel.
        let hub = WatchEngine()
        hub.threadCreationFails = true
        let calls = CallCounter()
        let first = hub.add(directory: directory.path, fileName: "late.plist", fallback: .none,
                            pollingInterval: .milliseconds(5)) { calls.fire() }
        #expect(hub.mode(of: first) == (events: false, polls: true))
        hub.remove(first)  // Was a join of a thread never made.

        let silent = hub.add(directory: directory.path, fileName: "late.plist", fallback: .none,
                             pollingInterval: .milliseconds(5)) { calls.fire() }
        hub.threadCreationFails = false
        let other = hub.add(directory: directory.path, fileName: "other.plist", fallback: .none,
                            pollingInterval: .milliseconds(5)) {}
        #expect(hub.mode(of: other).events)
        try FileDomainStorage(directory: directory.path, name: "late").modify(repairing: .failIfUnreadable) {
            $0["k"] = .integer(1)
        }
        #expect(calls.wait(forAtLeast: 1), "the watch made without a thread was never served")
        hub.remove(silent)
        hub.remove(other)
    }
}
