import Glibc

/// The system calls the storage layer makes, named so that faults can be aimed at one of them: those of the
/// file-backed domain, and those of the watch engine (`Watching/InotifyCalls.swift`).
package enum SystemCall: String, Sendable, CaseIterable {
    case open, read, write, rename, link, fsync, flock, stat, lstat, fstat, unlink, close, mkdir, fchmod, fchown, realpath
    case inotifyInit = "inotify_init1", inotifyAddWatch = "inotify_add_watch", inotifyRemoveWatch = "inotify_rm_watch"
    /// `ioctl(FIONREAD)`: the bytes of events queued on the inotify descriptor.
    case ioctl
    case statfs, eventfd, poll

    /// The calls only a watch engine makes, which no file domain's read or write reaches.
    package static let watchEngineCalls: Set<SystemCall> = [.inotifyInit, .inotifyAddWatch, .inotifyRemoveWatch, .ioctl, .statfs, .eventfd, .poll]
}

/// A thin, typed layer over the system calls of the storage layer, in the manner of swift-system: each
/// wrapper retries `EINTR` and throws the failure as a ``PrefsErrno``; in debug builds it consults an
/// optional `FaultInjection` first.
///
/// Every system call of `PrefsStorage` that can fail goes through it: the file domain's reads and writes, the
/// ownership checks of administrators' files, the lock bookkeeping, and the watch engine's (its wrappers are
/// in `Watching/InotifyCalls.swift`). Two exceptions, in C, on purpose: the one `ppoll` of an unchanged read
/// (`cprefs_pending_changes`, with the mount table's look again in `cprefs_mount_change_noted`), which must be
/// one system call and a few instructions, check and note under one lock; and calls that cannot fail
/// (`getuid`, `clock_gettime`). A value is a plain struct, no existential: a call through it is a direct call.
struct SystemCalls: Sendable {
    #if DEBUG
    /// Injected failures for tests; `nil` in production. Compiled into debug builds only.
    let faults: FaultInjection?

    /// The real system calls, with nothing injected.
    static let live = SystemCalls(faults: nil)
    #else
    /// The real system calls.
    static let live = SystemCalls()
    #endif

    /// Runs `body` until it succeeds or fails with something other than `EINTR`.
    /// - Parameter path: What the call concerns, for injected faults (`pathContaining`) and the record of calls.
    func perform(_ call: SystemCall, _ path: String, _ body: () -> Int) throws(PrefsErrno) -> Int {
        while true {
            #if DEBUG
            if let faults, let injected = faults.failure(for: call, path: path) {
                if injected == .interrupted { continue }
                throw injected
            }
            #endif
            let result = body()
            if result != -1 { return result }
            let error = PrefsErrno.current
            if error != .interrupted { throw error }
        }
    }

    func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(PrefsErrno) -> Int32 {
        Int32(try perform(.open, path) { Int(Glibc.open(path, flags | O_CLOEXEC, mode)) })
    }

