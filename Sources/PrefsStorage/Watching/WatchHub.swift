import Glibc

/// The process's one inotify instance, shared by every watch, and the one thread that reads it.
///
/// - Directories are watched, never files: the domain file is replaced by `rename()`, which a watch
///   on the file itself would not follow. A directory that does not exist yet is waited for by watching
///   its nearest existing ancestor and moving down as each level appears.
/// - Watches are reference-counted per directory; the last watch gone removes the inotify watch, and
///   the last watch of the process closes the inotify and wake-up descriptors and ends the thread.
/// - Where events are incomplete (see ``FileSystemKind``) or inotify cannot serve, the thread also
///   polls the watched files with `stat()`.
/// - Handlers run on the watch thread, one at a time, outside the hub's lock; a handler is told only
///   that its file may have changed (coalesced: one call for any number of events drained together),
///   and must read the file to learn what changed.
///
/// Every event drained bumps the generation of its directory (a directory above it moved or removed
/// does too, and an overflow bumps the epoch), under the same lock, so that a read path can later
/// ask "has anything changed in this directory since I cached it?" without a `stat()`.
///
/// A watch follows the directory's inode, not its path. So a directory watch vouches for reads only
/// when the path leads, and keeps leading, to the watched inode: every directory above it is watched
/// too (``InotifyCalls/ancestorMask``), top down, each a real directory and no symbolic link, so that
/// moving or removing any of them (the only way to make the path lead elsewhere, short of a mount) is an
/// event that invalidates the tokens of the directories below and watches their paths afresh.
final class WatchHub: @unchecked Sendable {
    static let shared = WatchHub()

    private let lock = Lock()
    // Everything below is guarded by `lock`.
    private var runner: Runner?
    private var subscriptions: [Int: Subscription] = [:]
    private var nextIdentifier = 0
    private var watches: [Int32: DirectoryWatch] = [:]
    /// Directory path → its watch, for the read path's validation.
    private var watchedDirectories: [String: Int32] = [:]
    private var runnerSerial: UInt64 = 0
    private var dirty: Set<Int> = []
    private var lastPoll = ContinuousClock.now
    /// Bumped by a queue overflow: every directory must be considered changed.
    private(set) var epoch: UInt64 = 0
    #if DEBUG
    private var failsThreadCreation = false
    /// For tests, on a hub of their own: makes creating the watch thread fail, as `pthread_create` can.
    package var threadCreationFails: Bool {
        get { lock.withLock { failsThreadCreation } }
        set { lock.withLock { failsThreadCreation = newValue } }
    }
    #endif

    /// One running inotify instance with its thread; replaced by a fresh one when watching starts again
    /// after everything stopped.
    final class Runner: @unchecked Sendable {
        let inotify: Int32
        let wake: Int32
        /// Tells runners apart in validation tokens: each inotify instance numbers its watches from 1.
        let serial: UInt64
        var thread = pthread_t()
        /// Set under the hub's lock when the last watch is gone.
        var stopped = false
        /// Set when the thread itself stopped watching (from a handler): it then closes the descriptors.
        var closesOwnDescriptors = false

        init(inotify: Int32, wake: Int32, serial: UInt64) {
            self.inotify = inotify
            self.wake = wake
            self.serial = serial
        }

        func closeDescriptors() {
            if inotify >= 0 { Glibc.close(inotify) }
            if wake >= 0 { Glibc.close(wake) }
        }
    }

    /// An inotify watch on one directory, shared by every subscription whose path leads there.
    struct DirectoryWatch {
        var path: String
        var references: Int
        var kind: FileSystemKind
        var generation: UInt64 = 0
        /// Whether its events alone can validate a cached read: a local file system, no subscription of
        /// it forced to behave otherwise, and no failed proof of its path (see the type's comment).
        var trusted: Bool
        /// How many subscriptions hold a proof that the path leads to it, with every directory above it
        /// watched (their ancestor watches): a directory watched only while waiting for a level below to
        /// appear, or kept only as another's ancestor, has none, and vouches for no read.
        var provers = 0
        /// Whether some subscription watches the directory's entries, rather than only its being moved
        /// or removed as a directory above another.
        var watchesEntries: Bool
    }

