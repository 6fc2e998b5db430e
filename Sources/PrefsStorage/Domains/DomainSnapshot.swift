import Foundation
import PrefsPropertyList

/// The contents of one persistent domain at one moment: storage key → stored value.
///
/// Immutable and shared: while a domain is unchanged, every read returns the same snapshot object,
/// so a caller can cache work derived from it (such as a conversion to native values) by identity.
public final class DomainSnapshot: Sendable {
    // Invariant F9: the snapshot is the generation (callers cache by its identity).
    /// Storage key → stored value.
    public let contents: [String: PropertyListValue]

    /// Whether the domain existed when read (a missing file reads as an empty snapshot).
    public let exists: Bool

    /// Makes a snapshot of `contents`: what a ``DomainStorage`` implementation of your own returns from
    /// ``DomainStorage/snapshot()``. Return a new snapshot only when the contents changed, and the same
    /// object while they did not, so that callers' caches keyed by the snapshot's identity stay valid.
    public convenience init(contents: [String: PropertyListValue]) {
        self.init(contents: contents, exists: true)
    }

    /// Makes a snapshot; `exists` is `false` only for a domain that does not exist (never written, or
    /// removed), whose `contents` are then empty.
    public init(contents: [String: PropertyListValue], exists: Bool) {
        self.contents = contents
        self.exists = exists
        self.shadowed = nil
    }

    /// Entries of the file that `contents` cannot hold, for the next write to keep: those whose key
    /// another key of the same dictionary equals under `String ==` (see ``ShadowedEntries``). `nil`
    /// for every domain but a file written by another program with such keys.
    package let shadowed: ShadowedEntries?

    /// A snapshot of a domain file, with the entries its contents shadow.
    package init(contents: [String: PropertyListValue], shadowed: ShadowedEntries?) {
        self.contents = contents
        self.exists = true
        self.shadowed = shadowed
    }

    /// The empty snapshot of a domain that does not exist: what ``DomainStorage/snapshot()`` of a
    /// backend of your own returns before the domain is first written.
    public static let missing = DomainSnapshot(contents: [:], exists: false)
}

