import Foundation

/// One collection in a suite: the dictionary of entries under a storage key, read through the search
/// list and written to the persistent domain. It does the reading, replacing and merging the base class
/// exposes, over property-list values, and knows nothing of observers, native values or `lastError`.
struct StoredCollection {
    let suite: DefaultsSuite
    let storageKey: String

    /// The collection as the search list finds it, with the snapshot it came from when it came from a
    /// file domain (so that a caller can cache what it derives from it); `nil` when no domain holds it.
    /// - Parameter problems: Receives what is wrong with an administrator's (managed or system) file, which
    ///   the read skipped: the operation succeeds, and reports it.
    func read(problems: inout [PrefsError]) throws(PrefsError) -> (entries: [String: PropertyListValue], snapshot: DomainSnapshot?)? {
        guard let found = try suite.find(storageKey, collection: true, problems: &problems) else { return nil }
        guard case .dictionary(let entries) = found.value else { throw .invalidStoredValue(key: storageKey) }
        return (entries, found.snapshot)
    }

    /// Replaces the whole collection (an empty one removes it from the persistent domain).
    /// - Parameter willChange: Called once the write is certain to be attempted, before it starts.
    func replace(with entries: [String: PropertyListValue], repairing policy: RepairPolicy, willChange: () -> Void) throws(PrefsError) {
        // What a read showed from the managed and system domains is not the user's to store: an entry the
        // user has not stored, written back with the very value they supply, is left out.
        let supplied = suite.administratorEntries(forKey: storageKey)
        willChange()
        try suite.modifyValue(forKey: storageKey, repairing: policy) { (stored: inout PropertyListValue?) throws(PrefsError) in
            var entries = entries
            let own = stored?.dictionaryValue ?? [:]
            for (name, value) in supplied where own[name] == nil && entries[name]?.isIdentical(to: value) == true {
                entries[name] = nil
            }
            stored = entries.isEmpty ? nil : .dictionary(entries)
        }
    }

    /// Changes entries in one locked read-modify-write of the stored collection: `apply` is given
    /// the stored entries and returns whether it only removed entries.
    ///
    /// `apply` runs under the domain's lock with `rehearsal` false; with `validateFirst`, it also runs
    /// once before, on a snapshot, with `rehearsal` true, where it may leave unchanged what it can know
    /// only under the lock.
    typealias Change = (_ entries: inout [String: PropertyListValue], _ rehearsal: Bool) throws(PrefsError) -> Bool

    /// Changes entries in one locked read-modify-write of the stored collection, keeping every other
    /// entry, so that processes updating different entries all keep their changes.
    ///
    /// - Parameters:
    ///   - allowed: The entry names the collection may hold once changed. A change that only removes
    ///     entries is never refused for the names it keeps: otherwise two entries whose names are no
    ///     longer allowed could not be removed one at a time.
    ///   - incompatible: Entries whose new value is not a property-list value: the update is refused
    ///     with them, after the names, as every write reports keys first.
    ///   - validateFirst: Validate against the stored collection before taking the domain's lock, for a
    ///     caller that must know of a rejection before the lock is taken (taking it can create files).
    ///   - willChange: Called once validation passed, before the write starts.
    ///   - apply: Changes the entries (see ``Change``).
    func update(
        allowed: Set<String>,
        incompatible: [String],
        validateFirst: Bool,
        willChange: () -> Void,
        _ apply: Change
    ) throws(PrefsError) {
        func merge(_ stored: inout PropertyListValue?, _ rehearsal: Bool) throws(PrefsError) {
            var entries: [String: PropertyListValue]
            if let stored {
                guard case .dictionary(let existing) = stored else { throw .invalidStoredValue(key: storageKey) }
                entries = existing
            } else {
                // Nothing stored yet: start from what the global or registration domain supplies, as the
                // Apple library does by writing back the whole collection a read returns.
                entries = try fallback()
            }
            let removesOnly = try apply(&entries, rehearsal)
            let unknown = entries.keys.filter { !allowed.contains($0) }
            if !unknown.isEmpty && !removesOnly { throw .incorrectKeys(invalidElements: unknown.sorted()) }
            if !incompatible.isEmpty { throw .valuesNotPlistCompatible(invalidElements: incompatible.sorted()) }
            stored = entries.isEmpty ? nil : .dictionary(entries)
        }
        if validateFirst {
            var current = try suite.persistentDomain.snapshot().contents[storageKey]
            try merge(&current, true)
        }
        willChange()
        try suite.modifyValue(forKey: storageKey) { (stored: inout PropertyListValue?) throws(PrefsError) in try merge(&stored, false) }
    }

    /// The collection the global or registration domain supplies, for a collection not stored yet.
    private func fallback() throws(PrefsError) -> [String: PropertyListValue] {
        guard let found = try suite.startingPoint(forKey: storageKey) else { return [:] }
        guard case .dictionary(let entries) = found else { throw .invalidStoredValue(key: storageKey) }
        return entries
    }

    /// Refuses a write that names (sets or removes) an entry the managed domains force, or any write of
    /// a collection forced whole: ``PrefsError/forcedByAdministrator(entries:path:)``.
    func refuseForced(_ names: [String]) throws(PrefsError) {
        let forced = suite.forced(forKey: storageKey)
        if let path = forced.whole { throw .forcedByAdministrator(entries: [storageKey], path: path) }
        guard !forced.entries.isEmpty else { return }
        let refused = Set(names.filter { forced.entries[$0] != nil }).sorted()
        guard let first = refused.first, let path = forced.entries[first] else { return }
        throw .forcedByAdministrator(entries: refused, path: path)
    }
}
