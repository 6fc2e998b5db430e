// Tests that wait (for child processes, for an etcd member to come back, for a timeout that proves something
// never happens) should not hold one of the threads Swift Testing runs every test's body on: Swift concurrency's
// pool has as many as cores, two on CI's machine, so two such tests stopped every other test for as long as they
// waited. (Swift Testing also runs at most twice as many tests at once as cores, unless
// SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH says otherwise: a test waiting here still takes one of those.)

import Foundation

/// Runs `body`, which may block, on a thread of its own while the calling task waits for it, and returns
/// what it returns. The task's context comes along (a `#expect` inside is the calling test's), since the
/// task itself moves to that thread; the thread ends with the call.
///
/// Use it for the whole body of a test that spends most of its time waiting:
/// `@Test func x() async throws { try await onOwnThread { ... } }`.
package func onOwnThread<T>(_ body: () throws -> T) async throws -> T {
    try await withoutActuallyEscaping(body) { body in
        let call = WaitedCall(body)
        let thread = OwnThread()
        await thread.run(call)
        thread.finish()
        return try call.result!.get()
    }
}

/// A body and its result, handed to another thread while its caller's task waits: never reached by two threads
/// at once (the actor hop there and back orders them), which the compiler cannot see.
private final class WaitedCall<T>: @unchecked Sendable {
    let body: () throws -> T
    var result: Result<T, any Error>?

    init(_ body: @escaping () throws -> T) { self.body = body }
}

/// An actor whose executor is one thread of its own: a task calling it runs there.
private actor OwnThread {
    private let executor = ThreadExecutor()

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func run<T>(_ call: WaitedCall<T>) { call.result = Result { try call.body() } }

    /// Lets the thread end once its queue is empty.
    nonisolated func finish() { executor.finish() }
}

/// A serial executor running its jobs, in order, on one thread it starts.
private final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finishing = false

    init() {
        let thread = Thread { [self] in runJobs() }
        thread.stackSize = 8 << 20  // a test's body may recurse as deeply as on Swift Testing's own threads
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finishing { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}
