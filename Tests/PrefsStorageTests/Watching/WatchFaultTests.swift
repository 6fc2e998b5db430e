import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Failed system calls of the watch engine and of the lock bookkeeping (issue 27, item 6): each goes through
/// ``SystemCalls``, so a test's engine can fail it, and each failure leaves reads fresh (validated with `stat()`,
/// watchers served by polling), never a cached value vouched for by evidence the engine could not gather.
///
/// Each test drives a watch engine of its own, whose system calls carry this test's faults; the domains read
/// through it make the real calls, so that only the engine's are failed.
@Suite("Failed system calls of the watch engine and of the lock bookkeeping")
struct WatchFaultTests {
    let base = TemporaryDirectory()
    let faults = FaultInjection()
    let engine: WatchEngine

    init() {
        engine = WatchEngine(system: SystemCalls(faults: faults))
    }

    /// The preferences directory.
    var directory: String { base.appending("prefs") }

    /// A file domain of `directory` read through this test's engine.
    private func domain(_ name: String = "d", in directory: String? = nil) throws -> FileDomainStorage {
        try FileDomainStorage(directory: directory ?? self.directory, name: name, durable: false, system: .live, freshness: engine)
    }

    /// A watch of `directory/d.plist` by this test's engine, polling every 20 ms where it polls.
    private func watch(_ directory: String? = nil, handler: @escaping @Sendable () -> Void = {}) -> FileWatch {
        FileWatch(directory: directory ?? self.directory, fileName: "d.plist", fallback: .none, pollingInterval: .milliseconds(20),
                  engine: engine, handler: handler)
    }

    /// Replaces the domain file as a program that does not use the library would: a new file renamed over it.
    private func renameOver(_ contents: [String: PropertyListValue], in directory: String? = nil) throws {
        let directory = directory ?? self.directory
        let bytes = try DomainLimits.encoded(contents, location: directory)
        let temporary = directory + "/.d.other"
        writeFile(temporary, bytes)
        #expect(rename(temporary, directory + "/d.plist") == 0)
    }

    /// Rewrites the file at `path` in place (truncated, then written), as a program writing through that name does.
    private func writeInPlace(_ path: String, _ contents: [String: PropertyListValue]) throws {
        let bytes = try DomainLimits.encoded(contents, location: path)
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        #expect(fd >= 0)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        close(fd)
    }

    /// The `step` entry a read of `domain` returns.
    private func step(_ domain: FileDomainStorage) throws -> String? {
        Self.text(try domain.snapshot().contents["step"])
    }

