import Glibc
import Synchronization

// A test hook: compiled into debug builds only, so that no release build can fail a system call on purpose.
#if DEBUG
/// Makes chosen system calls fail on demand, so tests can produce ENOSPC, EACCES, EROFS, EIO or EINTR
/// at any step even when running as root, where permission bits alone produce none of them.
///
/// Every call that goes through ``SystemCalls`` is also recorded, so a test can see, for example, that
/// durable mode calls `fsync` on the file and on its directory.
package final class FaultInjection: Sendable {
    private struct Rule: Sendable {
        let call: SystemCall
        let pathContaining: String?
        let errno: PrefsErrno
        var skip: Int
        var remaining: Int
    }

    private struct State: Sendable {
        var rules: [Rule] = []
        var calls: [(SystemCall, String)] = []
        var tick: Int?
        var beforeEachCall: (@Sendable (SystemCall, String) -> Void)?
    }

    private let state = PrefsMutex(State())

    package init() {}

    /// Fails `call` with `errno` `times` times (default once), after letting `skip` matching calls
    /// through; only calls on a path containing `pathContaining`, when given.
    package func fail(_ call: SystemCall, with errno: PrefsErrno, times: Int = 1, skip: Int = 0, pathContaining: String? = nil) {
        state.withLock {
            $0.rules.append(Rule(call: call, pathContaining: pathContaining, errno: errno, skip: skip, remaining: times))
        }
    }

    /// When set, `stat` and `fstat` report timestamps rounded down to this many nanoseconds, the way
    /// a kernel with a coarse file-time clock (or a file system with coarse timestamps) reports them.
    package var timestampTick: Int? {
        get { state.withLock { $0.tick } }
        set { state.withLock { $0.tick = newValue } }
    }

    func adjust(_ info: inout Glibc.stat) {
        guard let tick = timestampTick, tick > 0 else { return }
        info.st_mtim.tv_nsec -= info.st_mtim.tv_nsec % tick
        info.st_ctim.tv_nsec -= info.st_ctim.tv_nsec % tick
    }

    /// Runs before each call is made (before any fault is looked up), outside the injector's lock, with the call
    /// and its path: a test's way to act at one step of a write, such as taking a lock that the write then meets.
    package var beforeEachCall: (@Sendable (SystemCall, String) -> Void)? {
        get { state.withLock { $0.beforeEachCall } }
        set { state.withLock { $0.beforeEachCall = newValue } }
    }

    /// Removes every pending fault.
    package func reset() { state.withLock { $0.rules.removeAll() } }

    /// The calls made so far, in order, with the path each concerned.
    package var recordedCalls: [(call: SystemCall, path: String)] { state.withLock { $0.calls.map { ($0.0, $0.1) } } }

    /// Forgets the recorded calls.
    package func clearRecordedCalls() { state.withLock { $0.calls.removeAll() } }

    func failure(for call: SystemCall, path: String) -> PrefsErrno? {
        state.withLock { $0.beforeEachCall }?(call, path)
        return state.withLock { state in
            state.calls.append((call, path))
            guard let index = state.rules.firstIndex(where: {
                $0.call == call && $0.remaining > 0 && ($0.pathContaining.map { path.contains($0) } ?? true)
            }) else { return nil }
            if state.rules[index].skip > 0 {
                state.rules[index].skip -= 1
                return nil
            }
            state.rules[index].remaining -= 1
            return state.rules[index].errno
        }
    }
}
#endif
