import CPrefsLinux
import Glibc
import Synchronization

/// The process's one inotify instance, shared by every watch, and the one thread that reads it; the
/// default ``ReadFreshness`` of file domains.
///
/// Its parts: ``WatchRunner`` (descriptors and thread), ``SubscriptionTable`` (who watches what),
/// ``WatchedPaths`` (how a path is resolved to watches), ``PollSchedule`` (when the thread polls), and
/// ``FreshnessJournal`` (the generation of each path). All their state is one value behind one mutex.
///
/// - Watches are reference-counted; the last watch gone removes the inotify watch, and the last
///   subscription of the process closes the inotify and wake-up descriptors and ends the thread.
/// - Where events are incomplete (see ``FileSystemKind``), a path cannot be proven, or inotify cannot
///   serve, the thread also polls the watched files with `stat()`.
/// - Handlers run on the watch thread, one at a time, outside the mutex; a handler is told only that its
///   file may have changed (coalesced: one call for any number of events drained together), and must
///   read the file to learn what changed.
/// - One ``WatchedFile`` per watched path, shared by every subscription to it: one watch chain, one
///   generation (its tracker's stamp), resolved and told once per event however many subscribe; adding or
///   removing a subscription, and telling whether the path is vouched for, cost O(1) in their number.
/// - Every event drained that may concern a watched file changes its tracker's stamp (an overflow
///   changes them all), under the same mutex, so that a read can ask "has anything changed this file
///   since I cached it?" without a `stat()`.
/// - Changes no watched directory tells of are watched too (SPEC §10): the entries of every parent on a
///   watched path (a directory removed while held sends nothing itself), and the process's mount table (an
///   unmounted bind mount sends nothing at all), whose change is taken as "every path may lead elsewhere".
package final class WatchEngine: ReadFreshness {
    /// The process's engine, making the real system calls.
    package static let shared = WatchEngine()

    /// The system calls every inotify call, path resolution's `lstat` and polling's `stat` go through: a
    /// test's engine may inject faults in them (the watch limit reached, a failed `lstat`). Only the reads'
    /// `ppoll` (`cprefs_pending_changes`) is made directly, in C: see ``SystemCalls/openMountTable()``.
    let system: SystemCalls

    /// An engine of its own, for tests; everyone else shares ``shared``.
    package convenience init() {
        self.init(system: .live)
    }

    /// An engine of its own whose system calls are `system`'s, for tests that inject faults in them.
    init(system: SystemCalls) {
        self.system = system
        state = PrefsMutex(State(paths: WatchedPaths(system: system), journal: FreshnessJournal(clock: clock)))
        mountCheck.initialize(to: cprefs_mount_check(lock: 0, changed: 0, descriptor: -1))
    }

    deinit {
        mountCheck.deinitialize(count: 1)
        mountCheck.deallocate()
    }

    struct State {
        var runner: WatchRunner?
        var subscriptions = SubscriptionTable()
        var paths: WatchedPaths
        var polling = PollSchedule()
        var journal: FreshnessJournal
        /// Runners stopped from their own thread (by a handler), which close their descriptors as they end.
        var closingOnThread: [UInt64: WatchRunner] = [:]
        #if DEBUG
        var failsThreadCreation = false
        var everyPathWoken = 0
        #endif
    }

    private let state: PrefsMutex<State>
    /// Where the generations of the engine's paths come from, and its count of changes (see ``changeCount``).
    private let clock = GenerationClock()

    /// The engine's count of changes, moved after any path's generation moves, in the one place generations are
    /// given (``GenerationClock``, under the engine's mutex for its events, without it for a file domain's own
    /// change). Equal counts taken at two moments prove that no path of the engine changed generation in
    /// between: what a suite compares first, before asking each domain (the dconf engine's counter). Read after
    /// ``takePendingEvents()``.
    package var changeCount: UInt64 { clock.last.load(ordering: .acquiring) }
    /// The running inotify descriptor, or -1: read without the mutex by ``takePendingEvents()``.
    private let inotifyDescriptor = Atomic<Int32>(-1)
    /// Odd while events are being drained and applied (see ``takePendingEvents()``).
    private let drainSequence = Atomic<UInt64>(0)

    /// The reads' check of the mount table (see `cprefs_mount_check`): its descriptor (the runner's
    /// `mountsForReads`, or -1), and whether a change it reported is not yet applied, behind a lock of its own.
    ///
    /// A descriptor of `/proc/self/mountinfo` reports each change once, to whichever `poll()` comes first;
    /// so the check and the note of what it found are one step under that lock, and a read on another thread
    /// that comes second finds the note instead (cleared only under the engine's mutex, once applied). In C,
    /// so that the check is one `ppoll` system call and a few instructions; at one address for the engine's life.
    nonisolated(unsafe) private let mountCheck = UnsafeMutablePointer<cprefs_mount_check>.allocate(capacity: 1)

    #if DEBUG
    /// For tests: how many times the engine woke every watcher (a change of the mount table, an overflow of the
    /// event queue), counted before any watcher is called, so that a test can tell a wake-up it caused from those.
    package var everyPathWoken: Int { state.withLock { $0.everyPathWoken } }

    /// How many subscriptions the engine holds (for tests).
    package var subscriptionCount: Int { state.withLock { $0.subscriptions.entries.count } }

    /// For tests, on an engine of their own: makes creating the watch thread fail, as `pthread_create` can.
    package var threadCreationFails: Bool {
        get { state.withLock { $0.failsThreadCreation } }
        set { state.withLock { $0.failsThreadCreation = newValue } }
    }
    #endif

    // MARK: Reads

    package func tracker(directory: String, fileName: String) -> any FreshnessTracker {
        let path = directory == "/" ? "/" + fileName : directory + "/" + fileName
        return state.withLock { $0.journal.tracker(forPath: path, engine: self) }
    }

    /// Makes sure that every event queued before this call is reflected in the trackers' stamps: one
    /// `ioctl(FIONREAD)` when nothing is pending and no drain is under way.
    ///
    /// A `rename()` or a write queues its event before it returns to the writer, so a read that begins
    /// after a write completed finds the event queued, or already applied, or being applied by a drain
    /// that began before the `ioctl` (the sequence is odd, or has moved on): then it waits for the mutex,
    /// which that drain holds until it applied what it read.
    func takePendingEvents() {
        let identity = ObjectIdentifier(self)
        // Taken already since this read of a suite began: nothing completed before the read is pending.
        if ReadScope.hasTakenEvents(of: identity) { return }
        defer { ReadScope.tookEvents(of: identity) }
        takePendingEventsNow()
    }

    /// ``takePendingEvents()`` outside any read scope: for a read that makes this one check and no other
    /// (a kept read's), so that noting it in the scope would serve nothing.
    ///
    /// The one system call is a `poll()` of the inotify descriptor and of the mount table together, so that
    /// an unmount made before the read began is seen by it, like any event.
    ///
    /// It runs no handler and no domain's code on the calling thread (the watch thread delivers what a drain
    /// here found): a suite's quick check relies on that to hold its kept read unretained (ARCHITECTURE.md,
    /// "An unchanged read"). A delivery made here could release it.
    @inline(__always)
    func takePendingEventsNow() {
        // Invariant F1: pending events first (a drain under way is waited for: the odd sequence; else one ppoll).
        let before = drainSequence.load(ordering: .acquiring)
        let inotify = inotifyDescriptor.load(ordering: .acquiring)
        guard inotify >= 0 else { return }
        // Bit 1: events queued; bit 2: a change of the mount table not yet applied. Made in C, not through
        // `system`: the unchanged read's one system call, kept to a few instructions (ARCHITECTURE.md, "Known debts").
        if before & 1 == 0, cprefs_pending_changes(mountCheck, inotify) == 0, drainSequence.load(ordering: .acquiring) == before {
            return
        }
        applyPendingEvents()
    }

    /// The part of ``takePendingEventsNow()`` that runs when something is pending (or a drain was under way):
    /// apart, so that the unchanged read's check inlined into its callers stays a few instructions and a frame
    /// with nothing to save.
    @inline(never)
    private func applyPendingEvents() {
        state.withLock { state in
            guard let runner = state.runner else { return }
            applyMountChange(&state, runner)
            // A failed `ioctl` tells nothing: the drain reads what is there (and counts the failure as an overflow).
            if (try? system.pendingEventBytes(runner.inotify)).map({ $0 > 0 }) ?? true { drain(&state, runner) }
            // The watch thread delivers what this drain found.
            if !state.subscriptions.dirty.isEmpty, runner.wake >= 0 { system.wake(runner.wake) }
        }
    }

    /// Applies a change of the mount table noted by a read's check (or found now, when `checkAgain`), under
    /// the engine's mutex: a mount or an unmount anywhere may make any watched path lead elsewhere, with no
    /// event from the directories watched, so every path is resolved again and every watched file may have
    /// changed (as after an overflow).
    private func applyMountChange(_ state: inout State, _ runner: WatchRunner, checkAgain: Bool = false) {
        guard cprefs_mount_change_noted(mountCheck, checkAgain ? 1 : 0) != 0, runner.inotify >= 0 else { return }
        // Odd before the note goes: a read that checks after it is gone sees the sequence move, and waits for
        // the mutex, so no read in between returns what the change may have made stale.
        drainSequence.add(1, ordering: .acquiringAndReleasing)
        defer { drainSequence.add(1, ordering: .acquiringAndReleasing) }
        cprefs_clear_mount_change(mountCheck)
        // Invariant F2: every event moves a generation (a change of the mount table moves them all).
        Self.everythingMayHaveChanged(&state, inotify: runner.inotify)
    }

    // MARK: Subscribing

    /// Starts watching `directory/fileName`; `handler` is called on the watch thread after it may have
    /// changed. O(1) in the number of subscriptions: a path already watched is shared, not resolved again.
    func add(directory: String, fileName: String, fallback: DomainWatching.Fallback, pollingInterval: Duration,
             handler: @escaping @Sendable () -> Void) -> WatchSubscription.ID {
        state.withLock { state in
            // Without a runner (none yet, or its thread could not be made) one is started: its thread then
            // also polls the subscriptions made while there was none.
            if state.runner == nil { startRunner(&state) }
            let path = directory == "/" ? "/" + fileName : directory + "/" + fileName
            // Events queued before a new path is added concern only the paths there were: applied first, so that
            // a directory on this path made a moment ago (its creation still queued in a watched ancestor, the
            // watch thread not having run yet on a busy machine) is not told to this subscription as a change.
            if state.subscriptions.files[path] == nil, let runner = state.runner, runner.inotify >= 0,
               (try? system.pendingEventBytes(runner.inotify)).map({ $0 > 0 }) ?? false {
                drain(&state, runner)
                if !state.subscriptions.dirty.isEmpty, runner.wake >= 0 { system.wake(runner.wake) }
            }
            let subscription = WatchSubscription(id: state.subscriptions.makeID(), filePath: path, fallback: fallback,
                                                 pollingInterval: pollingInterval, handler: handler)
            // Taken out of the table while changed, so that its set of subscribers is changed in place, not copied.
            var file = state.subscriptions.files.removeValue(forKey: path)
                ?? WatchedFile(directory: directory, fileName: fileName, filePath: path,
                               freshness: state.journal.tracker(forPath: path, engine: self))
            let wasPolling = file.pollingInterval
            let wasListening = file.listening > 0
            file.add(subscription)
            state.subscriptions.insert(subscription)
            let inotify = state.runner?.inotify ?? -1
            // Resolved when new, when its first listener comes, or when it was resolved without the
            // inotify descriptor there is now (made while no thread could be).
            if file.subscribers.count == 1 || (!wasListening && file.listening > 0) || file.resolvedWith != inotify {
                state.paths.resolve(&file, inotify: inotify)
            } else if wasPolling == nil && file.polls {
                // Polled from now on for this subscriber's sake: compared with the file as it is now.
                file.lastStamp = FileIdentity.polled(path, system)
                file.lastStampWasRecent = file.lastStamp?.isRecentForPolling ?? false
            }
            state.subscriptions.files[path] = file
            Self.updateVouching(&state, path)
            // A new polling subscription may need a shorter wait than the thread is in.
            if let interval = file.pollingInterval, wasPolling.map({ interval < $0 }) ?? true,
               let wake = state.runner?.wake, wake >= 0 {
                system.wake(wake)
            }
            return subscription.id
        }
    }

    /// Stops a subscription; idempotent. When it was the last, the thread ends before this returns
    /// (unless called from a handler, on the thread itself, which then ends right after the handler).
    func remove(_ id: WatchSubscription.ID) {
        let stopping: WatchRunner? = state.withLock { state in
            // Taken out of the table while changed, so that its set of subscribers is changed in place, not copied.
            guard let subscription = state.subscriptions.remove(id),
                  var file = state.subscriptions.files.removeValue(forKey: subscription.filePath) else { return nil }
            let inotify = state.runner?.inotify ?? -1
            file.remove(subscription)
            if file.subscribers.isEmpty {
                state.paths.release(file, inotify: inotify)
                state.subscriptions.dirty.remove(subscription.filePath)
                Self.stopVouching(&state, file)
            } else {
                // Its last listener gone, the path's watches go too: it polls, like its subscribers.
                if file.listening == 0 && file.chain.isEmpty == false { state.paths.resolve(&file, inotify: inotify) }
                state.subscriptions.files[subscription.filePath] = file
                Self.updateVouching(&state, subscription.filePath)
            }
            guard state.subscriptions.isEmpty, let runner = state.runner else { return nil }
            state.runner = nil
            state.paths = WatchedPaths(system: system)
            inotifyDescriptor.store(-1, ordering: .releasing)
            // No read uses the mount table's descriptor once it is out of the check: it may be closed.
            cprefs_set_mount_descriptor(mountCheck, -1)
            if runner.isCurrentThread {
                state.closingOnThread[runner.serial] = runner
                return nil
            }
            return runner
        }
        stopping?.stopAndJoin()
    }

    /// How a subscription is watched now: by events, by polling, or both.
    func mode(of id: WatchSubscription.ID) -> (events: Bool, polls: Bool) {
        state.withLock { state in
            guard let subscription = state.subscriptions[id], let file = state.subscriptions.files[subscription.filePath] else {
                return (false, false)
            }
            return (file.wd != nil && !subscription.refusesEvents, file.pathPolls || subscription.forcesPolling)
        }
    }

    // MARK: The thread

    /// When the thread cannot be made, no runner is kept (there is no thread to join, and the next
    /// subscription tries again): the subscriptions made meanwhile poll, silently until some later
    /// subscription starts a thread, and their reads are validated with `stat()`.
    private func startRunner(_ state: inout State) {
        #if DEBUG
        let failing = state.failsThreadCreation
        #else
        let failing = false
        #endif
        guard let runner = WatchRunner.start(for: self, failing: failing) else { return }
        state.runner = runner
        state.polling.restart()
        cprefs_set_mount_descriptor(mountCheck, runner.mountsForReads)
        inotifyDescriptor.store(runner.inotify, ordering: .releasing)
    }

    /// The watch thread's loop, until its runner is stopped.
    func run(serial: UInt64) {
        guard let descriptorsOfRunner = state.withLock({ state in
            state.runner.flatMap { $0.serial == serial ? ($0.inotify, $0.wake, $0.mounts) : nil }
        }) else { return }
        let (inotify, wake, mounts) = descriptorsOfRunner
        let descriptors = [inotify, wake].filter { $0 >= 0 }
        while true {
            let timeout: Int32? = state.withLock { state in
                guard state.runner?.serial == serial else { return nil }
                return state.polling.timeout(interval: state.subscriptions.pollingInterval, canBeWoken: wake >= 0)
            }
            guard let timeout else { break }
            let (mountsChanged, woken) = system.waitForInput(descriptors, mounts: mounts, timeout: timeout, wake: wake)
            // Only a wake-up descriptor that was readable has anything to clear: most wake-ups are events.
            if woken { system.drainWakeUps(wake) }
            let toPoll: [String]? = state.withLock { state in
                guard let runner = state.runner, runner.serial == serial else { return nil }
                // The thread's own descriptor told of the change; the reads' one is taken too, so that the
                // change is applied once, and no later read applies it again.
                applyMountChange(&state, runner, checkAgain: mountsChanged)
                drain(&state, runner)
                guard state.polling.takeDuePoll(interval: state.subscriptions.pollingInterval) else { return [] }
                return state.subscriptions.files.values.filter(\.polls).map(\.filePath)
            }
            guard let toPoll else { break }
            // `stat()` outside the mutex: on a hung network mount it may block for long.
            let stamps = toPoll.map { ($0, FileIdentity.polled($0, system)) }
            let due = state.withLock { state in
                if !stamps.isEmpty { Self.record(&state, stamps) }
                return state.subscriptions.takeDue()
            }
            for (id, handler) in due where state.withLock({ $0.subscriptions[id] != nil }) {
                handler()
            }
        }
        if let runner = state.withLock({ $0.closingOnThread.removeValue(forKey: serial) }) {
            runner.closeDescriptors()
        }
    }

    /// Marks the polled paths whose file's identity changed, or is too recent to tell.
    private static func record(_ state: inout State, _ stamps: [(String, FileIdentity?)]) {
        for (path, stamp) in stamps {
            guard var file = state.subscriptions.files[path], file.polls else { continue }
            if stamp != file.lastStamp || file.lastStampWasRecent {
                state.subscriptions.dirty.insert(path)
                state.journal.touch(file.freshness)
                // Where the path could not be proven (a symbolic link on it, say), a change may mean that it
                // leads elsewhere now: resolve it again, so that its events come from there.
                if stamp != file.lastStamp && !file.proven && file.nextComponent == nil, let inotify = state.runner?.inotify {
                    state.paths.resolve(&file, inotify: inotify)
                }
            }
            file.lastStamp = stamp
            file.lastStampWasRecent = stamp?.isRecentForPolling ?? false
            state.subscriptions.files[path] = file
            updateVouching(&state, path)
        }
    }

    // MARK: Events

    /// Reads every queued event, marks the paths they concern, and moves their generations.
    private func drain(_ state: inout State, _ runner: WatchRunner) {
        guard runner.inotify >= 0 else { return }
        drainSequence.add(1, ordering: .acquiringAndReleasing)
        defer { drainSequence.add(1, ordering: .acquiringAndReleasing) }
        let events = system.readEvents(runner.inotify)
        state.paths.droppedByKernel = Set(events.lazy.filter { $0.mask & UInt32(IN_IGNORED) != 0 }.map(\.wd))
        defer { state.paths.droppedByKernel = [] }
        for event in events {
            Self.apply(event, to: &state, inotify: runner.inotify)
        }
    }

    /// What makes an entry of a directory on a path another one: made, removed, or renamed.
    private static let entryChanges = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

    /// Applies one event to the paths it concerns, found through the watch it came from (never by the path a
    /// watch was placed at, which may have moved since): O(paths concerned), whatever the number of
    /// subscriptions.
    private static func apply(_ event: InotifyCalls.Event, to state: inout State, inotify: Int32) {
        let ignored = event.mask & UInt32(IN_IGNORED) != 0
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: every watched file may have changed, and every path may lead elsewhere now
            // (a directory moved away and made again, a file renamed into place), so each is resolved afresh.
            everythingMayHaveChanged(&state, inotify: inotify)
            return
        }
        if let paths = state.paths.paths(ofFileWatch: event.wd) {
            // The domain file's own inode: written in place, linked, unlinked, under any of its names.
            if ignored { state.paths.forget(event.wd) }
            for path in paths {
                if ignored { state.subscriptions.files[path]?.fileWatch = nil }
                changed(path, &state)
            }
            return
        }
        if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            // A directory on some paths went away or moved: they may lead elsewhere now, and are resolved afresh.
            let concerned = state.paths.paths(through: event.wd)
            state.paths.forgetPlaced()
            if ignored { state.paths.forget(event.wd) }
            for path in concerned {
                resolve(path, &state, inotify: inotify)
                changed(path, &state)
            }
            return
        }
        guard !event.name.isEmpty else { return }
        let concerned = state.paths.paths(through: event.wd, named: event.name)
        guard !concerned.isEmpty else { return }
        let entryChanged = event.mask & entryChanges != 0
        for path in concerned {
            guard var file = state.subscriptions.files[path] else { continue }
            if file.wd == event.wd && file.nextComponent == nil && event.name == file.fileName {
                // The domain file's name in its directory. Made, removed or renamed: perhaps a new inode (or
                // a symbolic link) at the name, whose own watch follows it, placed before the generation moves.
                // (Its writes in place are that watch's events: the directory is watched for its entries only.)
                if entryChanged {
                    state.paths.watchFile(&file, inotify: inotify, watchingInode: file.proven)
                    if file.fileUnfollowable && !file.pathPolls {
                        file.pathPolls = true
                        file.lastStamp = FileIdentity.polled(file.filePath, state.paths.system)
                    }
                    state.subscriptions.files[path] = file
                    updateVouching(&state, path)
                }
                changed(path, &state)
            } else if !entryChanged && event.mask & UInt32(IN_ATTRIB) != 0 {
                // A directory on the path changed mode or owner: it still leads where it led (nothing to resolve),
                // but what may be read through it (an administrator's file checked through it) may not.
                changed(path, &state)
            } else if entryChanged || event.mask & UInt32(IN_ISDIR) != 0 {
                // A directory on the path (or the missing one waited for) made, removed or renamed: the path
                // may lead to another directory now. Its own events cannot tell: one removed while held sends
                // nothing until the last reference goes, and the one made in its place is not watched yet.
                state.paths.forgetPlaced()
                resolve(path, &state, inotify: inotify)
                changed(path, &state)
            }
        }
    }

    /// Every watched file may have changed, and every path may lead elsewhere: each is resolved afresh.
    private static func everythingMayHaveChanged(_ state: inout State, inotify: Int32) {
        #if DEBUG
        state.everyPathWoken += 1
        #endif
        state.paths.forgetPlaced()
        for path in state.subscriptions.files.keys.sorted() {
            resolve(path, &state, inotify: inotify)
            changed(path, &state)
        }
    }

    /// The path's file may have changed: its subscribers are due, and its generation moves.
    private static func changed(_ path: String, _ state: inout State) {
        // Invariant F2: every event moves a generation (once per path, for all of its subscriptions).
        guard let file = state.subscriptions.files[path] else { return }
        state.subscriptions.dirty.insert(path)
        state.journal.touch(file.freshness)
    }

    private static func resolve(_ path: String, _ state: inout State, inotify: Int32) {
        guard var file = state.subscriptions.files[path] else { return }
        state.paths.resolve(&file, inotify: inotify)
        state.subscriptions.files[path] = file
        updateVouching(&state, path)
    }

    /// Whether the path's reads may be validated by events: its one chain proves it, on a file system whose
    /// events are complete, following the file's inode, and no subscriber forces another behaviour. O(1):
    /// what the subscribers add is counted in the path's record, so nothing else is looked at.
    private static func updateVouching(_ state: inout State, _ path: String) {
        // Invariant F3: vouch only where events are complete.
        guard let file = state.subscriptions.files[path] else { return }
        // Without the mount table (no /proc, or its open failed) an unmount under the path would go unseen: events
        // alone do not reach such a path, and its reads are validated with `stat()`.
        let running = state.runner.map { $0.mounts >= 0 && $0.mountsForReads >= 0 } == true && file.resolvedWith >= 0
        let unforced = file.forcing == 0 && file.listening > 0
        let complete = state.paths.isComplete(file.wd)
        // Events reach the path from its watch (of the directory, or of its deepest existing ancestor) whenever
        // it does not need to poll; they vouch for the file's contents too where its one chain proves the path.
        state.journal.update(file.freshness, reached: running && unforced && !file.pathPolls && file.wd != nil && complete,
                             vouchesContents: file.proven && !file.fileUnfollowable)
    }

    /// The path's last subscription went: no event reaches it any more.
    private static func stopVouching(_ state: inout State, _ file: WatchedFile) {
        state.journal.update(file.freshness, reached: false, vouchesContents: false)
    }

    /// This process changed the file of `tracker`'s path (a write or a removal through a file domain): its
    /// generation moves, whether or not an event of the change reaches a watch.
    ///
    /// Without the engine's mutex (a compare-and-swap, see ``GenerationClock``): the watch thread holds it while
    /// it applies the events of this very write (an `lstat` and an `inotify_add_watch` for the new file), and a
    /// writer waiting for it there would wait for its own events to be applied, which nothing it does needs.
    func changedHere(_ tracker: FileFreshness) {
        // Invariant F6: a file domain's own change moves its path's generation, and so the engine's count.
        clock.touch(tracker)
    }

    #if DEBUG
    /// Runs `body` while holding the engine's mutex, so that the watch thread cannot drain events: for the
    /// test that overflows the kernel's event queue.
    package func holdingLock(_ body: () throws -> Void) rethrows {
        try state.withLock { _ in try body() }
    }
    #endif
}

extension FileIdentity {
    /// What polling compares: the identity of the file at `path`, or `nil` when it is missing (or cannot be
    /// looked at: a change either way, so that its watchers read it and learn what a read can).
    static func polled(_ path: String, _ system: SystemCalls) -> FileIdentity? {
        (try? system.stat(path)).map(FileIdentity.init)
    }

    /// Whether the file changed so recently that a further change could share its timestamps (coarse
    /// on Linux, and coarser on network file systems, hence a wider window than ``isRecent``): polling
    /// then reports it once more.
    var isRecentForPolling: Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return abs(now.tv_sec - changed.tv_sec) < 2
    }
}
