import PrefsPropertyList
import PrefsStorage

/// One write of a collection, as every write path of the base class describes it: assigning `values`, the
/// subscript, an initializer's merge, a typed entry's assignment and both forms of `modify`. The base class
/// builds one, validates it once and hands it to ``StoredCollection/commit(_:allowed:constraints:schemaVersion:forced:supplied:)``; nothing else
/// decides how a write is checked.
struct CollectionWrite {
    /// What the write does to the stored collection.
    enum Change {
        /// Replaces the whole collection (an empty one removes it from the writable domain).
        case replace([String: PropertyListValue])
        /// Changes some entries of the stored collection, keeping the others.
        case edit(Edit)
    }

    /// A change of some entries, run on the stored entries under the domain's lock.
    struct Edit {
        /// Changes the entries; returns whether it only removed some. A change that only removes
        /// entries is never refused for the names it keeps: otherwise two entries whose names are no
        /// longer allowed could not be removed one at a time.
        let apply: (inout [String: PropertyListValue]) throws(PrefsError) -> Bool
        /// Whether `apply` may also run on a snapshot before the locked run, to find a rejection before
        /// the lock is taken. A `modify` transform runs once, under the lock: its write is then checked
        /// first for everything but its new value.
        let isRepeatable: Bool
    }

    /// The entry names the write sets, each of which must be allowed.
    var setting: [String]
    /// The entry names the write removes, never refused for their names.
    var removing: [String] = []
    /// The entries whose new value is not a property-list value: the write is refused, with them, after
    /// any refused name (every write reports names first).
    var incompatible: [String] = []
    /// What to do when the writable domain cannot be read as it is.
    var repair: RepairPolicy = .failIfUnreadable
    var change: Change
    /// The values the write sets that are known before the lock, by name (not those of a `modify`
    /// transform, known only under it): checked against constraints before anything is locked or told.
    var knownValues: [String: PropertyListValue] = [:]

    /// The collection a whole replacement stores; `nil` for an edit, whose result is known only under the lock.
    var replacement: [String: PropertyListValue]? {
        if case .replace(let entries) = change { return entries }
        return nil
    }

    /// The entries the write names, as told to Swift Observation; a whole replacement names none, since
    /// what it changed is what differs from the collection before it.
    var namedEntries: Set<String> {
        replacement == nil ? Set(setting).union(removing) : []
    }

    /// Refuses names that are not allowed, all of them at once and sorted: the one check of entry names,
    /// for the names a write sets and for those a stored collection keeps.
    static func refuseUnknown<Names: Sequence<String>>(_ names: Names, allowed: Set<String>) throws(PrefsError) {
        let unknown = names.filter { !allowed.contains($0) }
        if !unknown.isEmpty { throw .incorrectKeys(invalidElements: unknown.sorted()) }
    }

    /// Checks what needs no stored collection: the names the write sets, then, for a whole replacement
    /// (which depends on nothing stored), its values; then the values it sets that are known before the
    /// lock against the entries' constraints.
    func checkWithoutStore(allowed: Set<String>, constraints: [String: EntryConstraint]) throws(PrefsError) {
        try Self.refuseUnknown(setting, allowed: allowed)
        if replacement != nil { try refuseIncompatible() }
        try Self.refuseDisallowed(knownValues, setting: setting, constraints: constraints)
    }

    /// Refuses the write when an entry it sets holds a value its declaration does not allow (SPEC §14):
    /// the one check of constraints, before the lock on the values known then, and under it on what the
    /// write stores (a `modify` transform's value is known only there). Checked in name order, so that
    /// the same write always names the same entry.
    static func refuseDisallowed<Names: Sequence<String>>(
        _ entries: [String: PropertyListValue], setting names: Names, constraints: [String: EntryConstraint]
    ) throws(PrefsError) {
        guard !constraints.isEmpty else { return }
        for name in names.sorted() {
            guard let constraint = constraints[name], let reason = constraint.violation(by: entries[name]) else { continue }
            throw .valueNotAllowed(entry: name, reason: reason)
        }
    }

    /// Refuses the write when a value is not a property-list value.
    func refuseIncompatible() throws(PrefsError) {
        if !incompatible.isEmpty { throw .valuesNotPlistCompatible(invalidElements: incompatible.sorted()) }
    }
}

extension CollectionWrite {
    /// Sets or removes (`nil`) entries: what the subscript and an initializer's merge write.
    static func entries(_ entries: [String: Any?]) -> CollectionWrite {
        let (converted, incompatible) = PropertyListValue.convertEntries(entries.compactMapValues { $0 })
        var changes: [String: PropertyListValue?] = converted.mapValues { .some($0) }
        for (name, value) in entries where value == nil { changes[name] = .some(nil) }
        let changesOnlyRemove = changes.values.allSatisfy { $0 == nil }
        let frozen = changes
        return CollectionWrite(
            setting: entries.filter { $0.value != nil }.map(\.key),
            removing: entries.filter { $0.value == nil }.map(\.key),
            incompatible: incompatible,
            change: .edit(Edit(apply: { (stored: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
                for (name, value) in frozen { stored[name] = value }
                return changesOnlyRemove
            }, isRepeatable: true)),
            knownValues: converted
        )
    }

    /// Replaces the whole collection with `values`.
    static func replacement(_ values: [String: Any], repairing policy: RepairPolicy) -> CollectionWrite {
        let (converted, incompatible) = PropertyListValue.convertEntries(values)
        return CollectionWrite(
            setting: Array(values.keys), incompatible: incompatible, repair: policy, change: .replace(converted), knownValues: converted
        )
    }

    /// Stores one entry's encoded value (`nil`: removes it), or refuses it when it could not be encoded.
    static func entry(_ name: String, encoded: PropertyListValue?, encodable: Bool) -> CollectionWrite {
        let removes = encoded == nil && encodable
        return CollectionWrite(
            setting: removes ? [] : [name],
            removing: removes ? [name] : [],
            incompatible: encodable ? [] : [name],
            change: .edit(Edit(apply: { (stored: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
                if encodable { stored[name] = encoded }
                return removes
            }, isRepeatable: true)),
            knownValues: encoded.map { [name: $0] } ?? [:]
        )
    }
}
