import Glibc
import Synchronization

/// The domain lock files this process holds, by file identity, each with the thread holding it.
///
/// A domain's lock is an `flock` on a descriptor of its lock file, and two descriptors exclude each other
/// even in one process. So a thread that holds a domain's lock (inside that domain's `modify` transform)
/// and asks for it again through another object for the same file (a durable and an ordinary one, say)
/// would wait for itself for good. It is refused at once instead.
enum HeldDomainLocks {
    private struct FileIdentity: Hashable {
        let device: UInt
        let inode: UInt
    }

    private static let holders = PrefsMutex<[FileIdentity: UInt]>([:])

    private static var currentThread: UInt { UInt(pthread_self()) }

    private static func identity(of fd: Int32) -> FileIdentity? {
        var info = stat()
        guard Glibc.fstat(fd, &info) == 0 else { return nil }
        return FileIdentity(device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    /// Whether the calling thread already holds the lock file open as `fd`.
    static func isHeldByCurrentThread(_ fd: Int32) -> Bool {
        guard let identity = identity(of: fd) else { return false }
        let me = currentThread
        return holders.withLock { $0[identity] == me }
    }

    /// Records that the calling thread now holds the lock file open as `fd`.
    static func noteHeld(_ fd: Int32) {
        guard let identity = identity(of: fd) else { return }
        let me = currentThread
        holders.withLock { $0[identity] = me }
    }

    /// Records that the lock file open as `fd` is about to be released.
    static func noteReleased(_ fd: Int32) {
        guard let identity = identity(of: fd) else { return }
        _ = holders.withLock { $0.removeValue(forKey: identity) }
    }
}
