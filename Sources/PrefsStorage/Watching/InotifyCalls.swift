import CPrefsLinux
import Glibc

/// What the directory watcher asks inotify for, and the events it reads. The calls themselves are
/// ``SystemCalls``' (below), so that a test's engine can fail any of them.
///
/// `statfs` and `eventfd`, which the Glibc module does not import, come from the CPrefsLinux target.
enum InotifyCalls {
    /// What every watched directory is watched for: entries appearing, disappearing or being renamed (the
    /// domain file, or the next directory down a path that does not exist yet), and the directory itself going
    /// away.
    ///
    /// Not the writes, closes and attribute changes of its files: the domain file's own inode watch
    /// (``fileMask``) tells those, through any of its names, and is placed whenever the path's events vouch for
    /// the file's contents (a proven path; an unproven one polls). A file made or renamed into place is an entry
    /// event, after which its inode watch is placed and only then its generation moved, so what was written to
    /// it before the placement is no older than that generation. Left out, every write of the directory's
    /// temporary files (`.<name>.plist.tmp`, written then closed before their rename) stops waking the watch
    /// thread of every process watching the domain for events that concern no watched file.
    static let directoryMask: UInt32 = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

    /// What every directory above a trusted watched directory is watched for: being moved or removed, which
    /// makes the path lead elsewhere, and its entries made, removed or renamed, for the next level of the path.
    /// Added to whatever the directory is watched for already, and only on a real directory, never through a
    /// symbolic link in the last component.
    ///
    /// The entries as well, because a directory removed while something holds it (a descriptor, a process's
    /// working directory, a path walk in progress) sends no `IN_DELETE_SELF` until the last reference goes:
    /// its parent's `IN_DELETE` is then the only event that tells of it, and `IN_CREATE` of the one made again.
    ///
    /// And their mode and owner changes (`IN_ATTRIB`): a directory's own change is told to its parent's watch, by
    /// its name, so that a `chmod` or `chown` of any directory on the path (the domain's own included) moves the
    /// path's generation; an administrator's managed file is honoured only while every directory it is checked
    /// through is its owner's alone. Other entries' attribute changes are dropped by name, costing a wake-up.
    static let ancestorMask: UInt32 = UInt32(IN_MOVE_SELF | IN_DELETE_SELF | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_ATTRIB | IN_ONLYDIR | IN_DONT_FOLLOW) | UInt32(IN_MASK_ADD)

    /// What a domain file's own inode is watched for: a link made or removed (`IN_ATTRIB`, as the link
    /// count changes), and a write in place through any of its names. Never opens or reads, which
    /// every read makes: a read must queue no event.
    static let fileMask: UInt32 = UInt32(IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW)

    /// One decoded inotify event.
    struct Event {
        var wd: Int32
        var mask: UInt32
        var name: String
    }

    /// What faults and the record of calls name the engine's descriptors by (they have no path).
    static let inotifyName = "<inotify>"
    static let wakeName = "<eventfd>"
    static let mountTablePath = "/proc/self/mountinfo"
}

