import Glibc

/// The domain lock files this process holds, by file identity, each with the thread holding it.
///
/// A domain's lock is an `flock` on a descriptor of its lock file, and two descriptors exclude each other
/// even in one process. So a thread that holds a domain's lock (inside that domain's `modify` transform)
/// and asks for it again through another object for the same file (a durable and an ordinary one, say)
/// would wait for itself for good. It is refused at once instead.
///
/// It makes no system call of its own: the identity of a lock file is the `fstat` the domain makes through its
/// ``SystemCalls`` before it waits for the lock (so that a fault injected there fails the write with that
/// error, before any wait), and a release finds the identity by the descriptor it noted, so it cannot fail.
enum HeldDomainLocks {
    /// A lock file, as its open descriptor's `fstat` tells.
    struct Identity: Hashable {
        let device: UInt
        let inode: UInt

        init(_ info: Glibc.stat) {
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
        }
    }

    private struct Held {
        /// The holding thread of each lock file held.
        var holders: [Identity: UInt] = [:]
        /// The lock file each descriptor holding a lock is open on, for its release.
        var descriptors: [Int32: Identity] = [:]
    }

    private static let held = PrefsMutex(Held())

    private static var currentThread: UInt { UInt(pthread_self()) }

    /// Whether the calling thread already holds the lock file `identity`.
    static func isHeldByCurrentThread(_ identity: Identity) -> Bool {
        let me = currentThread
        return held.withLock { $0.holders[identity] == me }
    }

    /// Records that the calling thread now holds the lock file `identity`, open as `fd`.
    static func noteHeld(_ identity: Identity, fd: Int32) {
        let me = currentThread
        held.withLock {
            $0.holders[identity] = me
            $0.descriptors[fd] = identity
        }
    }

    /// Records that the lock held through `fd` is about to be released (before `fd` is closed, so that no
    /// other lock can have been given the same descriptor number meanwhile).
    static func noteReleased(_ fd: Int32) {
        held.withLock {
            guard let identity = $0.descriptors.removeValue(forKey: fd) else { return }
            $0.holders[identity] = nil
        }
    }
}