    /// One watched file.
    final class Subscription: @unchecked Sendable {
        let identifier: Int
        let directory: String
        let fileName: String
        let fallback: DomainWatching.Fallback
        let pollingInterval: Duration
        let handler: @Sendable () -> Void
        // Guarded by the hub's lock.
        var wd: Int32?
        /// The next path component below the watched ancestor, or `nil` when the directory itself is watched.
        var nextComponent: String?
        /// The watches of the directories above `directory`, while `wd` watches `directory` itself.
        var ancestors: [Int32] = []
        /// The watch whose path this subscription proved (counted in its `provers`).
        var proved: Int32?
        var polls = false
        var lastStamp: FileIdentity?
        var lastStampWasRecent = false
        var cancelled = false

        init(identifier: Int, directory: String, fileName: String, fallback: DomainWatching.Fallback,
             pollingInterval: Duration, handler: @escaping @Sendable () -> Void) {
            self.identifier = identifier
            self.directory = directory
            self.fileName = fileName
            self.fallback = fallback
            self.pollingInterval = pollingInterval
            self.handler = handler
        }

        var filePath: String { directory == "/" ? "/" + fileName : directory + "/" + fileName }
    }

    // MARK: Subscribing

    /// Starts watching `directory/fileName`; `handler` is called on the watch thread after it may have
    /// changed.
    func add(directory: String, fileName: String, fallback: DomainWatching.Fallback, pollingInterval: Duration,
             handler: @escaping @Sendable () -> Void) -> Subscription {
        lock.withLock {
            // Without a runner (none yet, or its thread could not be made) one is started: its thread
            // then also polls the subscriptions made while there was none.
            let runner = self.runner ?? startRunner()
            nextIdentifier += 1
            let subscription = Subscription(identifier: nextIdentifier, directory: directory, fileName: fileName,
                                            fallback: fallback, pollingInterval: pollingInterval, handler: handler)
            subscriptions[subscription.identifier] = subscription
            resolve(subscription, runner)
            // A new polling subscription may need a shorter wait than the thread is in.
            if subscription.polls && runner.wake >= 0 { InotifyCalls.wake(runner.wake) }
            return subscription
        }
    }

    /// Stops `subscription`; idempotent. When it was the last, the thread ends before this returns
    /// (unless called from a handler, on the thread itself, which then ends right after the handler).
    func remove(_ subscription: Subscription) {
        let stopping: Runner? = lock.withLock {
            guard !subscription.cancelled else { return nil }
            subscription.cancelled = true
            subscriptions[subscription.identifier] = nil
            dirty.remove(subscription.identifier)
            if let proved = subscription.proved { watches[proved]?.provers -= 1 }
            subscription.proved = nil
            if let runner {
                release(subscription.wd, runner)
                for wd in subscription.ancestors { release(wd, runner) }
            }
            subscription.wd = nil
            subscription.ancestors = []
            guard subscriptions.isEmpty, let runner else { return nil }
            self.runner = nil
            runner.stopped = true
            watches.removeAll()
            watchedDirectories.removeAll()
            if pthread_equal(pthread_self(), runner.thread) != 0 { runner.closesOwnDescriptors = true }
            return runner
        }
        guard let stopping else { return }
        if stopping.closesOwnDescriptors {
            pthread_detach(stopping.thread)
        } else {
            InotifyCalls.wake(stopping.wake)
            pthread_join(stopping.thread, nil)
            stopping.closeDescriptors()
        }
    }

    /// How `subscription` is watched now: by events, by polling, or both.
    func mode(of subscription: Subscription) -> (events: Bool, polls: Bool) {
        lock.withLock { (subscription.wd != nil, subscription.polls) }
    }

    // MARK: The thread

    private final class ThreadStart {
        let hub: WatchHub
        let runner: Runner
        init(hub: WatchHub, runner: Runner) { (self.hub, self.runner) = (hub, runner) }
    }

    /// Makes the inotify instance, the wake-up descriptor and the thread (called under the lock).
    ///
    /// When the thread cannot be made, its descriptors are closed and no runner is kept (there is no
    /// thread to join, and the next subscription tries again): the runner returned has neither, so the
    /// subscriptions made with it poll, silently until some later subscription starts a thread, and
    /// their reads are validated with `stat()`.
    private func startRunner() -> Runner {
        let inotify = (try? InotifyCalls.initialize()) ?? -1
        let wake = (try? InotifyCalls.makeWakeDescriptor()) ?? -1
        runnerSerial += 1
        let runner = Runner(inotify: inotify, wake: wake, serial: runnerSerial)
        let start = Unmanaged.passRetained(ThreadStart(hub: self, runner: runner)).toOpaque()
        var result: Int32
        #if DEBUG
        result = failsThreadCreation ? EAGAIN : 0
        #else
        result = 0
        #endif
        if result == 0 {
            result = pthread_create(&runner.thread, nil, { context in
                let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
                start.hub.run(start.runner)
                return nil
            }, start)
        }
        if result != 0 {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            runner.closeDescriptors()
            return Runner(inotify: -1, wake: -1, serial: runnerSerial)
        }
        self.runner = runner
        lastPoll = .now
        return runner
    }

