/// Where a file domain learns, without a system call of its own, that its file has not changed.
///
/// A read asks its tracker for a token before it reads; a later read that gets an equal token knows that
/// nothing changed the file in between, and returns what it cached without a `stat()`. The trackers come
/// from a source injected into ``FileDomainStorage`` (by default the process's inotify watcher, see
/// `WatchEngine`): the file domain knows nothing of how changes are heard.
package protocol ReadFreshness: Sendable {
    /// The tracker of the file `fileName` in `directory` (the directory without a trailing slash).
    ///
    /// Called once per domain object, so that a read costs no lookup by path.
    func tracker(directory: String, fileName: String) -> any FreshnessTracker
}

/// Tells whether one file may have changed: see ``ReadFreshness``.
package protocol FreshnessTracker: AnyObject, Sendable {
    /// The file's token now, or `nil` when nothing vouches for it (no watch, a file system whose events
    /// are incomplete, a path through a symbolic link): the read must then check the file itself.
    ///
    /// Equal tokens taken at two moments prove that no change to the file completed in between: every
    /// write that completed before this call is reflected (pending events are taken into account first).
    func currentToken() -> FreshnessToken?

    /// How many events that may concern the file its source has taken, pending ones first, whether or
    /// not it vouches for the file (a watch of the nearest existing ancestor of a missing directory counts
    /// too); `nil` when the source counts none. A count that did not move proves nothing reached the file's
    /// path meanwhile, where a watch of it exists.
    func changeCount() -> UInt64?
}

/// A moment in the life of a file as its tracker saw it (see ``FreshnessTracker/currentToken()``).
package struct FreshnessToken: Equatable, Sendable {
    /// Never reused by the tracker's source: a token stays distinct from every later one.
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }
}
