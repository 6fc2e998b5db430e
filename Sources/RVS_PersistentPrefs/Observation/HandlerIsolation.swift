import Dispatch
import Foundation
import Glibc
import PrefsStorage
import Synchronization

/// Where one observer's handler runs: on the actor it was registered from (SPEC §12).
///
/// A handler written in a main-actor (or other actor-isolated) context inherits that isolation: Swift 6
/// checks it when the handler runs, and stops the process when a change made elsewhere calls it on a
/// delivery thread. So every call of such a handler is made on its actor: at once when the calling thread
/// is provably that actor's and nothing of the observer's is queued before it (a write through the instance
/// on the main thread, for a main-actor handler), otherwise queued and run there in order, one at a time.
///
/// Only the main actor can be proven current from a synchronous context (it is the main thread); a handler
/// of another actor always hears its notifications asynchronously, soon after the write.
final class HandlerIsolation: Sendable {
    /// A call of the handler, with what it needs.
    ///
    /// Unchecked: it holds the instance, the observer and the change, none of them `Sendable`. It is made
    /// under the instance's operation lock and runs on the handler's actor, where it takes that lock again
    /// before touching any of them; the compiler cannot see a lock that guards a whole class.
    struct Call: @unchecked Sendable {
        let run: () -> Void
    }

    private struct Queue {
        var calls: [Call] = []
        /// Whether a task is running calls on the actor: new ones are then queued behind it.
        var draining = false
    }

    /// The actor the handler was registered from.
    let actor: any Actor
    private let queue = PrefsMutex(Queue())

    init(_ actor: any Actor) {
        self.actor = actor
    }

    /// Whether the calling thread runs `actor` now: provable only for the main actor, whose executor is the
    /// main dispatch queue.
    private var isCurrent: Bool {
        actor === MainActor.shared && Self.isOnMainQueue
    }

    /// Marks the main queue, so that a thread can tell it runs the main queue's work without asserting it.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether this thread runs the main queue's work now. On Linux that is not always the main thread:
    /// once the main thread parks in `dispatchMain()` (an async `main` does), a worker thread drains the
    /// main queue, and the main actor with it.
    static var isOnMainQueue: Bool {
        isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// Whether this thread is the process's main thread, asked of Foundation once per thread and kept in a
    /// thread-specific value: `Thread.isMainThread` makes two system calls on Linux (`getpid`, `gettid`), and a
    /// change made elsewhere heard by thousands of watching instances asks it once for each.
    private static var isMainThread: Bool {
        guard let mainThreadKey else { return Thread.isMainThread }
        let known = pthread_getspecific(mainThreadKey)
        if let known { return known == mainThreadMark }
        let isMain = Thread.isMainThread
        pthread_setspecific(mainThreadKey, isMain ? mainThreadMark : otherThreadMark)
        return isMain
    }

    /// The thread-specific value's key (`nil` when none could be made: then Foundation is asked every time), and
    /// the two values it holds (addresses of their own, never freed).
    private static let mainThreadKey: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()
    private nonisolated(unsafe) static let mainThreadMark = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    private nonisolated(unsafe) static let otherThreadMark = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    /// Makes `call` on the handler's actor: now, when this thread is that actor's and nothing is queued
    /// before it; otherwise queued, to run there after what was queued before.
    /// - Returns: Whether it ran now.
    @discardableResult
    func submit(_ call: Call) -> Bool {
        if isCurrent, queue.withLock({ !$0.draining }) {
            call.run()
            return true
        }
        let startsDraining = queue.withLock { queue -> Bool in
            queue.calls.append(call)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        if startsDraining {
            Task { [self] in await drain(on: actor) }
        }
        return false
    }

    /// How many calls wait on the actor's queue (for tests).
    var queuedCalls: Int { queue.withLock { $0.calls.count } }

    /// Runs the calls queued when it begins on `actor`, oldest first; those queued meanwhile run in a task of
    /// their own, so that the actor's other work runs in between. (The main actor's queue is shared by every
    /// watching instance: one task running until the queue is empty never ended while thousands of instances
    /// heard changes faster than they were told, and nothing else ran on the main actor.)
    private func drain(on actor: isolated any Actor) {
        let calls = queue.withLock { queue -> [Call] in
            defer { queue.calls.removeAll(keepingCapacity: true) }
            return queue.calls
        }
        for call in calls { call.run() }
        let more = queue.withLock { queue -> Bool in
            if queue.calls.isEmpty { queue.draining = false }
            return queue.draining
        }
        if more {
            Task { [self] in drain(on: actor) }
        }
    }
}
