import Foundation

extension RVS_PersistentPrefs {
    /// The values of one typed entry over time: its current value first, then its value after each change.
    ///
    /// Made by ``PrefsObserving/updates(of:initial:)``. It hears what ``RVS_PersistentPrefs/changes`` hears
    /// (successful writes through the instance) and yields only when the entry's stored value changed, so a
    /// write of another entry, or of an equal value, yields nothing. An absent entry, or one that does not
    /// decode, yields the default. A reader that falls behind skips intermediate values, never the latest.
    /// The sequence ends when the instance is deallocated or the reading task is cancelled; iterate it once.
    public struct EntryUpdates<Value: Sendable>: AsyncSequence, Sendable {
        /// The entry's value.
        public typealias Element = Value
        /// The sequence never fails.
        public typealias Failure = Never

        let name: String
        let formerNames: [String]
        let defaultValue: Value
        let decode: @Sendable (PropertyListValue) throws -> Value
        /// The value when the sequence was made, yielded first unless `updates(of:initial: false)` made it.
        let first: Value?
        let firstStored: PropertyListValue?
        let changes: AsyncStream<PrefsChange>

        /// Makes the iterator: its first element is the value the entry had when the sequence was made.
        public func makeAsyncIterator() -> Iterator {
            Iterator(sequence: self, base: changes.makeAsyncIterator(), last: firstStored, deliveredFirst: first == nil)
        }

        /// Iterates the values of one entry.
        public struct Iterator: AsyncIteratorProtocol {
            /// The entry's value.
            public typealias Element = Value
            /// The iteration never fails.
            public typealias Failure = Never

            let sequence: EntryUpdates
            var base: AsyncStream<PrefsChange>.Iterator
            var last: PropertyListValue?
            var deliveredFirst: Bool

            /// The entry's next value, or `nil` once the instance is gone or the task is cancelled.
            public mutating func next() async -> Value? {
                if let pending = takeFirst() { return pending.value }
                while let change = await base.next() {
                    if let value = element(for: change) { return value.value }
                }
                return nil
            }

            /// The entry's next value, without leaving the caller's actor.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> Value? {
                if let pending = takeFirst() { return pending.value }
                while let change = await base.next(isolation: actor) {
                    if let value = element(for: change) { return value.value }
                }
                return nil
            }

            /// Boxed, so that an `Optional` entry's `nil` value is told apart from "nothing".
            struct Pending { let value: Value }

            private mutating func takeFirst() -> Pending? {
                guard !deliveredFirst, let first = sequence.first else { return nil }
                deliveredFirst = true
                return Pending(value: first)
            }

            private mutating func element(for change: PrefsChange) -> Pending? {
                var stored = change.collection[sequence.name]
                for former in sequence.formerNames where stored == nil { stored = change.collection[former] }
                guard stored != last else { return nil }
                last = stored
                guard let stored else { return Pending(value: sequence.defaultValue) }
                do {
                    return Pending(value: try sequence.decode(stored))
                } catch {
                    return Pending(value: sequence.defaultValue)
                }
            }
        }
    }
}

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// The values of a typed entry as an asynchronous sequence: its current value first, then its value
    /// after each change.
    ///
    /// Reach for it to keep something in step with one setting from a task:
    ///
    /// ```swift
    /// Task {
    ///     for await appearance in settings.updates(of: \.$appearance) {
    ///         print("appearance is now", appearance)
    ///     }
    /// }
    /// ```
    ///
    /// It hears what ``RVS_PersistentPrefs/changes`` hears — successful writes through this instance —
    /// and yields only when this entry's stored value changed. Each call makes a new, independent
    /// sequence; see ``RVS_PersistentPrefs/EntryUpdates`` for its lifetime.
    ///
    /// With `initial: false`, the current value is not yielded: the first element is the value after
    /// the first change, for code that has already applied the current one.
    /// - Parameters:
    ///   - entry: The key path of the entry's projected value: `\.$appearance` for `@Entry(…) var appearance`.
    ///   - initial: Whether the current value comes first (the default), or only changes are yielded.
    public func updates<Value: Sendable>(of entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>, initial: Bool = true) -> RVS_PersistentPrefs.EntryUpdates<Value> {
        let entry = self[keyPath: entry]
        // Listening starts before the current value is read, so that no write in between is missed (one
        // seen twice is told apart by its stored value, and yielded once).
        let changes = self.changes
        let (stored, value) = locked { () -> (PropertyListValue?, Value) in
            var stored: PropertyListValue?
            let value = operation(failure: entry.defaultValue) { () throws(PrefsError) -> Value in
                let loaded = try loadStoredEntry(entry)
                stored = loaded.stored
                return try loaded.outcome.get()
            }
            return (stored, value)
        }
        return RVS_PersistentPrefs.EntryUpdates(
            name: entry.name, formerNames: entry.formerNames, defaultValue: entry.defaultValue, decode: entry.coding.decode,
            first: initial ? value : nil, firstStored: stored, changes: changes
        )
    }
}
