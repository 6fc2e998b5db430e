import PrefsStorage
import Synchronization

/// The watch that ``EtcdDomainStorage/watchChanges(_:)`` returns: its etcd watch stops when it is cancelled or
/// released, and the domain stops counting it as live.
final class EtcdChangeWatch: DomainChangeWatch {
    /// Whether the watch was cancelled: shared with its stream's handlers, which may still run after.
    final class Cancellation: Sendable {
        private let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        func set() { flag.store(true, ordering: .releasing) }
    }

    private let stream: EtcdWatchStream
    private let onCancel: @Sendable () -> Void

    init(_ stream: EtcdWatchStream, onCancel: @escaping @Sendable () -> Void) {
        self.stream = stream
        self.onCancel = onCancel
    }

    func cancel() {
        onCancel()
        stream.cancel()
    }

    deinit { cancel() }
}
