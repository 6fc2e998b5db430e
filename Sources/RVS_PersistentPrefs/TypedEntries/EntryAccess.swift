import Foundation

// Reading and writing one typed entry: the operations behind an `@Entry` property's accessors, and the
// throwing read. A read decodes only when the entry's stored form changed since the last read (the
// instance keeps the decoded value per entry, by snapshot); a write encodes and goes through the same
// locked single-entry update as a subscript write.

extension RVS_PersistentPrefs {
    /// The stored form of `entry` (`nil`: absent) as the search list finds it now, and what it decodes to:
    /// the entry's default when it is absent, an ``PrefsError/invalidStoredEntry(entry:reason:)`` when it
    /// does not decode. Decodes only when the stored form changed since the last read of this entry.
    /// - Throws: Why the collection cannot be read.
    func loadStoredEntry<Value>(_ entry: Entry<Value>) throws(PrefsError) -> (stored: PropertyListValue?, outcome: Result<Value, PrefsError>) {
        let definition = entry.definition
        let value: Value
        do throws(PrefsError) {
            value = try loadEntry(entry)
        } catch {
            if case .invalidStoredEntry = error { return (definition.stored, .failure(error)) }
            throw error
        }
        return (definition.stored, .success(value))
    }

    /// The value of `entry` as a read returns it (see ``loadStoredEntry(_:)``).
    /// - Throws: Why the collection cannot be read, or ``PrefsError/invalidStoredEntry(entry:reason:)``.
    func loadEntry<Value>(_ entry: Entry<Value>) throws(PrefsError) -> Value {
        let definition = entry.definition
        if notifications.recording != nil { notifications.recording!.typed.insert(definition.name) }
        if let pinned = notifications.pinned {
            // A notification is being told: the version of the collection it carries. Not cached, as it may
            // not be what is stored.
            guard let stored = definition.storedForm(in: pinned) else { return definition.defaultValue }
            do {
                return try definition.coding.decode(stored)
            } catch {
                throw .invalidStoredEntry(entry: definition.name, reason: EntryCoding<Value>.reason(for: error))
            }
        }
        // For Swift Observation: code that read one typed property is told of changes to that entry only.
        swiftObservation.registrar.access(self, keyPath: definition.observedKeyPath(in: swiftObservation))
        let collection = try collection()
        // Nothing changed since the suite kept the read this value came from: not even a search.
        if definition.isCached, let keptAt = definition.keptAt, definition.suite === collection.suite,
           definition.storageKey == collection.storageKey, collection.suite.isUnchanged(since: keptAt) {
            keepWarnings(of: collection.suite)
            return try definition.cachedValue()
        }
        var problems: [PrefsError] = []
        let found = try collection.read(problems: &problems)
        // Reported as warnings: the read succeeds with the other domains' values.
        if problems.isEmpty { keepWarnings(of: collection.suite) } else { keepWarnings(problems, of: collection.suite) }
        // An unchanged domain gives the same snapshot object: nothing to look up, nothing to decode.
        // Invariant F9: the snapshot is the generation (the decoded value is keyed by it).
        if definition.isCached, let snapshot = found?.snapshot, definition.snapshot === snapshot,
           definition.storageKey == collection.storageKey {
            definition.keep(found?.keptAt, by: collection.suite)
            return try definition.cachedValue()
        }
        return try decodeChanged(entry, found: found, in: collection)
    }

    /// The read of `entry` after the domain changed: decoded again only when its stored form changed. Apart
    /// from ``loadEntry(_:)`` so that a read of an unchanged domain, through an unspecialized generic, needs
    /// the metadata of no type made of `Value`.
    @inline(never)
    private func decodeChanged<Value>(_ entry: Entry<Value>, found: DefaultsSuite.Found?,
                                      in collection: StoredCollection) throws(PrefsError) -> Value {
        let definition = entry.definition
        let stored = definition.storedForm(in: try collection.entries(of: found))
        // The domain changed, but perhaps not this entry: compare stored forms before decoding again.
        if definition.isCached, definition.storageKey == collection.storageKey, definition.stored == stored {
            definition.snapshot = found?.snapshot
            definition.keep(found?.keptAt, by: collection.suite)
            return try definition.cachedValue()
        }
        let outcome: Result<Value, PrefsError>
        if let stored {
            do {
                outcome = .success(try definition.coding.decode(stored))
            } catch {
                outcome = .failure(.invalidStoredEntry(entry: definition.name, reason: EntryCoding<Value>.reason(for: error)))
            }
        } else {
            outcome = .success(definition.defaultValue)
        }
        definition.cache(snapshot: found?.snapshot, storageKey: collection.storageKey, stored: stored, outcome: outcome)
        definition.keep(found?.keptAt, by: collection.suite)
        return try outcome.get()
    }

    /// Reads `entry` as one operation: its value, or its default with ``lastError`` saying why.
    @usableFromInline
    func readEntry<Value>(_ entry: Entry<Value>) -> Value {
        operationLock.lock()
        defer { operationLock.unlock() }
        // Nothing changed since the suite kept the read the cached value came from: not even a search.
        if let decoded = keptValue(of: entry.definition) { return decoded.value }
        return operation(failure: entry.defaultValue, notifies: false) { () throws(PrefsError) -> Value in try loadEntry(entry) }
    }

