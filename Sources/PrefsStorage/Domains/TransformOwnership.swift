import Glibc
import Synchronization

/// Which thread is running a domain's `modify` transform, and the snapshot that transform started from.
///
/// A transform runs under the domain's locks. Code it calls may use the same domain again through another
/// instance or a suite it captured: a read from that thread then returns the snapshot the transform started
/// from (what the domain held before the change being made), instead of waiting for a lock its own thread
/// holds; a write from that thread fails at once, since it would wait for itself and the transform's own
/// write would replace it anyway.
package final class TransformOwnership: Sendable {
    /// The thread running the transform (0: none). Only that thread stores its identity, and it stores 0
    /// before the transform's locks are released.
    private let thread = Atomic<UInt>(0)
    /// The snapshot the transform started from; touched only by the thread in `thread`, while it runs it.
    nonisolated(unsafe) private var startedFrom: DomainSnapshot?

    package init() {}

    /// Runs `transform` as the domain's transform on this thread, started from `snapshot`.
    package func running<Result>(from snapshot: DomainSnapshot, _ transform: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
        startedFrom = snapshot
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        defer {
            thread.store(0, ordering: .relaxed)
            startedFrom = nil
        }
        return try transform()
    }

    /// Whether the calling thread is running the domain's transform.
    package var isOwnThread: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// The snapshot the transform started from, when the calling thread is running it.
    package var snapshotForOwnThread: DomainSnapshot? { isOwnThread ? startedFrom : nil }

    /// The error of a write of the domain at `path` from inside its own transform.
    package static func nestedWrite(path: String, lockPath: String) -> PrefsError {
        .writeFailed(path: path, step: .lock(lockPath), errno: PrefsErrno(rawValue: EDEADLK))
    }
}