    /// Reads the whole of an open file; `sizeHint` is what `fstat` said, so one read usually suffices.
    /// - Throws: `EFBIG` when the file grows past `limit` bytes while it is read.
    func readAll(_ fd: Int32, path: String, sizeHint: Int, limit: Int) throws(PrefsErrno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(max(sizeHint, 0), limit) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                guard filled <= limit else { throw PrefsErrno(rawValue: EFBIG) }
                bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096)))
            }
            let count = try perform(.read, path) {
                bytes.withUnsafeMutableBytes { buffer in
                    Glibc.read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                }
            }
            if count == 0 { break }
            let requested = bytes.count - filled
            filled += count
            // The buffer has room for one byte more than `fstat` reported. A regular file that fills
            // exactly its reported size and leaves that byte unread is at its end: no second read is
            // needed to be told so (a system call saved on every load of a changed file).
            if filled == sizeHint && count < requested { break }
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Writes all of `bytes`, continuing after short writes.
    func writeAll(_ fd: Int32, path: String, _ bytes: [UInt8]) throws(PrefsErrno) {
        var written = 0
        while written < bytes.count {
            written += try perform(.write, path) {
                bytes.withUnsafeBytes { buffer in
                    Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                }
            }
        }
    }

    func rename(_ from: String, _ to: String) throws(PrefsErrno) {
        _ = try perform(.rename, to) { Int(Glibc.rename(from, to)) }
    }

    func link(_ existing: String, _ new: String) throws(PrefsErrno) {
        _ = try perform(.link, new) { Int(Glibc.link(existing, new)) }
    }

    func fsync(_ fd: Int32, path: String) throws(PrefsErrno) {
        _ = try perform(.fsync, path) { Int(Glibc.fsync(fd)) }
    }

    func flock(_ fd: Int32, path: String, _ operation: Int32) throws(PrefsErrno) {
        _ = try perform(.flock, path) { Int(c_flock(fd, operation)) }
    }

    /// `stat` of a path whose C string the caller keeps, so that the hot path of every read converts
    /// no `String`; `path` names it for injected faults.
    func stat(_ path: String, cString: ContiguousArray<CChar>) throws(PrefsErrno) -> Glibc.stat {
        var info = Glibc.stat()
        _ = try perform(.stat, path) { Int(cString.withUnsafeBufferPointer { c_stat($0.baseAddress!, &info) }) }
        #if DEBUG
        faults?.adjust(&info)
        #endif
        return info
    }

    func stat(_ path: String) throws(PrefsErrno) -> Glibc.stat {
        try stat(path, cString: path.utf8CString)
    }

    /// `stat` of the name itself: a symbolic link is described, not followed.
    func lstat(_ path: String) throws(PrefsErrno) -> Glibc.stat {
        var info = Glibc.stat()
        _ = try perform(.lstat, path) { Int(c_lstat(path, &info)) }
        return info
    }

    func fstat(_ fd: Int32, path: String) throws(PrefsErrno) -> Glibc.stat {
        var info = Glibc.stat()
        _ = try perform(.fstat, path) { Int(c_fstat(fd, &info)) }
        #if DEBUG
        faults?.adjust(&info)
        #endif
        return info
    }

    /// The absolute path `path` resolves to, every symbolic link followed.
    func realpath(_ path: String) throws(PrefsErrno) -> String {
        var resolved: String?
        _ = try perform(.realpath, path) {
            guard let pointer = Glibc.realpath(path, nil) else { return -1 }
            resolved = String(cString: pointer)
            free(pointer)
            return 0
        }
        return resolved!
    }

    /// Sets the permission bits of an open file.
    func fchmod(_ fd: Int32, path: String, _ mode: mode_t) throws(PrefsErrno) {
        _ = try perform(.fchmod, path) { Int(Glibc.fchmod(fd, mode)) }
    }

    /// Sets the permission bits of the file at `path` (following no symbolic link at its end is the caller's
    /// care): counted as `fchmod` by the fault injection, as the same step.
    func chmod(_ path: String, _ mode: mode_t) throws(PrefsErrno) {
        _ = try perform(.fchmod, path) { Int(Glibc.chmod(path, mode)) }
    }

    /// Sets the owner and group of an open file.
    func fchown(_ fd: Int32, path: String, _ owner: uid_t, _ group: gid_t) throws(PrefsErrno) {
        _ = try perform(.fchown, path) { Int(Glibc.fchown(fd, owner, group)) }
    }

    func unlink(_ path: String) throws(PrefsErrno) {
        _ = try perform(.unlink, path) { Int(Glibc.unlink(path)) }
    }

    func mkdir(_ path: String, _ mode: mode_t) throws(PrefsErrno) {
        _ = try perform(.mkdir, path) { Int(Glibc.mkdir(path, mode)) }
    }

    /// Closes a descriptor. Not retried on `EINTR`: on Linux the descriptor is gone either way, and a
    /// retry could close one that another thread has just been given.
    func close(_ fd: Int32, path: String) throws(PrefsErrno) {
        #if DEBUG
        if let faults, let injected = faults.failure(for: .close, path: path) {
            Glibc.close(fd)
            throw injected
        }
        #endif
        if Glibc.close(fd) == -1 {
            let error = PrefsErrno.current
            if error != .interrupted { throw error }
        }
    }
}

// `flock` and `stat` name both a struct and a function in Glibc; outside a type, the call resolves.
private func c_flock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }
private func c_stat(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32 { stat(path, info) }
private func c_lstat(_ path: String, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32 { lstat(path, info) }
private func c_fstat(_ fd: Int32, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32 { fstat(fd, info) }
