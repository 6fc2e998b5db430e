import Foundation
import PrefsPropertyList

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

    /// The domain's generation now: a value that changes whenever what ``snapshot()`` would return may have
    /// changed, or `nil` when the backend cannot vouch for that (the default), and a read then reads.
    ///
    /// A suite keeps what a read found while every domain it consulted reports the generation it reported both
    /// before and after that read; so a backend that reports one reads an unchanged collection as cheaply as a
    /// file domain does. The promise: a change completed before this property is read (by any writer, in any
    /// process) gives a value other than every one reported before the change, a version or revision, say.
    /// Report `nil` whenever unsure. Reading it must be cheap and must not wait on the network: every read of
    /// every collection reads it.
    var generation: UInt64? { get }

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

    /// Starts telling `onChange` whenever the domain may have been changed by a writer other than this
    /// object: another object over the same storage, another process, another machine. Returns `nil`
    /// when the backend cannot tell (the default), and the caller then hears nothing.
    ///
    /// `onChange` may run on any thread, may coalesce several changes into one call, and may run when
    /// nothing changed: the caller reads the domain and compares. Calls may also follow writes made
    /// through this object. Keep the watch for as long as changes should be told; ``DomainChangeWatch/cancel()``,
    /// or releasing it, stops them (a call already running may finish).
    ///
    /// Start the watch before reading the state it is compared with, so that no change falls in between.
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)?

    /// ``watchChanges(_:)``, telling `onChange` also what the domain holds after the change when the backend
    /// has it without a read (an etcd watch's event carries the new value), or `nil` when the caller must read.
    ///
    /// A caller that watches several domains (a watching instance, one per source of its search list) then
    /// reads again only the domain whose watch fired, and with a snapshot handed over, none: it tells the
    /// change with no round trip. A snapshot handed over must be what ``snapshot()`` would return at that
    /// moment or later, never older than one handed over before. The default implementation calls
    /// ``watchChanges(_:)`` and hands over nothing.
    func watchChanges(handingOver onChange: @escaping @Sendable (DomainSnapshot?) -> Void) -> (any DomainChangeWatch)?
}

extension DomainStorage {
    /// Unknown: the backend cannot vouch for its reads, and every read reads it.
    public var generation: UInt64? { nil }

    /// Unsure, unless the domain says otherwise.
    public var isKnownToExist: Bool { false }

    /// The backend cannot tell of changes made elsewhere: `nil`.
    public func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { nil }

    /// ``watchChanges(_:)``, handing over no snapshot: the caller reads the domain.
    public func watchChanges(handingOver onChange: @escaping @Sendable (DomainSnapshot?) -> Void) -> (any DomainChangeWatch)? {
        watchChanges { onChange(nil) }
    }
}

