import Foundation
import Glibc
import PrefsPropertyList
import Synchronization

// Changing one entry atomically from its current value: the transform runs under the domain's lock, on the
// value stored at that instant, so concurrent changes from any number of processes are all kept. This is
// what `prefs.launchCount += 1` is not: that reads, then writes, and two processes can both read 4 and
// both write 5.

extension RVS_PersistentPrefs {
    /// Changes one entry atomically, from its current stored value, under the domain's lock: concurrent
    /// changes of that entry by other processes and threads are all kept.
    ///
    /// Reach for it instead of a read followed by a write whenever the new value depends on the old one.
    /// `prefs.launchCount += 1` reads, then writes: two processes can both read 4 and both write 5.
    /// This cannot lose an increment:
    ///
    /// ```swift
    /// prefs.modify("launchCount") { ($0 as? Int ?? 0) + 1 }
    /// ```
    ///
    /// `transform` is given the entry's stored value as a native value (`nil` when absent) and returns the
    /// new one; returning `nil` removes the entry. The update is validated like a subscript write (the
    /// name must be in ``keys``, the new value must be a property-list value), notifies observers like
    /// one, and sets ``lastError``.
    ///
    /// On a domain file, `transform` runs once, while the domain is locked against every other writer, and
    /// while readers of the domain in this process wait: keep it short. On a backend that retries on
    /// conflict instead of locking (an etcd domain, `PrefsEtcd`, an ``OptimisticDomainStorage``), it runs once
    /// per attempt: again when another writer changed the domain first, or when an attempt's outcome could not
    /// be seen, so it may run more than once, while the change is applied exactly once; keep it free of side
    /// effects. There the instance holds no lock while the `modify` waits for the cluster: the instance's
    /// reads on other threads go on meanwhile, each within its own timeout, and its other writes wait for
    /// this one. It must not use this instance (read it, write it,
    /// call `modify` again, or reach its ``userDefaults``, unless a subclass overrides it): that would
    /// wait for itself, so it fails at once instead, the `modify` writes nothing, and ``lastError`` is
    /// ``PrefsError/unknownError(error:)`` saying so. Do not use other instances over the same domain inside it either. If it throws, nothing
    /// is written, the error is rethrown, and ``lastError`` is ``PrefsError/unknownError(error:)`` holding it.
    ///
    /// For an `@Entry` property, use the typed form, ``PrefsObserving/modify(_:_:)``.
    /// - Parameters:
    ///   - entry: An entry name from ``keys``.
    ///   - transform: Computes the new value from the stored one.
    /// - Returns: The entry's new value as stored, as a native value; `nil` when the entry was removed or
    ///   the update failed (see ``lastError``).
    @discardableResult
    public func modify<Failure: Error>(_ entry: String, _ transform: (Any?) throws(Failure) -> Any?) throws(Failure) -> Any? {
        var thrown: Failure?
        var result: PropertyListValue?
        let succeeded = withoutActuallyEscaping(transform) { transform in
            perform(.transforming(entry) { (stored: PropertyListValue?) throws(PrefsError) -> PropertyListValue? in
                let new: Any?
                do throws(Failure) {
                    new = try transform(stored?.nativeValue)
                } catch {
                    thrown = error
                    throw .unknownError(error: error)
                }
                guard let new else {
                    result = nil
                    return nil
                }
                guard let converted = PropertyListValue(new) else { throw .valuesNotPlistCompatible(invalidElements: [entry]) }
                result = converted
                return converted
            })
        }
        if let thrown { throw thrown }
        return succeeded ? result?.nativeValue : nil
    }
}

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// Changes a typed entry atomically, from its current stored value, under the domain's lock:
    /// concurrent changes of that entry by other processes and threads are all kept.
    ///
    /// Reach for it whenever the new value depends on the old one and another process may change the
    /// entry meanwhile. `settings.launchCount += 1` and `settings.window.width = 1024` read, then write:
    /// one operation of the instance, but two processes can both read 4 and both write 5. This cannot
    /// lose an increment:
    ///
    /// ```swift
    /// settings.modify(\.$launchCount) { $0 += 1 }
    /// ```
    ///
    /// `transform` is given the value a read would return at that instant (the default when the entry
    /// is absent or does not decode) and changes it in place; the result is stored as an assignment
    /// would store it (setting an `Optional` entry to `nil` removes it). The update is validated,
    /// notifies observers and sets ``RVS_PersistentPrefs/lastError`` like any write.
    ///
    /// On a domain file, `transform` runs once, while the domain is locked against every other writer and
    /// readers of the domain in this process wait: keep it short. On a backend that retries on conflict
    /// instead of locking (an etcd domain, `PrefsEtcd`, an ``OptimisticDomainStorage``), it runs once per attempt,
    /// so it may run more than once, while the change is applied exactly once; keep it free of side effects.
    /// There the instance holds no lock while the `modify` waits for the cluster: its reads on other threads go
    /// on meanwhile, each within its own timeout, and its other writes wait for this one. Using this instance inside it (reading or writing it,
    /// another `modify`, its `userDefaults` unless a subclass overrides it) fails at once, and the `modify` then writes nothing and sets
    /// `lastError` to ``PrefsError/unknownError(error:)`` saying why; do not use other instances over the
    /// same domain inside it either. If it throws, nothing is written, the error is rethrown, and
    /// `lastError` is ``PrefsError/unknownError(error:)`` holding it.
    /// - Parameters:
    ///   - entry: The key path of the entry's projected value: `\.$launchCount` for `@Entry(…) var launchCount`.
    ///   - transform: Changes the value.
    /// - Returns: The new value; `nil` when the update failed (see ``RVS_PersistentPrefs/lastError``).
    @discardableResult
    public func modify<Value, Failure: Error>(
        _ entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>,
        _ transform: (inout Value) throws(Failure) -> Void
    ) throws(Failure) -> Value? {
        let entry = self[keyPath: entry]
        let name = entry.name
        var thrown: Failure?
        var result: Value?
        let succeeded = withoutActuallyEscaping(transform) { transform in
            perform(.transforming(entry.definition) { (stored: PropertyListValue?) throws(PrefsError) -> PropertyListValue? in
                var value = entry.defaultValue
                if let stored, let decoded = try? entry.coding.decode(stored) { value = decoded }
                do throws(Failure) {
                    try transform(&value)
                } catch {
                    thrown = error
                    throw .unknownError(error: error)
                }
                let encoded: PropertyListValue?
                do {
                    encoded = try entry.coding.encode(value)
                } catch {
                    throw .valuesNotPlistCompatible(invalidElements: [name])
                }
                result = value
                return encoded
            })
        }
        if let thrown { throw thrown }
        return succeeded ? result : nil
    }
}

