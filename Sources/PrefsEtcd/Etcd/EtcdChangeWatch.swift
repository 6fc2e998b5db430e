import PrefsStorage

/// The watch that ``EtcdDomainStorage/watchChanges(_:)`` returns: its etcd watch stops when it is cancelled or
/// released.
final class EtcdChangeWatch: DomainChangeWatch {
    private let stream: EtcdWatchStream

    init(_ stream: EtcdWatchStream) {
        self.stream = stream
    }

    func cancel() {
        stream.cancel()
    }

    deinit { cancel() }
}
