import PrefsPropertyList

/// What any domain may hold, whatever keeps it: every backend of the package writes through these
/// checks, so that code tested in memory behaves as it will on disk, and no write produces a domain
/// that a read refuses.
package enum DomainLimits {
    /// The largest domain read or written (64 MiB): far beyond any preferences, and small enough that a
    /// huge or sparse file put in a domain file's place cannot exhaust memory.
    package static let maximumSize = 64 << 20

    /// The binary property-list bytes of a domain holding `contents`, refused when no read would accept them.
    /// - Throws: ``PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the keys whose values,
    ///   built directly as ``PropertyListValue``, nest deeper than a property list may (checked first:
    ///   encoding far deeper values would overflow the stack); ``PrefsError/domainTooLarge(path:size:limit:)``
    ///   when the domain would exceed `limit`, which would make every collection of the domain unreadable.
    /// - Parameter shadowed: Entries read from the domain that `contents` cannot hold (keys equal to
    ///   others under `String ==`), written back beside them as ``ShadowedEntries/retained(in:)`` of
    ///   `contents` says: the caller passes that, and keeps it with what it wrote.
    package static func encoded(_ contents: [String: PropertyListValue], location: String,
                                limit: Int = maximumSize, shadowed: ShadowedEntries? = nil) throws(PrefsError) -> [UInt8] {
        // The whole domain at once: a dictionary of one entry per entry, to name those too deep, only when it fails.
        if !BinaryPropertyList.isWithinDepthLimit(.dictionary(contents)) {
            let tooDeep = contents.filter { !BinaryPropertyList.isWithinDepthLimit(.dictionary([$0.key: $0.value])) }
            if !tooDeep.isEmpty { throw .valuesNotPlistCompatible(invalidElements: tooDeep.keys.sorted()) }
        }
        let bytes = BinaryPropertyList.encode(.dictionary(contents), shadowed: shadowed)
        guard bytes.count <= limit else {
            throw .domainTooLarge(path: location, size: bytes.count, limit: limit)
        }
        return bytes
    }

    /// Checks `contents` against the limits of ``encoded(_:location:limit:)``, discarding the bytes.
    package static func check(_ contents: [String: PropertyListValue], location: String) throws(PrefsError) {
        _ = try encoded(contents, location: location)
    }
}
