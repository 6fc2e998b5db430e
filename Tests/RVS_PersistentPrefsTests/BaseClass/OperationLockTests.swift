import Dispatch
import Testing
@testable import RVS_PersistentPrefs

/// A counter that only the lock guards: an increment lost to two threads at once shows in the total.
private final class GuardedCounter: @unchecked Sendable {
    let lock = OperationLock()
    var value = 0
}

@Suite("BaseClass: the instance's operation lock")
struct OperationLockTests {
    @Test("Threads contending for the lock, each taking it again inside, lose no increment")
    func contendedAndRecursiveTakingLosesNothing() {
        let counter = GuardedCounter()
        let threads = 4, rounds = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds {
                counter.lock.lock()
                let before = counter.value
                // Taken again on the owning thread, as an accessor called inside an operation takes it.
                counter.lock.lock()
                counter.value = before + 1
                counter.lock.unlock()
                counter.lock.unlock()
            }
        }
        #expect(counter.value == threads * rounds)
    }

    @Test("A thread waiting for the lock runs once the holder releases it, and not before")
    func waiterRunsAfterTheHolderReleases() {
        let counter = GuardedCounter()
        let holding = DispatchSemaphore(value: 0)
        let waiterDone = DispatchSemaphore(value: 0)
        counter.lock.lock()
        DispatchQueue.global().async {
            holding.signal()
            counter.lock.lock()
            counter.value += 1
            counter.lock.unlock()
            waiterDone.signal()
        }
        holding.wait()
        // The waiter is started and cannot pass the lock: it has not counted.
        #expect(waiterDone.wait(timeout: .now() + .milliseconds(50)) == .timedOut)
        #expect(counter.value == 0)
        counter.lock.unlock()
        waiterDone.wait()
        counter.lock.lock()
        #expect(counter.value == 1)
        counter.lock.unlock()
    }
}
