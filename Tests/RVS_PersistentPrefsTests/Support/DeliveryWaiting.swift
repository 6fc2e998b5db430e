import Dispatch
@testable import RVS_PersistentPrefs

extension ExternalChanges {
    /// Waits until at least `count` deliveries of changes made elsewhere have completed; `false` if that did
    /// not happen within a minute (a broken watcher fails its test instead of hanging it). One waiter per
    /// instance at a time.
    func waitForDeliveries(atLeast count: Int) -> Bool {
        let delivered = DispatchSemaphore(value: 0)
        deliveryHook = { delivered.signal() }
        defer { deliveryHook = nil }
        let deadline = DispatchTime.now() + .seconds(60)
        // Counted after the hook is in place, so that no delivery completes unseen in between.
        while deliveriesCompleted < count {
            if delivered.wait(timeout: deadline) == .timedOut { return deliveriesCompleted >= count }
        }
        return true
    }

    /// Waits, delivery after delivery from the count `count`, until `done()` holds; `false` when it does
    /// not within 60 s. Deliveries of events queued earlier (the instance's own write before it watched,
    /// made while its file was already watched for read freshness) may come first, and tell nothing.
    func waitForDeliveries(after count: Int, until done: () -> Bool) -> Bool {
        var next = count + 1
        while !done() {
            guard waitForDeliveries(atLeast: next) else { return done() }
            next += 1
        }
        return true
    }
}
