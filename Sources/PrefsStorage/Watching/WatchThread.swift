import Glibc
import Synchronization

/// One running inotify instance with the thread that reads it; replaced by a fresh one when watching
/// starts again after everything stopped.
struct WatchRunner {
    let inotify: Int32
    let wake: Int32
    /// The mount table the thread waits on (see ``InotifyCalls/openMountTable()``), or -1.
    let mounts: Int32
    /// Another descriptor of the mount table, for the reads' check (see `WatchEngine.MountCheck`): each
    /// descriptor reports a change once, so the thread's own wait must not take it from the reads.
    let mountsForReads: Int32
    /// Tells runners apart, across engines: the thread finds its engine by it.
    let serial: UInt64
    /// The engine's system calls, through which the descriptors are made and closed.
    let system: SystemCalls
    var thread = pthread_t()

    /// Makes the inotify instance, the wake-up descriptor and the thread, which runs `engine.run(serial:)`.
    ///
    /// - Returns: `nil` when the thread cannot be made: its descriptors are then closed.
    static func start(for engine: WatchEngine, failing: Bool = false) -> WatchRunner? {
        let serial = serials.add(1, ordering: .relaxed).newValue
        let system = engine.system
        // Without an inotify instance (none left: `EMFILE`, the user's instance limit), every path polls; without
        // a wake-up descriptor, the thread waits at most a polling interval.
        var runner = WatchRunner(inotify: (try? system.inotifyInitialize()) ?? -1,
                                 wake: (try? system.makeWakeDescriptor()) ?? -1,
                                 mounts: system.openMountTable(), mountsForReads: system.openMountTable(), serial: serial,
                                 system: system)
        pending.withLock { $0[serial] = engine }
        // The thread is told only its serial, as the pointer-sized argument itself: it takes its engine
        // from `pending`, so no object is passed through an untyped pointer.
        var result = EAGAIN
        if !failing {
            result = pthread_create(&runner.thread, nil, { context in
                let serial = UInt64(UInt(bitPattern: context))
                if let engine = WatchRunner.pending.withLock({ $0.removeValue(forKey: serial) }) { engine.run(serial: serial) }
                return nil
            }, UnsafeMutableRawPointer(bitPattern: UInt(serial)))
        }
        guard result == 0 else {
            _ = pending.withLock { $0.removeValue(forKey: serial) }
            runner.closeDescriptors()
            return nil
        }
        return runner
    }

    /// Whether this is the calling thread.
    var isCurrentThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Wakes the thread and waits for it to end (never from the thread itself).
    func stopAndJoin() {
        if wake >= 0 { system.wake(wake) }
        pthread_join(thread, nil)
        closeDescriptors()
    }

    func closeDescriptors() {
        // A failed close leaves nothing to do: the descriptor is gone either way on Linux.
        if inotify >= 0 { try? system.close(inotify, path: InotifyCalls.inotifyName) }
        if wake >= 0 { try? system.close(wake, path: InotifyCalls.wakeName) }
        if mounts >= 0 { try? system.close(mounts, path: InotifyCalls.mountTablePath) }
        // Reads use it only under the engine's `MountCheck` lock, from which the engine takes it before this.
        if mountsForReads >= 0 { try? system.close(mountsForReads, path: InotifyCalls.mountTablePath) }
    }

    private static let serials = Atomic<UInt64>(0)
    /// The engines of threads made and not yet started, by serial.
    private static let pending = PrefsMutex<[UInt64: WatchEngine]>([:])
}
