import PrefsPropertyList

// The rules a class declares for its collection's entries (an `@Entry`'s `range:` or `allowed:`, SPEC §14), kept
// by the suite the class's instances use, so that a write through the suite's own API (the `UserDefaults` face,
// `setValue`, `modifyValue`, `setPersistentDomain`) is refused as the instance's own writes are. The suite knows
// nothing of classes: an instance hands it the check, keyed by its storage key and its class.

/// A check of the entries a write through a suite changes in one collection.
package struct CollectionRule: Sendable {
    /// Throws (``PrefsError/valueNotAllowed(entry:reason:)``) when one of `changed`, an entry of `entries` (the
    /// collection as the write leaves it), holds a value the rule refuses.
    package let check: @Sendable (_ entries: [String: PropertyListValue], _ changed: [String]) throws(PrefsError) -> Void
    /// The key of the domain that holds the collection's schema version, and the newest version the class
    /// understands: a write through the suite to a collection stamped newer is refused
    /// (``PrefsError/collectionFromNewerVersion(stored:supported:)``), as the instance's own writes are (SPEC §9:
    /// an older app never overwrites what it does not understand).
    package let schema: (versionKey: String, supported: Int)

    /// A rule that runs `check` and refuses a collection newer than `schema.supported`.
    package init(schema: (versionKey: String, supported: Int),
                 _ check: @escaping @Sendable (_ entries: [String: PropertyListValue], _ changed: [String]) throws(PrefsError) -> Void) {
        self.schema = schema
        self.check = check
    }

    /// Throws when `contents`, a domain's, stamps the collection with a version newer than the rule's class understands.
    func refuseNewerCollection(in contents: [String: PropertyListValue]) throws(PrefsError) {
        if case .integer(let stored)? = contents[schema.versionKey], stored > schema.supported {
            throw .collectionFromNewerVersion(stored: stored, supported: schema.supported)
        }
    }
}

extension DefaultsSuite {
    /// Makes every write of the suite's own API to the collection under `key` keep `rule`, from now on; `owner`
    /// (the declaring class) keeps one rule per collection, so that the instances of a class, which all hand
    /// the same rule, register it once.
    /// `rule` is made only the first time (a write of an instance calls this each time: a look-up, no allocation).
    package func enforce(forCollection key: String, of owner: ObjectIdentifier, _ rule: () -> CollectionRule) {
        collectionRules.withLock { rules in
            if rules[key]?[owner] == nil { rules[key, default: [:]][owner] = rule() }
        }
    }

    /// The rules of the collection under `key`; empty for most keys.
    func collectionRules(forKey key: String) -> [CollectionRule] {
        collectionRules.withLock { rules in rules[key].map { Array($0.values) } ?? [] }
    }

    /// Every collection's rules, for a write of a whole domain.
    func allCollectionRules() -> [String: [CollectionRule]] {
        collectionRules.withLock { rules in rules.mapValues { Array($0.values) } }
    }

    /// Refuses a change of the collection from `before` to `after` that sets an entry to a value one of `rules`
    /// refuses. Only the entries the change sets are judged, as the instance's writes judge them: a value
    /// stored by someone else and left as it is does not refuse a write of other entries. A removed entry reads
    /// as its default, and is allowed; a value that is not a dictionary is not a collection, and no rule applies.
    static func refuseBrokenRules(_ rules: [CollectionRule], from before: PropertyListValue?, to after: PropertyListValue?) throws(PrefsError) {
        guard !rules.isEmpty, case .dictionary(let entries)? = after else { return }
        let old = before?.dictionaryValue ?? [:]
        let changed = entries.filter { name, value in !(old[name]?.isIdentical(to: value) ?? false) }.keys.sorted()
        guard !changed.isEmpty else { return }
        for rule in rules { try rule.check(entries, changed) }
    }
}
