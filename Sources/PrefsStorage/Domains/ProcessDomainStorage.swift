import PrefsPropertyList
import Synchronization

/// A domain that lives in the process and is never persisted: a suite's registration domain. Read as
/// any domain is, so that the search list treats every domain alike; no limits, no watch (its changes
/// are made by the process itself).
package final class ProcessDomainStorage: DomainStorage {
    private let state: PrefsMutex<DomainSnapshot>
    /// Moved by every change, after it (Invariant F6: the registration domain's generation is its version).
    private let versionCount = Atomic<UInt64>(1)
    package let location: String

    package init(contents: [String: PropertyListValue] = [:], location: String) {
        self.state = PrefsMutex(DomainSnapshot(contents: contents))
        self.location = location
    }

    package var contents: [String: PropertyListValue] { state.withLock { $0.contents } }

    package func snapshot() throws(PrefsError) -> DomainSnapshot { state.withLock { $0 } }

    /// Its version: only this process changes it, and every change moves it.
    package var generation: UInt64? { version }

    /// Its version: an atomic load, for a suite's kept reads.
    @inline(__always)
    package var version: UInt64 { versionCount.load(ordering: .acquiring) }

    @discardableResult
    package func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        let changed = try state.withLock { (current: inout DomainSnapshot) throws(PrefsError) -> DomainSnapshot in
            var contents = current.contents
            try transform(&contents)
            current = DomainSnapshot(contents: contents)
            return current
        }
        versionCount.add(1, ordering: .releasing)
        return changed
    }
}

/// A domain fixed when it is made: a suite's argument domain. Its snapshot is one immutable object, read
/// with no lock, since every read of every collection consults it first.
package final class FixedDomainStorage: DomainStorage {
    private let fixed: DomainSnapshot
    package let location: String

    package init(contents: [String: PropertyListValue], location: String) {
        self.fixed = DomainSnapshot(contents: contents)
        self.location = location
    }

    package var contents: [String: PropertyListValue] { fixed.contents }

    package func snapshot() throws(PrefsError) -> DomainSnapshot { fixed }

    /// Never written: the arguments are what the process was given.
    @discardableResult
    package func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        throw .userDefaultsUnavailable(reason: "\(location) is read-only")
    }
}
