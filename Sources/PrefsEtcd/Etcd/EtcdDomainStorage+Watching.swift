import PrefsStorage
import Synchronization

extension EtcdDomainStorage {
    /// Tells `onChange` of every change of the domain's key, by any writer on any machine, through an etcd
    /// watch from the revision last seen (read now if none was), never by polling. After the stream breaks
    /// the watch resumes at the next endpoint from the last revision it saw; if that history was compacted,
    /// the domain is read again and `onChange` told. The events also keep this object's cached state current,
    /// so the next read transfers nothing.
    public func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        watchChanges(handingOver: { _ in onChange() })
    }

    /// ``watchChanges(_:)``, handing over the domain's snapshot after each change: the one the watch's event
    /// carried (decoded once, and kept as this object's cached state, which never goes back to an earlier
    /// revision), so that the caller tells the change with no round trip. `nil` when the value there does not
    /// read (the caller's read then reports why).
    public func watchChanges(handingOver onChange: @escaping @Sendable (DomainSnapshot?) -> Void) -> (any DomainChangeWatch)? {
        let start = startRevision()
        let stream = EtcdWatchStream(
            client: client, key: keyBytes, startRevision: start, timeout: timeout,
            onEvents: { [weak self] events in
                guard let self else { return onChange(nil) }
                absorb(events)
                onChange(cachedSnapshot)
            },
            onCompacted: { [weak self] in
                let resume = self?.resumeAfterCompaction() ?? 0
                onChange(self?.cachedSnapshot)
                return resume
            })
        return EtcdChangeWatch(stream)
    }

    /// What the cached state holds, when it reads.
    private var cachedSnapshot: DomainSnapshot? {
        state.withLock { state in
            guard case .success(let snapshot)? = state.cached?.result else { return nil }
            return snapshot
        }
    }

    /// The revision a new watch starts from: after the last state seen, read first when there is none (a watch
    /// starting "now" on the server could begin after the caller's next read, and miss a change in between).
    private func startRevision() -> Int64 {
        if let seen = state.withLock({ $0.cached?.seenAt }) { return seen + 1 }
        if let read = try? refresh(by: .after(timeout)) { return read.seenAt + 1 }
        return 0
    }

    /// Reads the domain again after the watch's history was compacted, and returns where to resume.
    private func resumeAfterCompaction() -> Int64 {
        (try? refresh(by: .after(timeout)).seenAt + 1) ?? 0
    }

    /// Starts the watch behind ``ReadMode/watched`` once, from `revision`.
    func startReadWatch(from revision: Int64) {
        let needed = state.withLock { state -> Bool in
            guard state.readWatch == nil else { return false }
            return true
        }
        guard needed else { return }
        let stream = EtcdWatchStream(
            client: client, key: keyBytes, startRevision: revision, timeout: timeout,
            onEvents: { [weak self] events in self?.absorb(events) },
            onCompacted: { [weak self] in self?.resumeAfterCompaction() ?? 0 },
            onLive: { [weak self] live in self?.state.withLock { $0.readWatchLive = live } })
        let kept = state.withLock { state -> Bool in
            guard state.readWatch == nil else { return false }
            state.readWatch = stream
            return true
        }
        if !kept { stream.cancel() }
    }
}
