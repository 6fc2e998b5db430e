import Synchronization

/// The process's read epoch: a count that moves whenever what a vouched domain would return may have
/// changed, so that a suite can keep what a read found and serve the next read of the same key from it
/// while the count stands still (see ``DefaultsSuite``).
///
/// It moves when the process's watch engine takes events or changes what it vouches for, when an
/// administrator's domain hears of a change, and when an in-process domain is written. A suite trusts it
/// only when every one of its domains is ``EpochVouchedStorage`` and says so after the read, and it reads
/// the count only after the engine's pending events were taken: so whatever completed before a read began
/// has moved it.
package enum ReadEpoch {
    private static let count = Atomic<UInt64>(1)

    /// The count now.
    @inline(__always)
    package static var current: UInt64 { count.load(ordering: .acquiring) }

    /// The count a read compares: taken after the process's watch engine took its pending events, so that
    /// every write completed before the read began has moved it (one `ioctl` when nothing is pending).
    package static func currentForRead() -> UInt64 {
        // Invariant F1: pending events first.
        WatchEngine.shared.takePendingEvents()
        return current
    }

    /// ``currentForRead()`` for a read whose only check it is (see ``DefaultsSuite/isUnchanged(since:)``):
    /// the events are taken whether or not a read scope already took them.
    package static func currentForKeptRead() -> UInt64 {
        // Invariant F1: pending events first.
        WatchEngine.shared.takePendingEventsNow()
        return current
    }

    /// Something a vouched domain returns may have changed: called after the change is visible.
    @inline(__always)
    // Invariant F6: every change moves the epoch (ARCHITECTURE.md lists the sites).
    package static func advance() { count.add(1, ordering: .acquiringAndReleasing) }
}

/// A domain that can say, after a read, that what it returned stays current for as long as the
/// ``ReadEpoch`` does not move: a file domain whose file the process's watch engine vouches for, an
/// administrator's domain, the argument and registration domains.
package protocol EpochVouchedStorage: AnyObject, Sendable {
    /// Whether the snapshot the last read returned stays current until the epoch moves.
    var isVouchedByEpoch: Bool { get }

    /// Starts whatever lets the domain vouch (a watch of its file), once; later calls do nothing.
    func startVouching()
}

extension FixedDomainStorage: EpochVouchedStorage {
    /// Always: the arguments never change.
    package var isVouchedByEpoch: Bool { true }
    package func startVouching() {}
}

extension ProcessDomainStorage: EpochVouchedStorage {
    /// Always: only this process writes it, and each write advances the epoch.
    package var isVouchedByEpoch: Bool { true }
    package func startVouching() {}
}