/// The watch engine's system calls, each through ``perform(_:_:_:)`` like the file domain's: `EINTR` retried,
/// a failure thrown as a ``PrefsErrno``, and in debug builds a fault injected where a test asks. What each does
/// when its call fails is said where it matters: watching degrades to polling, never to trusting less evidence.
extension SystemCalls {
    /// A new inotify instance, non-blocking and closed on exec.
    func inotifyInitialize() throws(PrefsErrno) -> Int32 {
        Int32(try perform(.inotifyInit, InotifyCalls.inotifyName) { Int(inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))) })
    }

    /// Watches the directory at `path` for ``InotifyCalls/directoryMask``; the same directory watched twice
    /// gives the same descriptor.
    /// - Parameter following: Whether a symbolic link as the last component is followed; without, it fails
    ///   with `ENOTDIR` (a proven path has none).
    /// - Throws: `ENOENT`/`ENOTDIR` when there is no such directory, `ENOSPC` when the user's watch limit
    ///   (`/proc/sys/fs/inotify/max_user_watches`) is reached.
    ///
    /// Added to what the directory is watched for already (`IN_MASK_ADD`): a directory that is also an ancestor of
    /// another watched path keeps the ancestors' mode and owner changes, whichever role was placed last.
    func addWatch(_ fd: Int32, _ path: String, following: Bool) throws(PrefsErrno) -> Int32 {
        let added = InotifyCalls.directoryMask | UInt32(IN_MASK_ADD)
        let mask = following ? added : added | UInt32(IN_DONT_FOLLOW)
        return try addWatch(fd, path, mask: mask)
    }

    /// Watches the directory at `path` for ``InotifyCalls/ancestorMask``; the same directory gives the same
    /// descriptor as ``addWatch(_:_:following:)`` does. Throws `ENOTDIR` when the last component is a symbolic link.
    func addAncestorWatch(_ fd: Int32, _ path: String) throws(PrefsErrno) -> Int32 {
        try addWatch(fd, path, mask: InotifyCalls.ancestorMask)
    }

    /// Watches the domain file's own inode at `path` (no symbolic link followed) for ``InotifyCalls/fileMask``:
    /// the only way to hear a write made through another hard link, in another directory.
    func addFileWatch(_ fd: Int32, _ path: String) throws(PrefsErrno) -> Int32 {
        try addWatch(fd, path, mask: InotifyCalls.fileMask)
    }

    private func addWatch(_ fd: Int32, _ path: String, mask: UInt32) throws(PrefsErrno) -> Int32 {
        Int32(try perform(.inotifyAddWatch, path) { Int(inotify_add_watch(fd, path, mask)) })
    }

    /// Stops a watch; the kernel then queues `IN_IGNORED` for it. Failure means it is gone already, so it
    /// is not reported. `path` is what the watch was placed at, for injected faults.
    func removeWatch(_ fd: Int32, _ wd: Int32, path: String) {
        _ = try? perform(.inotifyRemoveWatch, path) { Int(inotify_rm_watch(fd, wd)) }
    }

    /// Reads the events queued on the non-blocking descriptor `fd` when it is called, without waiting.
    ///
    /// Bounded by what was queued then (give or take one buffer): events that keep arriving meanwhile (a
    /// process writing in a watched directory without pause) are left for the next drain, so that a drain,
    /// and the reads waiting for it, always end.
    ///
    /// When the `ioctl` that says how much is queued, or a read, fails (with anything but "nothing more"),
    /// events may be lost or left behind unseen: the batch then ends with an `IN_Q_OVERFLOW`, as when the
    /// kernel's queue overflows, so that every watched path is resolved again and every generation moves.
    func readEvents(_ fd: Int32) -> [InotifyCalls.Event] {
        var events: [InotifyCalls.Event] = []
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        let header = MemoryLayout<inotify_event>.size
        var lost = false
        // What was queued when the drain began bounds it. Most drains find less than a buffer: the first read then
        // takes it all (it returns whole events while the next would still fit), and nothing more is asked.
        // Only after a read that left no room for the longest event is the queue's length asked, once.
        var queued: Int?
        let longestEvent = header + Int(NAME_MAX) + 1
        var consumed = 0
        reading: repeat {
            if consumed > 0 && queued == nil {
                do { queued = try pendingEventBytes(fd) + consumed } catch {
                    lost = true
                    break reading
                }
            }
            let count: Int
            do {
                count = try perform(.read, InotifyCalls.inotifyName) { Glibc.read(fd, buffer, capacity) }
            } catch {
                if error != PrefsErrno(rawValue: EAGAIN) { lost = true }
                break reading
            }
            if count == 0 { break }
            consumed += count
            let emptied = queued == nil && count <= capacity - longestEvent
            var offset = 0
            while offset + header <= count {
                let event = (buffer + offset).loadUnaligned(as: inotify_event.self)
                var name = ""
                if event.len > 0 {
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + header, count: Int(event.len))
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                events.append(InotifyCalls.Event(wd: event.wd, mask: event.mask, name: name))
                offset += header + Int(event.len)
            }
            if emptied { break }
        } while consumed < queued ?? .max
        if lost { events.append(InotifyCalls.Event(wd: -1, mask: UInt32(IN_Q_OVERFLOW), name: "")) }
        return events
    }

    /// How many bytes of events are queued on `fd` (`ioctl(FIONREAD)`): a cheap "anything pending?".
    func pendingEventBytes(_ fd: Int32) throws(PrefsErrno) -> Int {
        try perform(.ioctl, InotifyCalls.inotifyName) { Int(cprefs_pending_bytes(fd)) }
    }

    // MARK: Wake-ups

    /// A non-blocking, close-on-exec `eventfd` used to wake the watcher thread.
    func makeWakeDescriptor() throws(PrefsErrno) -> Int32 {
        Int32(try perform(.eventfd, InotifyCalls.wakeName) { Int(cprefs_wake_descriptor()) })
    }

    /// Makes `fd` (an eventfd) readable. A failure (its counter full, `EAGAIN`) leaves it readable already.
    func wake(_ fd: Int32) {
        var one: UInt64 = 1
        _ = try? perform(.write, InotifyCalls.wakeName) { Glibc.write(fd, &one, 8) }
    }

    /// Clears the wake-ups counted on `fd`. A failure (`EAGAIN`: none) leaves nothing to clear.
    func drainWakeUps(_ fd: Int32) {
        var count: UInt64 = 0
        _ = try? perform(.read, InotifyCalls.wakeName) { Glibc.read(fd, &count, 8) }
    }

    /// Waits until one of `descriptors` is readable, the mount table `mounts` (a descriptor of
    /// `/proc/self/mountinfo`, or -1) changed, or `timeout` milliseconds pass (-1: no limit).
    /// - Returns: Whether the mount table may have changed, and whether the wake-up descriptor `wake` (one of
    ///   `descriptors`, or -1) is readable: both also when the wait failed, so that the engine looks at the table
    ///   again rather than miss a change, and clears a wake-up it cannot tell from none.
    func waitForInput(_ descriptors: [Int32], mounts: Int32, timeout: Int32, wake: Int32) -> (mountsChanged: Bool, woken: Bool) {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // The mount table is always readable: only its change (POLLPRI, with POLLERR) is waited for.
        if mounts >= 0 { entries.append(pollfd(fd: mounts, events: Int16(POLLPRI), revents: 0)) }
        let count: Int
        do {
            count = try perform(.poll, InotifyCalls.inotifyName) {
                Int(entries.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeout) })
            }
        } catch {
            return (mounts >= 0, wake >= 0)
        }
        guard count > 0 else { return (false, false) }
        let woken = wake >= 0 && entries.contains { $0.fd == wake && $0.revents != 0 }
        return (mounts >= 0 && entries[entries.count - 1].revents & Int16(POLLPRI | POLLERR) != 0, woken)
    }

    // MARK: The mount table

    /// A descriptor of the process's mount table, `/proc/self/mountinfo`, which signals each change to it
    /// (a mount or an unmount anywhere in the process's mount namespace) to `poll()` as `POLLPRI`, once per
    /// descriptor: each descriptor remembers the last change it reported. -1 where there is no `/proc`, or
    /// the open fails.
    ///
    /// The reads' check of it (`cprefs_pending_changes`, one `ppoll` with the inotify descriptor) stays in C, on
    /// purpose: it is an unchanged read's one system call, made with a few instructions and no call through
    /// Swift, its look and its note of a change one step under one lock (see `WatchEngine.mountCheck`).
    func openMountTable() -> Int32 {
        (try? open(InotifyCalls.mountTablePath, O_RDONLY)) ?? -1
    }

    // MARK: File systems

    /// The `f_type` magic number of the file system holding `path`.
    func fileSystemType(_ path: String) throws(PrefsErrno) -> UInt32 {
        var type: UInt32 = 0
        _ = try perform(.statfs, path) { Int(cprefs_file_system_type(path, &type)) }
        return type
    }
}
