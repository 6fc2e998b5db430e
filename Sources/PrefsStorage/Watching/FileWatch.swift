/// A watch on one file (a domain file), kept for as long as the caller keeps this object.
///
/// The handler runs on the process's watch thread after the file may have changed: it was replaced,
/// created, removed or rewritten, its directory appeared or went away, or (where polling) its identity
/// changed. Calls are coalesced and may be spurious; the handler reads the file to learn whether and how
/// it changed. Start the watch before reading the state it is compared with, so that no change falls in
/// between. Releasing the object, or ``cancel()``, stops the watch; a call already running may finish.
package final class FileWatch: DomainChangeWatch {
    private let engine: WatchEngine
    private let subscription: WatchSubscription.ID

    /// Watches `directory/fileName`, which need not exist yet, nor its directory.
    /// - Parameters:
    ///   - fallback: Forces polling, for tests; by default ``DomainWatching/forcedFallback``.
    ///   - pollingInterval: How often to `stat()` where polling; by default ``DomainWatching/pollingInterval``.
    ///   - handler: Called on the watch thread, one call at a time for the whole process.
    ///   - engine: The engine that watches; the process's own unless a test gives one.
    package init(directory: String, fileName: String, fallback: DomainWatching.Fallback = DomainWatching.forcedFallback,
                 pollingInterval: Duration = DomainWatching.pollingInterval, engine: WatchEngine = .shared,
                 handler: @escaping @Sendable () -> Void) {
        let directory = directory.utf8.count > 1 && directory.utf8.last == UInt8(ascii: "/") ? String(directory.dropLast()) : directory
        self.engine = engine
        subscription = engine.add(directory: directory, fileName: fileName, fallback: fallback,
                                  pollingInterval: pollingInterval, handler: handler)
    }

    /// Stops the watch; the last watch of a directory removes its inotify watch, and the last of the
    /// process ends the watch thread. Idempotent.
    package func cancel() { engine.remove(subscription) }

    /// Whether the watch currently hears inotify events, and whether it polls.
    package var mode: (events: Bool, polls: Bool) { engine.mode(of: subscription) }

    deinit { cancel() }
}

extension FileDomainStorage {
    /// Watches this domain's file for changes made by anyone: see ``FileWatch``.
    package func watch(fallback: DomainWatching.Fallback = DomainWatching.forcedFallback,
                       pollingInterval: Duration = DomainWatching.pollingInterval,
                       handler: @escaping @Sendable () -> Void) -> FileWatch {
        FileWatch(directory: directory, fileName: name + DomainName.fileExtension, fallback: fallback, pollingInterval: pollingInterval,
                  engine: watchEngine ?? .shared, handler: handler)
    }

    /// Tells `onChange` whenever the domain file may have changed, whoever changed it: replaced, created,
    /// removed or rewritten, its directory made or removed, by this process or any other (see
    /// <doc:Observation> for how: one inotify instance per process, and `stat()` polling where inotify
    /// cannot see every change, every ``DomainWatching/pollingInterval``).
    public func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        let (fallback, interval) = watchSettings ?? (DomainWatching.forcedFallback, DomainWatching.pollingInterval)
        return watch(fallback: fallback, pollingInterval: interval, handler: onChange)
    }
}
