import Foundation
import Testing
@testable import PrefsStorage

/// Four threads taking one lock at once, for long enough that they contend (and so sleep on the futex word
/// and are woken): every increment made under the lock is kept. Run with `--sanitize=thread`, the same test
/// reports nothing, because both sides of each hand-over are atomics the sanitizer sees (with
/// `Synchronization.Mutex`, it reported the increments as races).
@Suite("PrefsMutex, the package's lock")
struct PrefsMutexTests {
    @Test("Increments made under the lock by four contending threads are all kept")
    func contendedIncrementsAreKept() {
        let counter = PrefsMutex(0)
        let threads = 4
        let rounds = 50_000
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                for _ in 0..<rounds {
                    counter.withLock { value in
                        // A read and a write apart, so that an unguarded increment would lose some.
                        let seen = value
                        if seen % 1_000 == 0 { sched_yield() }
                        value = seen + 1
                    }
                }
                done.leave()
            }
        }
        done.wait()
        #expect(counter.withLock { $0 } == threads * rounds)
    }

    @Test("withLock passes on what the body returns and what it throws")
    func returnsAndThrows() {
        struct Refused: Error {}
        let names = PrefsMutex(["a"])
        #expect(names.withLock { $0.append("b"); return $0.count } == 2)
        #expect(throws: Refused.self) { try names.withLock { _ throws(Refused) in throw Refused() } }
        #expect(names.withLock { $0 } == ["a", "b"])
    }
}
