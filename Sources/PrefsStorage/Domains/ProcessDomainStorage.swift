import PrefsPropertyList
import Synchronization

/// A domain that lives in the process and is never persisted: a suite's argument and registration
/// domains. Read as any domain is, so that the search list treats every domain alike; no limits, no
/// watch (its changes are made by the process itself).
package final class ProcessDomainStorage: DomainStorage {
    private let state: Mutex<DomainSnapshot>
    package let location: String

    package init(contents: [String: PropertyListValue] = [:], location: String) {
        self.state = Mutex(DomainSnapshot(contents: contents))
        self.location = location
    }

    package var contents: [String: PropertyListValue] { state.withLock { $0.contents } }

    package func snapshot() throws(PrefsError) -> DomainSnapshot { state.withLock { $0 } }

    @discardableResult
    package func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        try state.withLock { (current: inout DomainSnapshot) throws(PrefsError) -> DomainSnapshot in
            var contents = current.contents
            try transform(&contents)
            current = DomainSnapshot(contents: contents)
            return current
        }
    }
}
