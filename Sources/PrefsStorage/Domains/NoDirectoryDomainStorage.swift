import PrefsPropertyList
import Synchronization

/// The writable domain of a suite that has no place for the user's own settings (a service with no usable
/// home and no `STATE_DIRECTORY`, SPEC §12): it holds nothing and refuses every write, so that the suite's
/// other domains (the administrator's system-wide defaults and forced entries, the arguments, the
/// registration domain) still answer reads.
///
/// Reads of it succeed with nothing: an administrator's settings must reach a service even where the
/// service cannot keep its own. The base class reports the unavailability among its warnings (see
/// ``DefaultsSuite/standingWarnings``), and every write fails with
/// ``PrefsError/userDefaultsUnavailable(reason:)``.
package final class NoDirectoryDomainStorage: DomainStorage {
    /// Why there is no writable domain, naming what would give one.
    package let reason: String

    private init(reason: String) {
        self.reason = reason
    }

    private static let registry = PrefsMutex<[String: NoDirectoryDomainStorage]>([:])

    /// One object per reason, so that the suites made over it are shared per process as file suites are.
    package static func shared(reason: String) -> NoDirectoryDomainStorage {
        registry.withLock { domains in
            if let existing = domains[reason] { return existing }
            let domain = NoDirectoryDomainStorage(reason: reason)
            domains[reason] = domain
            return domain
        }
    }

    package var location: String { "no preferences directory" }

    /// Nothing: no domain exists.
    package func snapshot() throws(PrefsError) -> DomainSnapshot { .missing }

    /// Refused: there is nowhere to write.
    @discardableResult
    package func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        throw .userDefaultsUnavailable(reason: reason)
    }
}
