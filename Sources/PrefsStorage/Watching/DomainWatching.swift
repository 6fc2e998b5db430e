import Synchronization

/// Settings of the watching that tells an instance of changes made elsewhere (see
/// `RVS_PersistentPrefs.watchesExternalChanges`).
///
/// Where inotify tells of every change (local disk file systems), watching costs nothing while nothing
/// changes. Where it cannot (remote writes on NFS, SMB/CIFS and FUSE file systems, or inotify unavailable
/// or out of watches, see `/proc/sys/fs/inotify/max_user_watches`), the watched domain file is also
/// checked with `stat()` every ``pollingInterval``.
public enum DomainWatching {
    private static let settings = PrefsMutex(Settings())

    private struct Settings: Sendable {
        var pollingInterval: Duration = .seconds(1)
        var forcedFallback: Fallback = .none
    }

    /// How often a domain is checked with `stat()` where inotify cannot tell of every change; 1 second by
    /// default. Reach for it when a group container lives on a network file system and another machine's
    /// writes must be seen sooner (or polling must cost less). Applies to watches started afterwards; at
    /// least 1 millisecond.
    public static var pollingInterval: Duration {
        get { settings.withLock { $0.pollingInterval } }
        set { settings.withLock { $0.pollingInterval = max(newValue, .milliseconds(1)) } }
    }

    /// A way for tests to make the watcher behave as it does where inotify cannot serve.
    package enum Fallback: Sendable, Equatable {
        /// Use inotify where it works (the default).
        case none
        /// Behave as if inotify could not be initialized: poll only.
        case inotifyUnavailable
        /// Behave as if the inotify watch limit were reached: poll only.
        case watchLimitReached
        /// Behave as on a network file system: inotify for this machine's writes, and polling too.
        case eventsIncomplete
    }

    /// The fallback forced on watches started afterwards in this process (for tests and test workers).
    package static var forcedFallback: Fallback {
        get { settings.withLock { $0.forcedFallback } }
        set { settings.withLock { $0.forcedFallback = newValue } }
    }
}