    private static func text(_ value: PropertyListValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    // MARK: The watch limit

    @Test("The watch limit reached mid-run: a domain whose directory is made again reads what its file holds at every step, and a watcher still hears a later write, by polling")
    func watchLimitReachedMidRun() throws {
        #expect(mkdir(directory, 0o700) == 0)
        let domain = try domain()
        let seen = WaitableValue<String?>(nil)
        let watch = watch { seen.update { $0 = Self.text(try? domain.snapshot().contents["step"]) } }
        defer { watch.cancel() }

        try renameOver(["step": .string("before the limit")])
        #expect(try step(domain) == "before the limit")
        #expect(try step(domain) == "before the limit")
        #expect(watch.mode == (events: true, polls: false), "the premise: the path is watched by events before the limit")
        let placed = faults.recordedCalls.filter { $0.call == .inotifyAddWatch }.count
        #expect(placed > 0, "the engine's inotify_add_watch did not go through its SystemCalls")

        // The user's watch limit is reached after those `placed` calls: every new watch in the directory fails
        // with ENOSPC from now on (the directories above it, watched already, would give their watch back).
        faults.fail(.inotifyAddWatch, with: .noSpace, times: .max, pathContaining: directory)
        for remake in 1...3 {
            let name = "directory made again (\(remake))"
            try FileManager.default.removeItem(atPath: directory)
            #expect(mkdir(directory, 0o700) == 0)
            try renameOver(["step": .string(name)])
            #expect(try step(domain) == name, "step '\(name)': stale read")
            for round in 1...3 {
                let renamed = "\(name), renamed over (\(round))"
                try renameOver(["step": .string(renamed)])
                #expect(try step(domain) == renamed, "step '\(renamed)': stale read")
                let rewritten = "\(name), rewritten in place (\(round))"
                try writeInPlace(directory + "/d.plist", ["step": .string(rewritten)])
                #expect(try step(domain) == rewritten, "step '\(rewritten)': stale read")
            }
            #expect(watch.mode == (events: false, polls: true), "step '\(name)': the path's new directory could not be watched, yet it does not poll")
        }
        #expect(faults.recordedCalls.contains { $0.call == .inotifyAddWatch && $0.path == directory },
                "the engine never tried to watch the directory made again")

        try renameOver(["step": .string("heard by polling")])
        #expect(seen.wait(timeout: 30) { $0 == "heard by polling" }, "step 'heard by polling': the watcher was never told of the write")
        #expect(try step(domain) == "heard by polling")

        // A write through the domain keeps what the other program wrote (it validates by the file it opens).
        try renameOver(["step": .string("theirs"), "theirs": .integer(1)])
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(1) }
        let stored = try FileDomainStorage.parse(fileBytes(directory + "/d.plist") ?? [], path: "d").contents
        #expect(stored["theirs"] == .integer(1) && stored["mine"] == .integer(1), "step 'a write after the limit': \(stored)")
    }

    // MARK: Path resolution's lstat

    @Test("A failed lstat of the domain file during path resolution leaves the path unproven: reads are validated with stat() and see a write through a hard link made after the read")
    func failedLstatOfTheFileLeavesThePathUnproven() throws {
        let other = base.appending("other")
        #expect(mkdir(directory, 0o700) == 0)
        #expect(mkdir(other, 0o700) == 0)
        try renameOver(["step": .string("before")])
        faults.fail(.lstat, with: .ioError, times: .max, pathContaining: "/d.plist")
        let domain = try domain()
        let watch = watch()
        defer { watch.cancel() }
        #expect(faults.recordedCalls.contains { $0.call == .lstat && $0.path == directory + "/d.plist" },
                "path resolution's lstat did not go through the engine's SystemCalls")
        #expect(watch.mode.polls, "a domain file lstat could not describe was trusted: the path does not poll")
        #expect(try step(domain) == "before")
        #expect(try step(domain) == "before")
        // A hard link in a directory nobody watches, and a write in place through it: only a watch of the file's
        // own inode hears them, and the failed lstat placed none.
        #expect(link(directory + "/d.plist", other + "/link.plist") == 0)
        try writeInPlace(other + "/link.plist", ["step": .string("through the link")])
        #expect(try step(domain) == "through the link", "stale read after a write through a hard link")
    }

    @Test("A failed lstat of a level that could not be watched as a directory leaves the path unproven: it polls, and its watcher hears a write behind the symbolic link")
    func failedLstatOfALevelLeavesThePathUnproven() throws {
        let target = base.appending("target"), linked = base.appending("linked")
        #expect(mkdir(target, 0o700) == 0)
        #expect(symlink(target, linked) == 0)
        try renameOver(["step": .string("before")], in: target)
        // The first lstat of resolution is the level's (the link, which inotify_add_watch refused as no directory).
        faults.fail(.lstat, with: .ioError, times: 1, pathContaining: linked)
        let domain = try domain(in: linked)
        let seen = WaitableValue<String?>(nil)
        let watch = watch(linked) { seen.update { $0 = Self.text(try? domain.snapshot().contents["step"]) } }
        defer { watch.cancel() }
        #expect(faults.recordedCalls.contains { $0.call == .lstat && $0.path == linked },
                "path resolution's lstat of a level did not go through the engine's SystemCalls")
        #expect(watch.mode.polls, "a level lstat could not describe was taken for a missing directory: the path does not poll")
        #expect(try step(domain) == "before")
        try renameOver(["step": .string("behind the link")], in: target)
        #expect(try step(domain) == "behind the link", "stale read")
        #expect(seen.wait(timeout: 30) { $0 == "behind the link" }, "the watcher was never told of a write behind the link")
    }

    // MARK: Reading events

    @Test("A rename over a watched domain file costs the watch thread no needless call: no read of its wake-up descriptor, no FIONREAD, no removal of the watch the kernel dropped")
    func renameOverCostsNoNeedlessCall() throws {
        #expect(mkdir(directory, 0o700) == 0)
        try renameOver(["step": .string("first")])
        let domain = try domain()
        let calls = CallCounter()
        let watch = watch { calls.fire() }
        defer { watch.cancel() }
        #expect(watch.mode == (events: true, polls: false))
        // One change heard first, so that the thread has handled its start (a wake-up through its descriptor).
        try engine.holdingLock { try renameOver(["step": .string("before")]) }
        #expect(calls.wait(forAtLeast: 1))
        faults.clearRecordedCalls()
        // The lock held across the rename: the thread's drain finds all its events, the dropped watch's among them.
        try engine.holdingLock { try renameOver(["step": .string("after")]) }
        #expect(calls.wait(forAtLeast: 2))
        let made = faults.recordedCalls
        #expect(made.contains { $0.call == .inotifyAddWatch && $0.path.hasSuffix("/d.plist") },
                "the new file's watch was not placed through the engine's SystemCalls: \(made)")
        #expect(!made.contains { $0.call == .read && $0.path == InotifyCalls.wakeName }, "the wake-up descriptor was read with nothing to clear")
        #expect(!made.contains { $0.call == .ioctl }, "the queue's length was asked for a drain that one read empties")
        #expect(!made.contains { $0.call == .inotifyRemoveWatch }, "the replaced file's watch, dropped by the kernel, was removed again")
        #expect(try step(domain) == "after")
    }

    @Test("A drain of more events than one read takes applies them all, asking the queue's length once")
    func drainLongerThanOneBuffer() throws {
        #expect(mkdir(directory, 0o700) == 0)
        try renameOver(["step": .string("before")])
        let domain = try domain()
        let calls = CallCounter()
        let watch = watch { calls.fire() }
        defer { watch.cancel() }
        #expect(try step(domain) == "before")
        #expect(try step(domain) == "before")
        faults.clearRecordedCalls()
        try engine.holdingLock {
            // 300 entries made with names of 240 bytes: 300 events of 272 bytes, more than the drain's 64 KiB
            // buffer; the rename's event comes last.
            for index in 0..<300 {
                let name = String(format: "%03d", index) + String(repeating: "x", count: 237)
                writeFile(directory + "/" + name, [])
            }
            try renameOver(["step": .string("after")])
        }
        #expect(calls.wait(forAtLeast: 1), "the rename, queued after a buffer's worth of other events, was never told")
        #expect(faults.recordedCalls.filter { $0.call == .ioctl }.count == 1)
        #expect(try step(domain) == "after")
    }

    @Test("A failed read of the inotify events counts as an overflow: the next read returns what the file holds")
    func failedReadOfEventsCountsAsAnOverflow() throws {
        #expect(mkdir(directory, 0o700) == 0)
        let domain = try domain()
        try renameOver(["step": .string("before")])
        let watch = watch()
        defer { watch.cancel() }
        #expect(try step(domain) == "before")
        #expect(try step(domain) == "before")
        try engine.holdingLock {
            // While the watch thread cannot drain: the rename's event is queued, and every read of events fails
            // from now on (whether the watch thread's or the read's own drain comes first).
            try renameOver(["step": .string("after")])
            faults.fail(.read, with: .ioError, times: .max, pathContaining: InotifyCalls.inotifyName)
        }
        #expect(try step(domain) == "after", "stale read after the events could not be read")
        #expect(faults.recordedCalls.contains { $0.call == .read && $0.path == InotifyCalls.inotifyName },
                "the read of events did not go through the engine's SystemCalls")
        faults.reset()
    }

    @Test("Without the mount table (its open failing), a bind mount over the domain's directory unmounted after a read is still seen by the next read",
          .enabled(if: HeldDirectoryTests.canBindMount, "needs to make bind mounts (root, outside a locked-down container)"))
    func failedMountTableOpenVouchesForNothing() throws {
        let mounted = base.appending("mounted")
        #expect(mkdir(directory, 0o700) == 0)
        #expect(mkdir(mounted, 0o700) == 0)
        try renameOver(["step": .string("under the mount")])
        try renameOver(["step": .string("in the mount")], in: mounted)
        #expect(mount(mounted, directory, nil, UInt(MS_BIND), nil) == 0)
        var isMounted = true
        defer { if isMounted { _ = umount2(directory, Int32(MNT_DETACH)) } }
        faults.fail(.open, with: .permissionDenied, times: .max, pathContaining: InotifyCalls.mountTablePath)
        let domain = try domain()
        let watch = watch()
        defer { watch.cancel() }
        #expect(faults.recordedCalls.contains { $0.call == .open && $0.path == InotifyCalls.mountTablePath },
                "the mount table was not opened through the engine's SystemCalls")
        // Enough reads that the domain keeps what it read, where its path is vouched for.
        for _ in 0..<4 { #expect(try step(domain) == "in the mount") }
        // An unmount sends no inotify event of its own: only the mount table tells it.
        isMounted = !HeldDirectoryTests.unmount(directory)
        #expect(!isMounted, "the unmount failed")
        #expect(try step(domain) == "under the mount", "stale read after the unmount, with the mount table unopened")
    }

    @Test("A directory that is both a domain's directory and an ancestor of another watched path keeps telling the mode changes of the directory below it, whichever role was placed last")
    func directoryWatchedInBothRolesKeepsModeChanges() throws {
        let below = directory + "/below"
        #expect(mkdir(directory, 0o700) == 0)
        #expect(mkdir(below, 0o700) == 0)
        // First the path through `directory` (an ancestor there), then `directory` as a domain's own directory: the
        // second placement must add to what the first asked of the same directory, not replace it.
        let calls = CallCounter()
        let deeper = FileWatch(directory: below, fileName: "d.plist", fallback: .none, pollingInterval: .milliseconds(20),
                               engine: engine) { calls.fire() }
        defer { deeper.cancel() }
        let beside = watch()
        defer { beside.cancel() }
        #expect(deeper.mode == (events: true, polls: false), "\(deeper.mode)")
        let before = calls.count
        #expect(chmod(below, 0o755) == 0)
        #expect(calls.wait(forAtLeast: before + 1, timeout: 10), "a mode change of \(below) was not told to the path through it")
    }

    @Test("Without an inotify instance (inotify_init1 failing), every watched path polls and reads stay fresh")
    func failedInotifyInitPolls() throws {
        #expect(mkdir(directory, 0o700) == 0)
        faults.fail(.inotifyInit, with: PrefsErrno(rawValue: EMFILE), times: .max)
        let domain = try domain()
        let seen = WaitableValue<String?>(nil)
        let watch = watch { seen.update { $0 = Self.text(try? domain.snapshot().contents["step"]) } }
        defer { watch.cancel() }
        #expect(faults.recordedCalls.contains { $0.call == .inotifyInit }, "inotify_init1 did not go through the engine's SystemCalls")
        #expect(watch.mode == (events: false, polls: true))
        for round in 1...3 {
            try renameOver(["step": .string("round \(round)")])
            #expect(try step(domain) == "round \(round)", "stale read in round \(round)")
        }
        #expect(seen.wait(timeout: 30) { $0 == "round 3" }, "the watcher was never told")
    }

    @Test("Interrupted system calls of the watch engine (EINTR) are retried: the path is still watched by events",
          arguments: [SystemCall.inotifyInit, .inotifyAddWatch, .statfs, .lstat])
    func interruptedEngineCallsAreRetried(call: SystemCall) throws {
        #expect(mkdir(directory, 0o700) == 0)
        try renameOver(["step": .string("before")])
        faults.fail(call, with: .interrupted, times: 3)
        let domain = try domain()
        let watch = watch()
        defer { watch.cancel() }
        #expect(faults.recordedCalls.filter { $0.call == call }.count > 3, "\(call) was not made through the engine's SystemCalls")
        #expect(watch.mode == (events: true, polls: false), "an interrupted \(call) made the path poll")
        #expect(try step(domain) == "before")
    }

    // MARK: The lock bookkeeping

    @Test("Which lock file a write holds is the fstat made through SystemCalls before the wait: its failure fails a nested write with that error at once, and leaves nothing noted")
    func lockIdentityFailureFailsTheWriteBeforeAnyWait() throws {
        let outer = try FileDomainStorage(directory: directory, name: "app", durable: false, system: .live)
        let inner = try FileDomainStorage(directory: directory, name: "app", durable: false, system: SystemCalls(faults: faults))
        try outer.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        var nested: [PrefsError] = []
        try outer.modify(repairing: .failIfUnreadable) { contents in
            contents["k"] = .integer(2)
            // This thread holds the lock: another object for the same file must never wait for it.
            faults.fail(.fstat, with: .ioError, pathContaining: inner.lockPath)
            for _ in 0..<2 {
                do {
                    try inner.modify(repairing: .failIfUnreadable) { $0["nested"] = .integer(1) }
                    Issue.record("a nested write of the file whose lock this thread holds succeeded")
                } catch let error as PrefsError {
                    nested.append(error)
                } catch {
                    Issue.record("not a PrefsError: \(error)")
                }
            }
        }
        #expect(nested.count == 2)
        // The first: the injected failure of the lock file's fstat, named as the lock step; the second, once it
        // succeeds: refused as nested (EDEADLK), as always.
        if case .writeFailed(let path, .lock(let lockPath), let errno)? = nested.first {
            #expect(path == inner.path && lockPath == inner.lockPath && errno == .ioError)
        } else {
            Issue.record("the failed fstat of the lock file was not reported: \(nested)")
        }
        if nested.count == 2, case .writeFailed(_, .lock, let errno) = nested[1] {
            #expect(errno == PrefsErrno(rawValue: EDEADLK))
        } else {
            Issue.record("the nested write was not refused: \(nested)")
        }
        #expect(faults.recordedCalls.filter { $0.call == .fstat && $0.path == inner.lockPath }.count == 2,
                "the lock file's identity was not taken through SystemCalls")
        // Released, the lock is noted by nobody: both objects write again.
        try inner.modify(repairing: .failIfUnreadable) { $0["inner"] = .integer(3) }
        try outer.modify(repairing: .failIfUnreadable) { $0["outer"] = .integer(4) }
        let stored = try FileDomainStorage(directory: directory, name: "app").snapshot().contents
        #expect(stored == ["k": .integer(2), "inner": .integer(3), "outer": .integer(4)])
    }
}
