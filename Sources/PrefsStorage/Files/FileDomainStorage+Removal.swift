import Glibc

extension FileDomainStorage {
    /// Removes the domain file, under the same exclusive lock as every write, so that a write by
    /// another thread or process is never interleaved with the removal: it happens wholly before or
    /// wholly after.
    ///
    /// Reach for it in a tool that deletes a whole domain (the harness's `defaults delete DOMAIN`), so
    /// that the domain no longer exists, rather than writing an empty dictionary, which leaves an empty
    /// file behind. The lock file stays, as it must: another process may be waiting on it. Removing a
    /// domain whose file does not exist succeeds and changes nothing. The next read finds no file and
    /// returns an empty snapshot. The removal is not `fsync`ed, even in durable mode.
    ///
    /// - Throws: ``PrefsError/writeFailed(path:step:errno:)`` when the lock cannot be taken or the
    ///   file cannot be removed (a directory in its place, for example); the file is then as it was.
    public func removeDomainFile() throws(PrefsError) {
        // Nothing to remove: take no lock, which would create the directory and the lock file.
        if case .failure(let error) = Result(catching: { () throws(PrefsErrno) in try system.lstat(path) }),
           error == .noSuchFileOrDirectory {
            return
        }
        let lock = try acquireLock()
        defer { releaseLock(lock) }
        // What was cached, and kept by suites, is looked at again by the next read.
        defer { forgetCache() }
        do {
            try system.unlink(path)
        } catch {
            if error == .noSuchFileOrDirectory { return }
            throw .writeFailed(path: path, step: .removeDomainFile(path), errno: error)
        }
    }
}
