import Foundation

/// One element of ``RVS_PersistentPrefs/changes``: the collection as it is after a successful write
/// through the instance.
///
/// It holds property-list values, so it is `Sendable` and may cross into any task; ``values`` gives
/// them as native Swift values, as ``RVS_PersistentPrefs/values`` does.
public struct PrefsChange: Sendable, Equatable {
    /// The collection the change produced: for a write through the instance, as read right after it
    /// through the search list (so a value for the storage key in the argument domain shows in it; it is
    /// empty if that read fails); for a change made elsewhere, the collection found to differ.
    ///
    /// For an instance that watches (``RVS_PersistentPrefs/watchesExternalChanges``), a write through it
    /// carries the collection last told with the entries the write changed as they are after it; a change
    /// made elsewhere just before the write is told by an element of its own.
    public let collection: [String: PropertyListValue]

    /// The collection after the write, as native Swift values.
    public var values: [String: Any] { collection.nativeValues }
}

extension RVS_PersistentPrefs {
    /// The newest changes kept for a slow reader of ``changes`` before older ones are dropped.
    ///
    /// Each element carries the whole collection, so a reader that falls behind still ends with the
    /// latest state; it only misses intermediate ones.
    public static let changeBufferLimit = 100

    /// An asynchronous sequence of the collection after each successful write through this instance.
    ///
    /// The same writes notify as for key-path observers: never reads, rejected writes, ``flush()``, or
    /// other instances' or processes' writes (unless ``watchesExternalChanges`` is on). The sequence begins with the next write after it is
    /// made, keeps at most ``changeBufferLimit`` elements for a reader that falls behind (dropping the
    /// oldest), and ends when the instance is deallocated or the reading task is cancelled. Each
    /// access to `changes` makes a new, independent sequence: keep the one you iterate.
    ///
    /// ```swift
    /// for await change in prefs.changes {
    ///     print(change.values)
    /// }
    /// ```
    public var changes: AsyncStream<PrefsChange> {
        let (stream, continuation) = AsyncStream<PrefsChange>.makeStream(bufferingPolicy: .bufferingNewest(Self.changeBufferLimit))
        let id = observers.addStream(continuation)
        continuation.onTermination = { [weak observers] _ in observers?.remove(id) }
        return stream
    }
}