extension CollectionWrite {
    /// Changes one entry from its stored value (`nil`: absent) to what `transform` returns (`nil`: removes
    /// it), once, under the domain's lock: what both forms of `modify` write.
    static func transforming(_ name: String, _ transform: @escaping (PropertyListValue?) throws(PrefsError) -> PropertyListValue?) -> CollectionWrite {
        CollectionWrite(setting: [name], change: .edit(Edit(apply: { (stored: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
            let new = try transform(stored[name])
            stored[name] = new
            return new == nil
        }, isRepeatable: false)))
    }

    /// Replaces a typed entry's stored form with what `transform` makes of it, under the domain's lock: the
    /// form found under its name or a former name, stored under its name, the former names removed.
    static func transforming<Value>(_ entry: EntryDefinition<Value>, _ transform: @escaping (PropertyListValue?) throws(PrefsError) -> PropertyListValue?) -> CollectionWrite {
        CollectionWrite(setting: [entry.name], removing: entry.formerNames, change: .edit(Edit(apply: { (stored: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
            let new = try transform(entry.storedForm(in: stored))
            entry.store(new, in: &stored)
            return new == nil
        }, isRepeatable: false)))
    }
}

/// Why an operation of an instance failed inside that instance's own `modify` transform: it would have
/// waited for the lock the transform runs under.
struct ModifyMisuse: Error, CustomStringConvertible {
    let storageKey: String

    var description: String {
        "the collection '\(storageKey)' was used from inside its own modify transform (a read, a write, another "
            + "modify, or its userDefaults), which runs while the domain is locked and would wait for itself; "
            + "the modify wrote nothing"
    }

    static func error(storageKey: String) -> PrefsError { .unknownError(error: ModifyMisuse(storageKey: storageKey)) }
}

extension RVS_PersistentPrefs {
    /// Whether this thread is running this instance's `modify` transform.
    var isRunningOwnTransform: Bool {
        let running = transformThread.load(ordering: .relaxed)
        return running != 0 && running == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// `write`, with a `modify` transform marked as running while it runs, and failing when it used the
    /// instance meanwhile; any other write as it is.
    func guardingTransform(of write: CollectionWrite) -> CollectionWrite {
        guard case .edit(let edit) = write.change, !edit.isRepeatable else { return write }
        var guarded = write
        let storageKey = key
        guarded.change = .edit(CollectionWrite.Edit(apply: { [self] (entries: inout [String: PropertyListValue]) throws(PrefsError) -> Bool in
            // Claimed, not stored: over an optimistic domain the transform runs without the operation lock, and
            // a write made meanwhile by a thread holding that lock (from a handler) may run its own transform
            // at the same time. Only the thread that claimed the slot marks and checks a misuse; the other's
            // misuse goes unnoticed, which over such a domain (no lock held by the transform) waits for nothing.
            let claimed = transformThread.compareExchange(
                expected: 0, desired: UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed
            ).exchanged
            if claimed { transformMisusedInstance.store(false, ordering: .relaxed) }
            let removesOnly: Bool
            do throws(PrefsError) {
                removesOnly = try edit.apply(&entries)
            } catch {
                if claimed { transformThread.store(0, ordering: .relaxed) }
                throw error
            }
            guard claimed else { return removesOnly }
            transformThread.store(0, ordering: .relaxed)
            if transformMisusedInstance.load(ordering: .relaxed) { throw ModifyMisuse.error(storageKey: storageKey) }
            return removesOnly
        }, isRepeatable: false))
        return guarded
    }
}
