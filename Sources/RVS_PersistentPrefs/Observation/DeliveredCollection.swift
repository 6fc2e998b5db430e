import PrefsPropertyList
import PrefsStorage
import Synchronization

/// One version of a collection as deliveries of changes made elsewhere tell it, shared by every watching
/// instance of the process that finds it in the same version of the same domain under the same storage key.
///
/// Why: one external write heard by 2,000 instances of one suite used to be converted to native values
/// 2,000 times (the values observers' key paths are read over), and compared with what was last told
/// 2,000 times, all to the same result. A domain returns the same `DomainSnapshot` while it is unchanged
/// and a new one after each change (Invariant F9), and a delivery's search takes the value of a storage key
/// whole from one snapshot, so the snapshot and the key name one collection: the instances that find it
/// share one ``DeliveredCollection``, which converts once and works out what changed since a previous
/// version once. Nothing here is read from storage: every instance's delivery still searches as before,
/// so freshness is untouched; only what is derived from the same contents is derived once.
///
/// Unchecked: the native form holds immutable values (`NSNumber`, `String`, `Date`, `Data`, and arrays and
/// dictionaries of them), made under the memo's lock and only read afterwards.
final class DeliveredCollection: @unchecked Sendable {
    /// The collection, as stored.
    let entries: [String: PropertyListValue]

    private struct Memo {
        /// The last version `changes(since:)` was asked about (weak: versions do not keep older ones alive)
        /// and what it found.
        weak var base: DeliveredCollection?
        var changes: Set<String>? = nil
    }

    private let memo = PrefsMutex(Memo())
    /// The native form, made once under `converting` and never changed after `converted` is set: the thousands
    /// of instances that read it afterwards take no lock (a lock every delivery thread takes in turn for each
    /// instance is contended, and a contended lock is system calls).
    @exclusivity(unchecked) private var nativeForm: [String: Any] = [:]
    private let converted = Atomic<Bool>(false)
    private let converting = PrefsMutex<Void>(())

    init(_ entries: [String: PropertyListValue]) {
        self.entries = entries
    }

    /// The collection as native values, converted the first time it is asked for.
    /// - Parameter counting: The instance asking, whose ``RVS_PersistentPrefs/deliveryConversions`` counts the
    ///   conversion if it is the one that makes it.
    func native(counting instance: RVS_PersistentPrefs? = nil) -> [String: Any] {
        // Written before `converted` is set (releasing), read only after it is seen set (acquiring).
        if converted.load(ordering: .acquiring) { return nativeForm }
        return converting.withLock { _ in
            if converted.load(ordering: .acquiring) { return nativeForm }
            nativeForm = entries.nativeValues
            converted.store(true, ordering: .releasing)
            instance?.deliveryConversions.add(1, ordering: .relaxed)
            return nativeForm
        }
    }

    /// The names of the entries that differ between `previous` and this version; `nil` when the two are
    /// identical as stored (nothing to tell). Worked out once for the last `previous` asked about.
    func changes(since previous: DeliveredCollection) -> Set<String>? {
        if previous === self { return nil }
        return memo.withLock { memo in
            if let base = memo.base, base === previous { return memo.changes }
            let changes = PropertyListValue.dictionary(previous.entries, isIdenticalTo: entries)
                ? nil : RVS_PersistentPrefs.entriesThatDiffer(previous.entries, entries)
            memo.base = previous
            memo.changes = changes
            return changes
        }
    }

    /// One version found: the snapshot it was found in, weakly (a version is shared while its snapshot lives:
    /// the domain keeps its current snapshot, and a change makes a new one), the storage key, and the shared
    /// collection.
    private struct Found {
        weak var snapshot: DomainSnapshot?
        let storageKey: String
        let collection: DeliveredCollection
    }

    /// The versions deliveries found, by their snapshot's identity (checked against the live snapshot on use,
    /// since an identity may be reused once its object is gone; hashing it is cheaper than hashing the key);
    /// those whose snapshot is gone are dropped as the table grows.
    private static let versions = PrefsMutex<(found: [ObjectIdentifier: [Found]], pruneAt: Int, last: Found?)>(([:], 16, nil))

    /// The shared version of the collection `entries` found under `storageKey` in `snapshot` (see the type's
    /// description); a version of its own when `snapshot` is `nil` (a value built from several domains).
    static func found(_ entries: [String: PropertyListValue], in snapshot: DomainSnapshot?, storageKey: String) -> DeliveredCollection {
        guard let snapshot else { return DeliveredCollection(entries) }
        let identity = ObjectIdentifier(snapshot)
        return versions.withLock { versions in
            // Invariant F9: the snapshot is the generation: the same object is the same contents.
            // The version found last first: the thousands of instances hearing one change ask for it in turn.
            if let last = versions.last, last.snapshot === snapshot, last.storageKey == storageKey { return last.collection }
            var list = versions.found[identity] ?? []
            if let found = list.first(where: { $0.snapshot === snapshot && $0.storageKey == storageKey }) {
                versions.last = found
                return found.collection
            }
            let made = DeliveredCollection(entries)
            list.removeAll { $0.snapshot !== snapshot }
            let found = Found(snapshot: snapshot, storageKey: storageKey, collection: made)
            list.append(found)
            versions.last = found
            versions.found[identity] = list
            if versions.found.count >= versions.pruneAt {
                versions.found = versions.found.filter { $0.value.contains { $0.snapshot != nil } }
                versions.pruneAt = max(16, versions.found.count * 2)
            }
            return made
        }
    }
}
