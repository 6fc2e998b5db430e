import Foundation
import PrefsPropertyList
import PrefsStorage

// Versioned collections (SPEC §9): a subclass declares `schemaVersion` and `migrate(_:from:)`; the version a
// collection was last migrated to is kept beside it in the same domain, under the sibling storage key
// `<storageKey>.schemaVersion`, never among its entries, so that `values` and `keys` never see it and any
// tool shows it (`settings.schemaVersion = 2`). A collection stored without one is version 0.
//
// The migration is one `modify` of the persistent domain that reads the stored version again under the
// domain's lock: of several processes starting at once on an old collection, the first to take the lock
// migrates and stamps the version, and the others find it current and do nothing. A collection stored by
// a newer version is read as it is; writes to it are refused before anything is written.

/// What one instance knows of its collection's schema: that it was found current, for which suite and
/// storage key, so that reads need not look again. Guarded by the instance's operation lock.
final class SchemaState {
    var verified: (suite: ObjectIdentifier, storageKey: String)?
}

extension RVS_PersistentPrefs {
    /// The storage key the schema version of the collection under `storageKey` is kept under.
    static func schemaVersionKey(for storageKey: String) -> String { storageKey + ".schemaVersion" }

    /// Brings the stored collection to this class's ``schemaVersion`` before an operation uses it, and,
    /// for a write, refuses a collection stored by a newer version.
    ///
    /// - A read migrates an older collection that exists (a missing one is left alone: nothing is created
    ///   by a read) and never fails for a newer one.
    /// - A write migrates first (stamping the version even when no collection is stored yet, so that the
    ///   collection it creates is known to be current), then throws
    ///   ``PrefsError/collectionFromNewerVersion(stored:supported:)`` for a newer one.
    /// - A write that repairs an unreadable domain file (`repair` is ``RepairPolicy/moveUnreadableAside``)
    ///   moves it aside here already, stamping the version in the new file, so that the collection it then
    ///   writes is known to be current; any other write over an unreadable file fails as the write would.
    /// - Throws: The domain's read and write errors; ``PrefsError/invalidStoredValue(key:)`` for a collection
    ///   that is not a dictionary; what converting the migrated values throws.
    func prepareSchema(of collection: StoredCollection, writing: Bool, repair: RepairPolicy = .failIfUnreadable,
                       releasingLock: Bool = false) throws(PrefsError) {
        let supported = type(of: self).schemaVersion
        // The domain's reads and updates, with the operation lock released when `releasingLock` (a write's over an
        // optimistic domain, whose round trips no read of the instance may wait for); `schemaState` is set with it held.
        func roundTrip<Result>(_ body: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
            releasingLock ? try operationLock.whileReleased(body) : try body()
        }
        let suite = ObjectIdentifier(collection.suite)
        if !writing {
            // Versioned collections only: an unversioned class reads whatever version is stored.
            if supported == 0 { return }
            if let verified = schemaState.verified, verified.suite == suite, verified.storageKey == collection.storageKey { return }
        }
        let storageKey = collection.storageKey
        let versionKey = Self.schemaVersionKey(for: storageKey)
        let domain = collection.suite.persistentDomain
        let contents: [String: PropertyListValue]
        do throws(PrefsError) {
            contents = try roundTrip { () throws(PrefsError) in try domain.snapshot().contents }
        } catch {
            // A read reports the error itself, when it reads; so does a write that does not repair.
            guard writing else { return }
            guard repair == .moveUnreadableAside, case .domainUnreadable = error else { throw error }
            if supported > 0 {
                _ = try roundTrip { () throws(PrefsError) in
                    try domain.modify(repairing: .moveUnreadableAside) { $0[versionKey] = .integer(supported) }
                }
                schemaState.verified = (suite, storageKey)
            }
            return
        }
        var stored = try Self.schemaVersion(contents[versionKey], key: versionKey)
        if stored < supported, writing || contents[storageKey] != nil {
            stored = try roundTrip { () throws(PrefsError) in
                try migrate(domain, storageKey: storageKey, versionKey: versionKey, to: supported)
            }
            collection.suite.postDidChange()
        }
        if stored > supported {
            if writing { throw .collectionFromNewerVersion(stored: stored, supported: supported) }
            return
        }
        if stored == supported { schemaState.verified = (suite, storageKey) }
    }

    /// Runs the migration as one locked update of the domain, if the version stored at that instant is
    /// still older than `supported`. Returns the version stored when the update ends.
    private func migrate(_ domain: any DomainStorage, storageKey: String, versionKey: String, to supported: Int) throws(PrefsError) -> Int {
        var result = supported
        try domain.modify(repairing: .failIfUnreadable) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
            let stored = try Self.schemaVersion(contents[versionKey], key: versionKey)
            // Another process got there first (or a newer one did): nothing to do.
            guard stored < supported else {
                result = stored
                return
            }
            if let existing = contents[storageKey] {
                guard case .dictionary(let entries) = existing else { throw .invalidStoredValue(key: storageKey) }
                var values = entries.nativeValues
                migrate(&values, from: stored)
                let migrated = try PropertyListValue.collection(values)
                // What the migration made is validated as a write is, before anything is stored (SPEC §3): a name
                // it added that the class does not allow, or a value it made that breaks its entry's constraint.
                // What it left as it was stored is not judged, as a write leaves it: a stray name stored before
                // must not block the migration for good (the app removes it with a write of nil).
                let registry = EntryRegistry.registry(of: self)
                let made = migrated.filter { name, value in !(entries[name]?.isIdentical(to: value) ?? false) }.keys
                try CollectionWrite.refuseUnknown(made, allowed: registry.allowedNames(keys: keys))
                try CollectionWrite.refuseDisallowed(migrated, setting: made, constraints: registry.constraints)
                contents[storageKey] = migrated.isEmpty ? nil : .dictionary(migrated)
            }
            contents[versionKey] = .integer(supported)
        }
        return result
    }

    /// The schema version stored under `key`: 0 when absent.
    private static func schemaVersion(_ value: PropertyListValue?, key: String) throws(PrefsError) -> Int {
        switch value {
        case nil: return 0
        case .integer(let version)?: return version
        case .some:
            throw .userDefaultsUnavailable(reason: "the schema version stored under '\(key)' is not an integer")
        }
    }
}
