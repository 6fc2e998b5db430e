import Foundation

/// The observers and change streams of one instance.
///
/// Its lock guards only the registrations: it is never held while a handler runs, so a handler may
/// add or remove observers, and observers may be added and removed from any thread during writes.
/// (The instance's `operationLock` is held while a write's handlers run.)
final class ObserverList: @unchecked Sendable {
    private let lock = Lock()
    private var observers: [(id: Int, observer: AnyPrefsObserver)] = []
    private var streams: [Int: AsyncStream<PrefsChange>.Continuation] = [:]
    private var nextID = 0

    init() {}

    deinit {
        // The instance is gone: its streams end.
        for continuation in streams.values { continuation.finish() }
    }

    func add(_ observer: AnyPrefsObserver) -> PrefsObservation {
        let id = lock.withLock { () -> Int in
            nextID += 1
            observers.append((nextID, observer))
            return nextID
        }
        return PrefsObservation(list: self, id: id)
    }

    func addStream(_ continuation: AsyncStream<PrefsChange>.Continuation) -> Int {
        lock.withLock {
            nextID += 1
            streams[nextID] = continuation
            return nextID
        }
    }

    func remove(_ id: Int) {
        lock.withLock {
            observers.removeAll { $0.id == id }
            streams[id] = nil
        }
    }

    /// How many key-path observers and change streams are registered now.
    #if DEBUG
    package var registrationCounts: (observers: Int, streams: Int) {
        lock.withLock { (observers.count, streams.count) }
    }
    #endif

    private func isRegistered(_ id: Int) -> Bool {
        lock.withLock { observers.contains { $0.id == id } }
    }

    /// Gathers, before a write, what its notifications need; `nil` when nobody observes.
    func prepareChange(of object: RVS_PersistentPrefs) -> PendingChange? {
        let (current, hasStreams) = lock.withLock { (observers, !streams.isEmpty) }
        if current.isEmpty && !hasStreams { return nil }
        let deliveries = current.map { entry in
            entry.observer.begin(object) { [weak self] in self?.isRegistered(entry.id) ?? false }
        }
        return PendingChange(deliveries: deliveries) { [weak self, weak object] in
            guard let self, let object else { return }
            let continuations = self.lock.withLock { Array(self.streams.values) }
            guard !continuations.isEmpty else { return }
            let change = PrefsChange(collection: object.currentCollectionForWatching() ?? [:])
            for continuation in continuations { continuation.yield(change) }
        }
    }
}

/// The notifications of one write, prepared before it.
struct PendingChange {
    let deliveries: [PendingDelivery]
    let publish: () -> Void

    /// Whether ``willChange()`` has anything to send: some observer asked for `.prior`.
    var sendsPrior: Bool { deliveries.contains { $0.prior != nil } }

    /// Sends the `.prior` notifications: the write has passed validation and is about to happen.
    func willChange() {
        for delivery in deliveries { delivery.prior?() }
    }

    /// Sends the notifications of a successful write, in the order the observers were added, then
    /// publishes the new collection to the change streams.
    func didChange() {
        for delivery in deliveries { delivery.after() }
        publish()
    }
}
