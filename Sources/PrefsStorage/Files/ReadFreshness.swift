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
    /// The path's generation now, pending events taken first (one `ioctl` at most), or `nil` while no watch's
    /// events would reach the path (no watch, a watch that must poll, a file system whose events are incomplete).
    ///
    /// Invariant F2: the generation moves, to a value never used before, with every event that may concern
    /// the path: the file's, its directory's, or, while the directory does not exist, its deepest existing
    /// ancestor's; so equal generations taken at two moments prove that no change to what lies at the path
    /// completed in between. `vouchesContents` says whether they also prove that the file's contents did not
    /// change (the path is proven through real directories and the file can be followed, Invariant F3);
    /// where it is `false`, the generation still proves that a missing file stayed missing.
    func currentGeneration() -> (value: UInt64, vouchesContents: Bool)?

    /// This process changed the file (a write or a removal through a file domain): its generation moves,
    /// whether or not an event of the change reaches a watch.
    func changedHere()
}

extension FreshnessTracker {
    /// The file's token now, or `nil` when nothing vouches for its contents (no watch, a file system whose
    /// events are incomplete, a path through a symbolic link): the read must then check the file itself.
    ///
    /// Equal tokens taken at two moments prove that no change to the file completed in between: every
    /// write that completed before this call is reflected (pending events are taken into account first).
    @inline(__always)
    func currentToken() -> FreshnessToken? {
        guard let now = currentGeneration(), now.vouchesContents else { return nil }
        return FreshnessToken(now.value)
    }
}

/// A moment in the life of a file as its tracker saw it (see ``FreshnessTracker/currentToken()``).
package struct FreshnessToken: Equatable, Sendable {
    /// Never reused by the tracker's source: a token stays distinct from every later one.
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }
}
