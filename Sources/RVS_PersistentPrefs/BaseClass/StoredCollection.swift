import PrefsPropertyList
import PrefsStorage

/// One collection in a suite: the dictionary of entries under a storage key, read through the search
/// list and written to the persistent domain. It does the reading, replacing and merging the base class
/// exposes, over property-list values, and knows nothing of observers, native values or `lastError`.
struct StoredCollection {
    let suite: DefaultsSuite
    let storageKey: String

    /// The collection as the search list finds it, with the snapshot it came from (so that a caller can
    /// cache what it derives from it); `nil` when no domain holds it.
    /// - Parameter problems: Receives what is wrong with an administrator's (managed or system) file, which
    ///   the read skipped: the operation succeeds, and reports it among its warnings.
    /// A caller that derives something from the entries checks its cache (by the snapshot) before it takes
    /// them with ``entries(of:)``: an unchanged collection then costs no copy of them.
    func read(problems: inout [PrefsError]) throws(PrefsError) -> DefaultsSuite.Found? {
        try suite.find(storageKey, collection: true, problems: &problems)
    }

    /// The entries of the collection ``read(problems:)`` found (`nil`: none stored); a stored value that is
    /// not a dictionary fails with ``PrefsError/invalidStoredValue(key:)``.
    func entries(of found: DefaultsSuite.Found?) throws(PrefsError) -> [String: PropertyListValue]? {
        guard let found else { return nil }
        guard case .dictionary(let entries) = found.value else { throw .invalidStoredValue(key: storageKey) }
        return entries
    }

