import Foundation
import PrefsPropertyList

/// The contents of one persistent domain at one moment: storage key → stored value.
///
/// Immutable and shared: while a domain is unchanged, every read returns the same snapshot object,
/// so a caller can cache work derived from it (such as a conversion to native values) by identity.
public final class DomainSnapshot: Sendable {
    /// Storage key → stored value.
    public let contents: [String: PropertyListValue]

    /// Whether the domain existed when read (a missing file reads as an empty snapshot).
    package let exists: Bool

    /// Makes a snapshot of `contents`: what a ``DomainStorage`` implementation of your own returns from
    /// ``DomainStorage/snapshot()``. Return a new snapshot only when the contents changed, and the same
    /// object while they did not, so that callers' caches keyed by the snapshot's identity stay valid.
    public convenience init(contents: [String: PropertyListValue]) {
        self.init(contents: contents, exists: true)
    }

    /// Makes a snapshot; `exists` is `false` only for a domain that has never been written.
    package init(contents: [String: PropertyListValue], exists: Bool) {
        self.contents = contents
        self.exists = exists
    }

    /// The empty snapshot of a domain that does not exist.
    package static let missing = DomainSnapshot(contents: [:], exists: false)
}

/// What ``DomainStorage/modify(repairing:_:)`` does when the domain cannot be read as it is.
public enum RepairPolicy: Sendable {
    /// Fail with the read error and write nothing (what merges and single-entry updates want).
    case failIfUnreadable
    /// Move an unreadable domain file aside, never deleting it, and start from an empty domain
    /// (what a deliberate whole replacement wants).
    case moveUnreadableAside
}

/// A backend that keeps one persistent defaults domain: the writable domain of a ``DefaultsSuite``.
///
/// The package has two: ``FileDomainStorage``, a binary property-list file shared safely between
/// processes, and ``InMemoryDomainStorage`` for tests that need no disk. Implementations must make
/// every read fresh (it sees every write completed before it began) and every modification atomic.
public protocol DomainStorage: AnyObject, Sendable {
    /// Where the domain lives, for messages: a file path, or a description of an in-memory domain.
    ///
    /// It also identifies the domain: ``DefaultsSuite/shared(persistentDomain:globalDomain:)`` shares
    /// one suite per pair of locations.
    var location: String { get }

    /// Reads the domain afresh. A domain that does not exist reads as an empty snapshot.
    ///
    /// - Throws: Why the domain cannot be read, for example
    ///   ``PrefsError/domainUnreadable(path:reason:)``.
    func snapshot() throws(PrefsError) -> DomainSnapshot

    /// Whether the domain is known to exist, as far as this process has seen, without reading it:
    /// a hint for callers that must not create anything (a rejected write must not make a directory).
    /// `false` when unsure; the default implementation always says `false`.
    var isKnownToExist: Bool { get }

    /// Atomically reads the domain, lets `transform` change its contents, and saves the result,
    /// excluding every other writer meanwhile (in this process and, for files, in others).
    ///
    /// If `transform` throws, or leaves the contents unchanged, nothing is written.
    /// - Parameters:
    ///   - policy: What to do when the domain cannot be read as it is.
    ///   - transform: Changes the contents (storage key → value); it runs while other writers are
    ///     excluded.
    /// - Returns: The snapshot after the change.
    /// - Throws: The read errors of ``snapshot()`` (unless `policy` repairs them), what `transform`
    ///   throws, or why the write failed; the domain is then unchanged.
    @discardableResult
    func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot
}

extension DomainStorage {
    /// Unsure, unless the domain says otherwise.
    public var isKnownToExist: Bool { false }
}

/// A domain kept in memory: the same behaviour as a file domain, for tests and for values that must
/// not outlive the process. Safe to use from several threads.
public final class InMemoryDomainStorage: DomainStorage {
    private let state: Locked<DomainSnapshot>

    /// A description used in messages.
    public let location: String

    /// Makes a domain holding `contents`; an empty dictionary makes a domain that does not exist yet.
    public init(contents: [String: PropertyListValue] = [:], location: String = "in-memory domain") {
        self.state = Locked(contents.isEmpty ? .missing : DomainSnapshot(contents: contents))
        self.location = location
    }

    /// Whether the domain has been written and not emptied since.
    public var isKnownToExist: Bool { state.withLock { $0.exists } }

    /// The current contents; never throws.
    public func snapshot() throws(PrefsError) -> DomainSnapshot {
        state.withLock { $0 }
    }

    /// Changes the contents under the domain's lock.
    ///
    /// An in-memory domain is always readable, so `policy` makes no difference. Nothing changes if
    /// `transform` throws or leaves the contents as they were.
    /// - Returns: The snapshot after the change (the same object when nothing changed).
    /// - Throws: What `transform` throws.
    @discardableResult
    public func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        try state.withLock { (current: inout DomainSnapshot) throws(PrefsError) -> DomainSnapshot in
            var contents = current.contents
            try transform(&contents)
            // The same limits as a file domain's, so that code tested in memory behaves the same on disk.
            let bytes = try FileDomainStorage.encodedDomain(contents, location: location)
            // Unchanged only if the bytes a file would hold are too, as FileDomainStorage decides:
            // `==` cannot see 0.0 replacing -0.0, or another normalization of an equal string.
            if contents == current.contents, current.exists || contents.isEmpty,
               bytes == BinaryPropertyList.encode(.dictionary(current.contents)) {
                return current
            }
            current = DomainSnapshot(contents: contents)
            return current
        }
    }
}
