import CPrefsLinux
import Glibc

/// Thin, typed wrappers over the system calls the directory watcher makes, in the manner of
/// ``SystemCalls``: each retries `EINTR` and throws a failure as a ``PrefsErrno``.
///
/// `statfs` and `eventfd`, which the Glibc module does not import, come from the CPrefsLinux target.
enum InotifyCalls {
    /// What every watched directory is watched for: entries appearing, disappearing or being rewritten
    /// in place (the domain file, or the next directory down a path that does not exist yet), and the
    /// directory itself going away.
    /// `IN_MODIFY` too, so that a read validated by events also sees a file rewritten in place before it is closed.
    static let directoryMask: UInt32 = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE
        | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

    /// A new inotify instance, non-blocking and closed on exec.
    static func initialize() throws(PrefsErrno) -> Int32 {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd == -1 { throw PrefsErrno.current }
        return fd
    }

    /// Watches the directory at `path`; the same directory watched twice gives the same descriptor.
    /// - Parameter following: Whether a symbolic link as the last component is followed; without, it fails
    ///   with `ENOTDIR` (a proven path has none).
    /// - Throws: `ENOENT`/`ENOTDIR` when there is no such directory, `ENOSPC` when the user's watch limit
    ///   (`/proc/sys/fs/inotify/max_user_watches`) is reached.
    static func addWatch(_ fd: Int32, _ path: String, following: Bool) throws(PrefsErrno) -> Int32 {
        let mask = following ? directoryMask : directoryMask | UInt32(IN_DONT_FOLLOW)
        return try retryingInterrupted { inotify_add_watch(fd, path, mask) }
    }

    /// What every directory above a trusted watched directory is watched for: being moved or removed, which
    /// makes the path lead elsewhere, and its entries made, removed or renamed, for the next level of the path.
    /// Added to whatever the directory is watched for already, and only on a real directory, never through a
    /// symbolic link in the last component.
    ///
    /// The entries as well, because a directory removed while something holds it (a descriptor, a process's
    /// working directory, a path walk in progress) sends no `IN_DELETE_SELF` until the last reference goes:
    /// its parent's `IN_DELETE` is then the only event that tells of it, and `IN_CREATE` of the one made again.
    static let ancestorMask: UInt32 = UInt32(IN_MOVE_SELF | IN_DELETE_SELF | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_ONLYDIR | IN_DONT_FOLLOW) | UInt32(IN_MASK_ADD)

    /// Watches the directory at `path` for ``ancestorMask``; the same directory gives the same descriptor as
    /// ``addWatch(_:_:following:)`` does. Throws `ENOTDIR` when the last component is a symbolic link.
    static func addAncestorWatch(_ fd: Int32, _ path: String) throws(PrefsErrno) -> Int32 {
        try retryingInterrupted { inotify_add_watch(fd, path, ancestorMask) }
    }

    /// Runs `call` until it returns something other than -1 or fails with something other than `EINTR`.
    private static func retryingInterrupted(_ call: () -> Int32) throws(PrefsErrno) -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            let error = PrefsErrno.current
            if error != .interrupted { throw error }
        }
    }

    /// Stops a watch; the kernel then queues `IN_IGNORED` for it. Failure means it is gone already.
    static func removeWatch(_ fd: Int32, _ wd: Int32) {
        _ = inotify_rm_watch(fd, wd)
    }

    /// One decoded inotify event.
    struct Event {
        var wd: Int32
        var mask: UInt32
        var name: String
    }

    /// Reads the events queued on the non-blocking descriptor `fd` when it is called, without waiting.
    ///
    /// Bounded by what was queued then (give or take one buffer): events that keep arriving meanwhile (a
    /// process writing in a watched directory without pause) are left for the next drain, so that a drain,
    /// and the reads waiting for it, always end.
    static func readEvents(_ fd: Int32) -> [Event] {
        var events: [Event] = []
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        let header = MemoryLayout<inotify_event>.size
        let queued = pendingBytes(fd)
        var consumed = 0
        repeat {
            let count = Glibc.read(fd, buffer, capacity)
            if count == -1 && errno == EINTR { continue }
            if count <= 0 { break }
            consumed += count
            var offset = 0
            while offset + header <= count {
                let event = (buffer + offset).loadUnaligned(as: inotify_event.self)
                var name = ""
                if event.len > 0 {
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + header, count: Int(event.len))
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                events.append(Event(wd: event.wd, mask: event.mask, name: name))
                offset += header + Int(event.len)
            }
        } while consumed < queued
        return events
    }

    /// How many bytes of events are queued on `fd` (`ioctl(FIONREAD)`): a cheap "anything pending?".
    static func pendingBytes(_ fd: Int32) -> Int {
        Int(cprefs_pending_bytes(fd))
    }

    // MARK: Wake-ups

    /// A non-blocking, close-on-exec `eventfd` used to wake the watcher thread.
    static func makeWakeDescriptor() throws(PrefsErrno) -> Int32 {
        let fd = cprefs_wake_descriptor()
        if fd == -1 { throw PrefsErrno.current }
        return fd
    }

    /// Makes `fd` (an eventfd) readable.
    static func wake(_ fd: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    /// Clears the wake-ups counted on `fd`.
    static func drainWakeUps(_ fd: Int32) {
        var count: UInt64 = 0
        _ = Glibc.read(fd, &count, 8)
    }

    /// Waits until one of `descriptors` is readable, the mount table `mounts` (a descriptor of
    /// `/proc/self/mountinfo`, or -1) changed, or `timeout` milliseconds pass (-1: no limit).
    /// - Returns: Whether the mount table changed.
    static func waitForInput(_ descriptors: [Int32], mounts: Int32, timeout: Int32) -> Bool {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // The mount table is always readable: only its change (POLLPRI, with POLLERR) is waited for.
        if mounts >= 0 { entries.append(pollfd(fd: mounts, events: Int16(POLLPRI), revents: 0)) }
        let count = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
        return count > 0 && mounts >= 0 && entries[entries.count - 1].revents & Int16(POLLPRI | POLLERR) != 0
    }

    // MARK: The mount table

    /// A descriptor of the process's mount table, `/proc/self/mountinfo`, which signals each change to it
    /// (a mount or an unmount anywhere in the process's mount namespace) to `poll()` as `POLLPRI`, once per
    /// descriptor: each descriptor remembers the last change it reported. -1 where there is no `/proc`.
    static func openMountTable() -> Int32 {
        Glibc.open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
    }

    // MARK: File systems

    /// The `f_type` magic number of the file system holding `path`.
    static func fileSystemType(_ path: String) throws(PrefsErrno) -> UInt32 {
        var type: UInt32 = 0
        _ = try retryingInterrupted { cprefs_file_system_type(path, &type) }
        return type
    }

    /// Watches the domain file's own inode at `path` (no symbolic link followed) for ``fileMask``:
    /// the only way to hear a write made through another hard link, in another directory.
    static func addFileWatch(_ fd: Int32, _ path: String) throws(PrefsErrno) -> Int32 {
        try retryingInterrupted { inotify_add_watch(fd, path, fileMask) }
    }

    /// What a domain file's own inode is watched for: a link made or removed (`IN_ATTRIB`, as the link
    /// count changes), and a write in place through any of its names. Never opens or reads, which
    /// every read makes: a read must queue no event.
    static let fileMask: UInt32 = UInt32(IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW)
}
