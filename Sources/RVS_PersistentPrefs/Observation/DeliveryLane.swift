import Dispatch
import PrefsStorage

/// One of the few serial queues on which every watching instance of the process has its changes made
/// elsewhere delivered. A delivery may wait for its instance's lock and runs the instance's handlers, so
/// it can block its thread; with one queue per instance, one change heard by 2,000 instances made dispatch
/// start a thread for each blocked delivery (about 250). Sharing a fixed number of serial queues bounds
/// the threads deliveries use to that number, and keeps each instance's deliveries in order.
///
/// The instances watching one suite share its lane: one change is heard by all of them at once, and what
/// their deliveries share (the snapshot, the collection found in it, its native values, the suite's locks)
/// is then used by one thread after another instead of bouncing between cores. Handed out in turn, four lanes
/// telling 2,000 instances one change on 2 cores took about a third more CPU time than one lane (`harness bench
/// --watchers`), while telling the last instance about a tenth sooner. Instances of different suites still spread over
/// the lanes, so that a slow handler holds up only the instances whose suite shares its lane. And no delivery may
/// wait for another: one instance's handler waiting for another's delivery of the same suite waits for ever.
///
/// A lane runs its work in batches: work queued while the lane is busy joins the batch it drains, so one
/// change heard by 2,000 instances costs each lane one dispatched block, not one block (and one wake-up of a
/// dispatch thread) per instance. The order is the order of ``run(_:)``, as on a serial queue.
struct DeliveryLane: Sendable {
    /// How many lanes the process has: enough that one slow handler does not hold up every instance.
    static let count = 4

    private static let lanes = (0..<count).map { Lane(label: "RVS_PersistentPrefs.delivery.\($0)") }

    private let lane: Lane

    /// The lane of the instances watching `suite`: the same for every one of them, spread over the lanes by the
    /// suite object's identity (hashed with the process's seed, so suites made one after another spread too).
    static func lane(for suite: DefaultsSuite) -> DeliveryLane {
        let hash = UInt(bitPattern: ObjectIdentifier(suite).hashValue)
        return DeliveryLane(lane: lanes[Int(hash % UInt(count))])
    }

    /// The lane's name (its queue's label), which tells lanes apart.
    var label: String { lane.label }

    /// Runs `work` on this lane, after the work queued on it before.
    func run(_ work: @escaping @Sendable () -> Void) {
        lane.run(work)
    }

    /// One lane: its serial queue, and the work waiting for the block that drains it.
    private final class Lane: Sendable {
        private let queue: DispatchQueue
        let label: String
        /// The work not started yet, oldest first, and whether a block to drain it is dispatched (and not
        /// yet past its last look at `waiting`).
        private let state = PrefsMutex<(waiting: [@Sendable () -> Void], dispatched: Bool)>(([], false))

        init(label: String) {
            queue = DispatchQueue(label: label)
            self.label = label
        }

        func run(_ work: @escaping @Sendable () -> Void) {
            let dispatches = state.withLock { state -> Bool in
                state.waiting.append(work)
                if state.dispatched { return false }
                state.dispatched = true
                return true
            }
            if dispatches { queue.async { self.drain() } }
        }

        /// Runs the waiting work in order, and the work queued meanwhile, until none is left.
        private func drain() {
            while true {
                let batch = state.withLock { state -> [@Sendable () -> Void] in
                    if state.waiting.isEmpty { state.dispatched = false }
                    defer { state.waiting = [] }
                    return state.waiting
                }
                if batch.isEmpty { return }
                for work in batch { work() }
            }
        }
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
