// The floor of `harness bench`: the bare system calls any correct implementation must make.

import Glibc
import PrefsTool

/// The bare system calls: what any correct implementation must at least do.
enum BenchFloor {
    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`, under an exclusive
    /// `flock` of `lock` when given.
    static func replace(_ path: String, with bytes: [UInt8], lock: String?) {
        var lockFD: Int32 = -1
        if let lock {
            lockFD = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            _ = flock(lockFD, LOCK_EX)
        }
        let temporary = path + ".floor.tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        rename(temporary, path)
        if lockFD >= 0 { close(lockFD) }
    }

    /// open + read + close of the whole file.
    static func readFile(_ path: String) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return total }
            total += count
        }
    }
}

/// A bare inotify descriptor watching a directory: the floor of a read that a watch validates is asking
/// it whether any event is pending, one `ioctl(FIONREAD)`.
final class BenchPendingEventsCheck {
    private let descriptor: Int32

    init(directory: String) {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        _ = inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE))
    }

    deinit { close(descriptor) }

    /// The bytes of events queued (zero while nothing changes).
    func pendingBytes() -> Int32 {
        var count: Int32 = 0
        _ = ioctl(descriptor, UInt(FIONREAD), &count)
        return count
    }
}