    /// Checks `write` against the stored collection as it is now, without taking the domain's lock: for a
    /// write that must know of a rejection before the lock is taken (taking it can create the domain's
    /// directory and lock file, and a `.prior` notification must not announce a write that is refused).
    /// An edit that may run only once is checked for everything but what it will change.
    func check(_ write: CollectionWrite, allowed: Set<String>) throws(PrefsError) {
        guard case .edit(let edit) = write.change else { return try write.refuseIncompatible() }
        var current = try suite.persistentDomain.snapshot().contents[storageKey]
        let apply = edit.isRepeatable ? edit.apply : { (_: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in false }
        try merge(&current, write, allowed: allowed, apply)
    }

    /// Makes `write` in one locked read-modify-write of the writable domain: an edit changes the stored
    /// entries and keeps every other, so that processes updating different entries all keep their changes.
    ///
    /// A collection stored by a newer schema version than `schemaVersion` is refused under the same lock
    /// (``PrefsError/collectionFromNewerVersion(stored:supported:)``), so that a newer version's migration
    /// made an instant before is never written over.
    /// - Parameters:
    ///   - forced: What ``refuseForced(_:)`` found a moment before, when nothing but checks ran since; `nil`: looked
    ///     for again.
    ///   - supplied: For a whole replacement, what `DefaultsSuite.administratorEntries(forKey:)` gave at the same
    ///     moment; `nil`: looked for again.
    func commit(
        _ write: CollectionWrite, allowed: Set<String>, constraints: [String: EntryConstraint] = [:], schemaVersion supported: Int,
        forced: (whole: String?, entries: [String: String])? = nil, supplied known: [String: PropertyListValue]? = nil
    ) throws(PrefsError) {
        // What a read showed from the managed and system domains is not the user's to store: in a whole
        // replacement, an entry the user has not stored, written back with the very value they supply, is
        // left out (a forced entry changed or removed is refused by the suite).
        let supplied = write.replacement == nil ? [:] : known ?? suite.administratorEntries(forKey: storageKey)
        let versionKey = RVS_PersistentPrefs.schemaVersionKey(for: storageKey)
        try suite.modifyValue(forKey: storageKey, repairing: write.repair, collection: true, forced: forced, checkingDomain: { (contents) throws(PrefsError) in
            if case .integer(let stored)? = contents[versionKey], stored > supported {
                throw .collectionFromNewerVersion(stored: stored, supported: supported)
            }
        }) { (stored: inout PropertyListValue?) throws(PrefsError) in
            switch write.change {
            case .replace(var entries):
                try write.refuseIncompatible()
                let own = stored?.dictionaryValue ?? [:]
                for (name, value) in supplied where own[name] == nil && entries[name]?.isIdentical(to: value) == true {
                    entries[name] = nil
                }
                try CollectionWrite.refuseDisallowed(entries, setting: entries.keys, constraints: constraints)
                stored = entries.isEmpty ? nil : .dictionary(entries)
            case .edit(let edit):
                try merge(&stored, write, allowed: allowed, edit.apply)
                try CollectionWrite.refuseDisallowed(stored?.dictionaryValue ?? [:], setting: write.setting, constraints: constraints)
            }
        }
    }

    /// Applies an edit to the stored value under the storage key (`nil`: absent), and checks the result.
    private func merge(
        _ stored: inout PropertyListValue?,
        _ write: CollectionWrite,
        allowed: Set<String>,
        _ apply: (inout [String: PropertyListValue]) throws(PrefsError) -> Bool
    ) throws(PrefsError) {
        var entries: [String: PropertyListValue]
        if let stored {
            guard case .dictionary(let existing) = stored else { throw .invalidStoredValue(key: storageKey) }
            entries = existing
        } else {
            // Nothing stored yet: start from what the global or registration domain supplies, as the
            // Apple library does by writing back the whole collection a read returns; but not the entries an
            // administrator forces, which are the administrator's to supply (and would be refused as set).
            entries = try fallback()
            for name in suite.forced(forKey: storageKey, collection: true).entries.keys { entries[name] = nil }
        }
        let removesOnly = try apply(&entries)
        if !removesOnly { try CollectionWrite.refuseUnknown(entries.keys, allowed: allowed) }
        try write.refuseIncompatible()
        stored = entries.isEmpty ? nil : .dictionary(entries)
    }

    /// The collection the global or registration domain supplies, for a collection not stored yet.
    private func fallback() throws(PrefsError) -> [String: PropertyListValue] {
        guard let found = try suite.startingPoint(forKey: storageKey) else { return [:] }
        guard case .dictionary(let entries) = found else { throw .invalidStoredValue(key: storageKey) }
        return entries
    }

    /// Refuses a write that names (sets or removes) an entry the managed domains force, or any write of
    /// a collection forced whole: ``PrefsError/forcedByAdministrator(entries:path:)``.
    /// - Returns: What the managed domains force (see `DefaultsSuite.forced(forKey:collection:)`), which the
    ///   commit may be given rather than look for it again.
    @discardableResult
    func refuseForced(_ names: [String]) throws(PrefsError) -> (whole: String?, entries: [String: String]) {
        let forced = suite.forced(forKey: storageKey, collection: true)
        if let path = forced.whole { throw .forcedByAdministrator(entries: [storageKey], path: path) }
        guard !forced.entries.isEmpty else { return forced }
        let refused = Set(names.filter { forced.entries[$0] != nil }).sorted()
        guard let first = refused.first, let path = forced.entries[first] else { return forced }
        throw .forcedByAdministrator(entries: refused, path: path)
    }

    /// Refuses, before anything is announced or written, a whole replacement that would change or remove a
    /// forced entry: what ``commit(_:allowed:constraints:schemaVersion:forced:supplied:)`` refuses under the lock, checked first
    /// against the collection stored now, so that no `.prior` notification or schema write precedes a refusal.
    /// - Returns: What the managed domains force, as ``refuseForced(_:)`` does.
    @discardableResult
    func refuseForcedReplacement(_ replacement: [String: PropertyListValue]) throws(PrefsError) -> (whole: String?, entries: [String: String]) {
        let forced = suite.forced(forKey: storageKey, collection: true)
        guard !forced.entries.isEmpty else { return forced }
        let supplied = suite.administratorEntries(forKey: storageKey)
        let own = try suite.persistentDomain.snapshot().contents[storageKey]?.dictionaryValue ?? [:]
        let refused = forced.entries.keys.filter { name in
            switch (own[name], replacement[name]) {
            case (nil, nil): return false
            case (nil, let new?): return !(supplied[name].map { new.isIdentical(to: $0) } ?? false)
            case (let old?, let new?): return !old.isIdentical(to: new)
            case (_?, nil): return true
            }
        }.sorted()
        guard let first = refused.first, let path = forced.entries[first] else { return forced }
        throw .forcedByAdministrator(entries: refused, path: path)
    }
}
