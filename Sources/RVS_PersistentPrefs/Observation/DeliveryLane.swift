import Dispatch
import Synchronization

/// One of the few serial queues on which every watching instance of the process has its changes made
/// elsewhere delivered. A delivery may wait for its instance's lock and runs the instance's handlers, so
/// it can block its thread; with one queue per instance, one change heard by 2,000 instances made dispatch
/// start a thread for each blocked delivery (about 250). Sharing a fixed number of serial queues bounds
/// the threads deliveries use to that number, and keeps each instance's deliveries in order.
struct DeliveryLane: Sendable {
    /// How many lanes the process has: enough that one slow handler does not hold up every instance.
    static let count = 4

    private static let lanes = (0..<count).map { DispatchQueue(label: "RVS_PersistentPrefs.delivery.\($0)") }
    private static let assigned = Atomic<Int>(0)

    private let queue: DispatchQueue

    /// The lane for a new instance: lanes are handed out in turn.
    static func next() -> DeliveryLane {
        let index = assigned.add(1, ordering: .relaxed).oldValue
        return DeliveryLane(queue: lanes[index % count])
    }

    /// Runs `work` on this lane, after the work queued on it before.
    func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

/// A weak reference to an instance, for its delivery thread.
///
/// Unchecked: `RVS_PersistentPrefs` is not `Sendable` (so that subclasses need not be), yet every operation
/// of an instance takes its operation lock, so reaching it from the delivery thread is safe; the compiler
/// cannot see a lock that guards a whole class.
struct InstanceReference: @unchecked Sendable {
    weak var instance: RVS_PersistentPrefs?

    init(_ instance: RVS_PersistentPrefs) {
        self.instance = instance
    }
}