    /// The cached value of `definition`, when the read it came from still stands (see
    /// ``keptReadStands(_:by:)``): the read's outcome, told to Swift Observation and clearing
    /// ``lastError`` as the read would. Caller holds the operation lock.
    @inline(__always)
    private func keptValue<Value>(of definition: EntryDefinition<Value>) -> DecodedValue<Value>? {
        guard notifications.recording == nil, notifications.pinned == nil,
              let (suite, storageKey) = suiteAndKeyForKeptRead(), schemaStandsForKeptRead(by: suite, storageKey: storageKey),
              definition.isCached, definition.suite === suite, definition.storageKey == storageKey,
              let decoded = definition.decoded, keptReadStands(unretained(definition.keptAt), by: suite) else { return nil }
        swiftObservation.registrar.access(self, keyPath: definition.observedKeyPath(in: swiftObservation))
        lastError = nil
        keepWarnings(of: suite)
        return decoded
    }

    /// Takes the operation lock for the whole of an in-place change of an entry: its read, the caller's
    /// change, and its write.
    @usableFromInline
    func beginEntryChange() { operationLock.lock() }

    /// Releases the lock ``beginEntryChange()`` took.
    @usableFromInline
    func endEntryChange() { operationLock.unlock() }

    /// Reads `entry` for an in-place change (the caller holds the operation lock): the value to change,
    /// and whether the change may be written. A collection that cannot be read must not be written over;
    /// a stored value that does not decode is replaced, as assigning the entry would replace it.
    @usableFromInline
    func readEntryForChange<Value>(_ entry: Entry<Value>) -> (value: Value, readSucceeded: Bool) {
        var readSucceeded = true
        let value = operation(failure: entry.defaultValue) { () throws(PrefsError) -> Value in
            do throws(PrefsError) {
                return try loadEntry(entry)
            } catch {
                if case .invalidStoredEntry = error {} else { readSucceeded = false }
                throw error
            }
        }
        return (value, readSucceeded)
    }

    /// Writes `value` to `entry` as a validated single-entry update (removing it when the value encodes as
    /// `nil`); a value that cannot be encoded is refused with
    /// ``PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the entry, and nothing is written.
    @usableFromInline
    func writeEntry<Value>(_ entry: Entry<Value>, _ value: Value) {
        // Not under the operation lock: the write takes it itself, and releases it for an optimistic domain's
        // round trips only when this thread held it not before (see `perform`).
        do {
            storeEntry(entry, try entry.coding.encode(value))
        } catch {
            storeEntry(entry, nil, encodable: false)
        }
    }

    /// Stores the stored form `encoded` of `entry` (`nil`: removes it) under its name, removing its former
    /// names in the same update; a value that could not be encoded (`encodable` false) is refused.
    @discardableResult
    func storeEntry<Value>(_ entry: Entry<Value>, _ encoded: PropertyListValue?, encodable: Bool = true) -> Bool {
        perform(.entry(entry.definition, encoded: encoded, encodable: encodable))
    }
}

extension CollectionWrite {
    /// Stores one typed entry's encoded value (`nil`: removes it) under its name, removing its former names,
    /// or refuses it when it could not be encoded.
    static func entry<Value>(_ entry: EntryDefinition<Value>, encoded: PropertyListValue?, encodable: Bool) -> CollectionWrite {
        var write = CollectionWrite.entry(entry.name, encoded: encoded, encodable: encodable)
        guard !entry.formerNames.isEmpty, case .edit(let edit) = write.change else { return write }
        write.removing += entry.formerNames
        write.change = .edit(Edit(apply: { (stored: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
            let removesOnly = try edit.apply(&stored)
            for former in entry.formerNames { stored[former] = nil }
            return removesOnly
        }, isRepeatable: edit.isRepeatable))
        return write
    }
}

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// Reads a typed entry, throwing when it cannot be read instead of falling back to its default.
    ///
    /// Reach for it where a stored value that does not decode must not pass for the default, for example
    /// to tell the user that a setting was reset:
    ///
    /// ```swift
    /// do {
    ///     let frame = try settings.value(of: \.$window)
    ///     print(frame.width)
    /// } catch {
    ///     print(error)  // The value stored for the entry 'window' does not decode: …
    /// }
    /// ```
    ///
    /// An absent entry is not an error: it returns the default. Like every operation, it also sets
    /// ``RVS_PersistentPrefs/lastError``.
    /// - Parameter entry: The key path of the entry's projected value: `\.$window` for `@Entry(…) var window`.
    /// - Returns: The stored value, decoded; the default when the entry is absent.
    /// - Throws: ``PrefsError/invalidStoredEntry(entry:reason:)`` when the stored value does not decode as
    ///   the entry's type (`reason` says where and why); the errors of a read (an unreadable domain file,
    ///   an unusable domain) when the collection cannot be read.
    public func value<Value>(of entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>) throws(PrefsError) -> Value {
        let entry = self[keyPath: entry]
        var failure: PrefsError?
        let value = locked {
            operation(failure: entry.defaultValue) { () throws(PrefsError) -> Value in
                do throws(PrefsError) {
                    return try loadEntry(entry)
                } catch {
                    failure = error
                    throw error
                }
            }
        }
        if let failure { throw failure }
        return value
    }
}