    private func run(_ runner: Runner) {
        let descriptors = [runner.inotify, runner.wake].filter { $0 >= 0 }
        while true {
            let timeout: Int32? = lock.withLock { runner.stopped ? nil : pollTimeout(runner) }
            guard let timeout else { break }
            InotifyCalls.waitForInput(descriptors, timeout: timeout)
            if runner.wake >= 0 { InotifyCalls.drainWakeUps(runner.wake) }
            let toPoll: [(Int, String)]? = lock.withLock {
                guard !runner.stopped else { return nil }
                drain(runner)
                return pollIsDue() ? subscriptions.values.filter(\.polls).map { ($0.identifier, $0.filePath) } : []
            }
            guard let toPoll else { break }
            // `stat()` outside the lock: on a hung network mount it may block for long.
            let stamps = toPoll.map { ($0.0, FileIdentity.polled($0.1)) }
            let due: [Subscription] = lock.withLock {
                if !toPoll.isEmpty { record(stamps) }
                defer { dirty.removeAll() }
                return dirty.compactMap { subscriptions[$0] }.sorted { $0.identifier < $1.identifier }
            }
            for subscription in due where !lock.withLock({ subscription.cancelled }) {
                subscription.handler()
            }
        }
        if runner.closesOwnDescriptors { runner.closeDescriptors() }
    }

