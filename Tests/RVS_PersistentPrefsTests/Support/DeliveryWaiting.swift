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
}
