import PrefsPropertyList
import PrefsStorage

// The constraints of a class's entries, handed to the suite its instances use, so that a write through the
// suite's own API (`prefs.userDefaults?.set(…, forKey: prefs.key)`, `setValue`, `modifyValue`,
// `setPersistentDomain`) is refused as the instance's writes are (SPEC §14: "through every path").

extension RVS_PersistentPrefs {
    /// Makes `suite` refuse a write of the collection under `storageKey` that breaks one of `constraints`, or
    /// that would change a collection stored by a newer ``schemaVersion`` than this class's (SPEC §9).
    /// Called at the instance's load and at each of its writes (with the suite the write uses, which an
    /// override of ``userDefaults`` may change): the suite keeps one rule per class and collection, so the calls
    /// after the first cost a look-up.
    func enforceConstraints(_ constraints: [String: EntryConstraint], in suite: DefaultsSuite, storageKey: String) {
        suite.enforce(forCollection: storageKey, of: ObjectIdentifier(type(of: self))) {
            let schema = (versionKey: Self.schemaVersionKey(for: storageKey), supported: type(of: self).schemaVersion)
            return CollectionRule(schema: schema) { entries, changed throws(PrefsError) in
                guard !constraints.isEmpty else { return }
                try CollectionWrite.refuseDisallowed(entries, setting: changed, constraints: constraints)
            }
        }
    }
}