    /// Milliseconds until the next poll is due, or -1 to wait for events alone (called under the lock).
    private func pollTimeout(_ runner: Runner) -> Int32 {
        let intervals = subscriptions.values.filter(\.polls).map(\.pollingInterval)
        // Without a wake-up descriptor the thread checks for its end now and then.
        let cap: Duration? = runner.wake >= 0 ? nil : .milliseconds(100)
        guard let interval = intervals.min() ?? cap else { return -1 }
        let remaining = max(.zero, min(interval - (ContinuousClock.now - lastPoll), cap ?? interval))
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + (attoseconds > 0 ? 1 : 0))
    }

    private func pollIsDue() -> Bool {
        guard let interval = subscriptions.values.filter(\.polls).map(\.pollingInterval).min() else { return false }
        guard ContinuousClock.now - lastPoll >= interval else { return false }
        lastPoll = .now
        return true
    }

    private func record(_ stamps: [(Int, FileIdentity?)]) {
        for (identifier, stamp) in stamps {
            guard let subscription = subscriptions[identifier], subscription.polls else { continue }
            if stamp != subscription.lastStamp || subscription.lastStampWasRecent { dirty.insert(identifier) }
            subscription.lastStamp = stamp
            subscription.lastStampWasRecent = stamp?.isRecentForPolling ?? false
        }
    }

    // MARK: Events

    /// Reads every queued event and marks the subscriptions they concern (called under the lock).
    private func drain(_ runner: Runner) {
        guard runner.inotify >= 0 else { return }
        for event in InotifyCalls.readEvents(runner.inotify) {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                // Events were lost: every watched file may have changed.
                epoch &+= 1
                for wd in watches.keys { watches[wd]?.generation &+= 1 }
                dirty.formUnion(subscriptions.keys)
                continue
            }
            guard watches[event.wd] != nil else { continue }
            watches[event.wd]?.generation &+= 1
            let concerned = subscriptions.values.filter { $0.wd == event.wd }
            if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                // A directory above watched ones went away or moved: their paths may lead elsewhere now,
                // so their tokens change, and their paths are watched afresh.
                // The proofs of the watches below are held by the subscriptions resolved here, and
                // given up or proven again by that.
                if let moved = watches[event.wd]?.path {
                    for (wd, watch) in watches where PathBytes.isBelow(watch.path, moved) { watches[wd]?.generation &+= 1 }
                }
                let below = subscriptions.values.filter { $0.ancestors.contains(event.wd) && $0.wd != event.wd }
                if event.mask & UInt32(IN_IGNORED) != 0 { forget(event.wd) }
                for subscription in below {
                    resolve(subscription, runner)
                    dirty.insert(subscription.identifier)
                }
            }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                // The kernel dropped the watch (directory gone, file system unmounted).
                forget(event.wd)
                for subscription in concerned {
                    subscription.wd = nil
                    resolve(subscription, runner)
                    dirty.insert(subscription.identifier)
                }
                continue
            }
            if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                // The watch follows the directory's inode, not its path: find the path again.
                for subscription in concerned {
                    resolve(subscription, runner)
                    dirty.insert(subscription.identifier)
                }
                continue
            }
            for subscription in concerned {
                if let next = subscription.nextComponent {
                    guard event.name == next else { continue }
                    resolve(subscription, runner)
                    // Moved down: the file may have appeared before the new watch was in place.
                    if subscription.wd != event.wd { dirty.insert(subscription.identifier) }
                } else if event.name == subscription.fileName {
                    dirty.insert(subscription.identifier)
                }
            }
        }
    }

    // MARK: Watches

    /// Watches the deepest existing directory on `subscription`'s path, and decides whether it polls
    /// too (called under the lock). The new watch is added before the old one is released, so a
    /// directory watched again keeps its inotify watch.
    private func resolve(_ subscription: Subscription, _ runner: Runner) {
        let previous = subscription.wd
        subscription.wd = nil
        subscription.nextComponent = nil
        var polls = subscription.fallback != .none
        let eventsForbidden = subscription.fallback == .inotifyUnavailable || subscription.fallback == .watchLimitReached
        if runner.inotify >= 0 && !eventsForbidden {
            var path = subscription.directory
            var attempts = 0
            while true {
                do {
                    let wd = try InotifyCalls.addWatch(runner.inotify, path)
                    if watches[wd]?.watchesEntries != true {
                        let type = (try? InotifyCalls.fileSystemType(path)) ?? 0
                        let kind = FileSystemKind(type: type)
                        // A directory watched so far only as another's ancestor keeps its references.
                        watches[wd] = DirectoryWatch(path: path, references: watches[wd]?.references ?? 0, kind: kind,
                                                     trusted: kind.eventsAreComplete, watchesEntries: true)
                        watchedDirectories[path] = wd
                    }
                    watches[wd]?.references += 1
                    if subscription.fallback != .none { watches[wd]?.trusted = false }
                    subscription.wd = wd
                    if path != subscription.directory {
                        let next = PathBytes.component(of: subscription.directory, below: path)
                        subscription.nextComponent = next
                        // The next level may have been made after it was found missing and before this
                        // watch was in place, so its creation was not seen: start again from the bottom.
                        attempts += 1
                        if attempts < 64 && access((path == "/" ? "" : path) + "/" + next, F_OK) == 0 {
                            release(wd, runner)
                            subscription.wd = nil
                            subscription.nextComponent = nil
                            path = subscription.directory
                            continue
                        }
                    }
                    if watches[wd]?.kind.eventsAreComplete != true { polls = true }
                    break
                } catch {
                    // A missing level is waited for from its parent; anything else (the watch limit,
                    // no permission) leaves polling.
                    guard error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR), path != "/" else {
                        polls = true
                        break
                    }
                    path = Self.parent(of: path)
                }
            }
        } else {
            polls = true
        }
        let previousAncestors = subscription.ancestors
        let previousProof = subscription.proved
        subscription.ancestors = []
        subscription.proved = nil
        if subscription.nextComponent == nil, let wd = subscription.wd {
            let (ancestors, leadsThere) = watchPath(to: subscription.directory, directoryWatch: wd, runner)
            subscription.ancestors = ancestors
            if leadsThere {
                watches[wd]?.provers += 1
                subscription.proved = wd
            } else {
                watches[wd]?.trusted = false
            }
        }
        if let previousProof { watches[previousProof]?.provers -= 1 }
        for wd in previousAncestors { release(wd, runner) }
        release(previous, runner)
        if polls && !subscription.polls {
            subscription.lastStamp = FileIdentity.polled(subscription.filePath)
            subscription.lastStampWasRecent = subscription.lastStamp?.isRecentForPolling ?? false
        }
        subscription.polls = polls
    }

    /// Watches every directory above `directory`, top down, for being moved or removed, and checks that
    /// the path still leads to the directory `directoryWatch` watches (called under the lock).
    ///
    /// Top down, each level is watched through the levels above it, already watched: a level moved or
    /// removed after its watch was added is an event; one moved before was not yet watched, so the levels
    /// below are watched through what replaced it. Each level, and the directory itself last, must be a
    /// real directory (no symbolic link: its target could change without an event here), and the
    /// directory must still be the inode `directoryWatch` follows.
    /// - Returns: The ancestor watches taken (each one reference), and whether the path is proven.
    private func watchPath(to directory: String, directoryWatch: Int32, _ runner: Runner) -> (ancestors: [Int32], leadsThere: Bool) {
        var ancestors: [Int32] = []
        var prefix = ""
        // "/" itself cannot be moved or removed.
        for component in PathBytes.components(directory).dropLast() {
            prefix += "/" + component
            guard let wd = try? InotifyCalls.addAncestorWatch(runner.inotify, prefix) else { return (ancestors, false) }
            if watches[wd] == nil {
                watches[wd] = DirectoryWatch(path: prefix, references: 0, kind: FileSystemKind(type: 0), trusted: false,
                                             watchesEntries: false)
            }
            watches[wd]?.references += 1
            ancestors.append(wd)
        }
        guard let wd = try? InotifyCalls.addAncestorWatch(runner.inotify, directory) else { return (ancestors, false) }
        if wd != directoryWatch {
            // Another directory is at the path now; a watch made only by this check is dropped.
            if watches[wd] == nil { InotifyCalls.removeWatch(runner.inotify, wd) }
            return (ancestors, false)
        }
        return (ancestors, true)
    }

    /// Drops one reference to `wd`, removing the inotify watch with the last (called under the lock).
    private func release(_ wd: Int32?, _ runner: Runner) {
        guard let wd, var watch = watches[wd] else { return }
        watch.references -= 1
        if watch.references > 0 {
            watches[wd] = watch
        } else {
            forget(wd)
            InotifyCalls.removeWatch(runner.inotify, wd)
        }
    }

    /// Drops the record of a watch (called under the lock).
    private func forget(_ wd: Int32) {
        if let path = watches[wd]?.path, watchedDirectories[path] == wd { watchedDirectories[path] = nil }
        watches[wd] = nil
    }

    // MARK: Validating reads

    /// Proof that nothing in a directory changed between two moments: equal tokens, taken from the same
    /// watch, mean that no event arrived for the directory in between and no event was lost.
    package struct ValidationToken: Equatable, Sendable {
        let runner: UInt64
        let wd: Int32
        let generation: UInt64
        let epoch: UInt64
    }

    /// The current token of `directory`, or `nil` when no watch of this process can vouch for it (none,
    /// not the directory itself, or on a file system where events are incomplete).
    ///
    /// Pending events are drained first, under the same lock that updates the generations: a `rename()`
    /// queues its event before it returns to the writer, so a read that begins after a write completed
    /// always finds the generation bumped. One `ioctl(FIONREAD)` when nothing is pending.
    package func validationToken(forDirectory directory: String) -> ValidationToken? {
        lock.withLock {
            guard let runner, runner.inotify >= 0, let wd = watchedDirectories[directory], watches[wd]?.trusted == true,
                  (watches[wd]?.provers ?? 0) > 0 else {
                return nil
            }
            if InotifyCalls.pendingBytes(runner.inotify) > 0 {
                drain(runner)
                // The watch thread delivers what this drain found.
                if !dirty.isEmpty { InotifyCalls.wake(runner.wake) }
            }
            guard let watch = watches[wd], watch.trusted, watch.provers > 0, watchedDirectories[directory] == wd else { return nil }
            return ValidationToken(runner: runner.serial, wd: wd, generation: watch.generation, epoch: epoch)
        }
    }

    #if DEBUG
    /// Runs `body` while holding the hub's lock, so that the watch thread cannot drain events: for the
    /// test that overflows the kernel's event queue.
    package func holdingLock(_ body: () throws -> Void) rethrows {
        try lock.withLock { () throws -> Void in try body() }
    }
    #endif

    static func parent(of path: String) -> String { PathBytes.parent(path) }
}

extension FileIdentity {
    /// What polling compares: the identity of the file at `path`, or `nil` when it is missing.
    static func polled(_ path: String) -> FileIdentity? {
        var info = Glibc.stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
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
