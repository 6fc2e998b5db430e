import PrefsStorage
import Synchronization

/// The key-path observers and change streams registered with one instance: who is told, not what.
///
/// Its lock guards only the registrations and is never held while a handler runs, so a handler may add
/// or remove observers, and observers may be added and removed from any thread during deliveries.
final class ObserverList: Sendable {
    /// One registered key-path observer.
    struct Registration: Sendable {
        let id: Int
        let observer: any AnyPrefsObserver
    }

    private struct State {
        var observers: [Registration] = []
        var streams: [Int: AsyncStream<PrefsChange>.Continuation] = [:]
        var nextID = 0
    }

    private let state = PrefsMutex(State())

    init() {}

    deinit {
        // The instance is gone: its streams end.
        for continuation in state.withLock({ Array($0.streams.values) }) { continuation.finish() }
    }

    func add(_ observer: any AnyPrefsObserver) -> PrefsObservation {
        let id = state.withLock { state in
            state.nextID += 1
            state.observers.append(Registration(id: state.nextID, observer: observer))
            return state.nextID
        }
        return PrefsObservation(list: self, id: id)
    }

    func addStream(_ continuation: AsyncStream<PrefsChange>.Continuation) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.streams[state.nextID] = continuation
            return state.nextID
        }
    }

    func remove(_ id: Int) {
        // Dropped outside the lock: releasing a handler may release what it captured, and that may be
        // anything, another token included.
        let removed = state.withLock { state -> (Registration?, AsyncStream<PrefsChange>.Continuation?) in
            let index = state.observers.firstIndex { $0.id == id }
            return (index.map { state.observers.remove(at: $0) }, state.streams.removeValue(forKey: id))
        }
        withExtendedLifetime(removed) {}
    }

    /// The key-path observers registered now, in the order they were added.
    var observers: [Registration] { state.withLock { $0.observers } }

    /// Whether anyone listens: a key-path observer or a change stream.
    var isEmpty: Bool { state.withLock { $0.observers.isEmpty && $0.streams.isEmpty } }

    /// Whether the observer `id` is still registered: one invalidated during a delivery is not called again.
    func isRegistered(_ id: Int) -> Bool {
        state.withLock { $0.observers.contains { $0.id == id } }
    }

    /// Gives `change` to every change stream.
    func publish(_ change: PrefsChange) {
        // Nothing made when no stream listens (most instances): a change heard by thousands is told to each.
        guard let continuations = state.withLock({ $0.streams.isEmpty ? nil : Array($0.streams.values) }) else { return }
        for continuation in continuations { continuation.yield(change) }
    }

    #if DEBUG
    /// How many key-path observers and change streams are registered now.
    package var registrationCounts: (observers: Int, streams: Int) {
        state.withLock { ($0.observers.count, $0.streams.count) }
    }
    #endif
}
