// A program whose main thread runs a loop of its own, not Dispatch's (SPEC §12): as a GTK program runs GLib's
// loop, this one runs a plain poll() loop on the main thread and never lets the Dispatch main queue run. It
// follows the Observation article's "A main loop that is not Dispatch's": the handler is registered with
// `isolation: nil` and is `@Sendable`, so it runs on a delivery thread, copies what it needs out of the change
// and hands it to the loop (here through a pipe the loop polls, as `g_main_context_invoke` wakes GLib's), and
// the loop applies it on the main thread. Meanwhile another process (this program, run as
// `ForeignLoop writer`) writes 200 times. It exits 0 when the loop applied the last write, every value was
// applied on the main thread, and no handler ran on it for a change made elsewhere; 1 with the reason otherwise.
import Foundation
import RVS_PersistentPrefs

final class AppPreferences: RVS_PersistentPrefs {
    @Entry("counter") var counter = 0
}

let key = "com.example.app.preferences"
let writes = 200

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ForeignLoop: \(message)\n".utf8))
    exit(1)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "writer" {
    let prefs = AppPreferences(key: key)
    for round in 1...writes {
        prefs.counter = round
        if let error = prefs.lastError { fail("the writer's write \(round) failed: \(error)") }
    }
    exit(0)
}

let mainThread = pthread_self()

/// What the handler hands to the loop: the values, in order, behind a lock (NSLock: a pthread mutex), and a
/// pipe whose read end the loop polls. With GLib, `g_main_context_invoke(nil, callback, box)` does both.
final class LoopInbox: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var values: [Int] = []
    let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { fail("pipe: \(errno)") }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    /// On the delivery thread: queue the value and wake the loop.
    func post(_ value: Int) {
        lock.withLock { values.append(value) }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// On the loop's thread: what was posted since the last call.
    func take() -> [Int] {
        var bytes = [UInt8](repeating: 0, count: 256)
        _ = read(readEnd, &bytes, bytes.count)
        return lock.withLock {
            defer { values.removeAll() }
            return values
        }
    }
}

/// The program's state, touched only on the main thread (GTK's widgets are the same).
var applied: [Int] = []
let inbox = LoopInbox()
let handlerOnMainThread = RaisedFlag()

/// Set when a handler ran on the main thread for a change made elsewhere: the loop owns that thread.
final class RaisedFlag: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var set = false
    func raise() { lock.withLock { set = true } }
    var isRaised: Bool { lock.withLock { set } }
}

let directory = ProcessInfo.processInfo.environment["RVS_PREFS_DIRECTORY"] ?? ""
if directory.isEmpty { fail("set RVS_PREFS_DIRECTORY to a directory of its own") }

let prefs = AppPreferences(key: key)
prefs.watchesExternalChanges = true
// Top-level code is main-actor code: `isolation: nil` and `@Sendable` make the handler run where the change is
// delivered, rather than on the main actor, which this loop never runs.
let token = prefs.observe(\.counter, options: [.new], isolation: nil) { @Sendable _, change in
    if pthread_equal(pthread_self(), mainThread) != 0 { handlerOnMainThread.raise() }
    inbox.post(change.newValue ?? 0)
}

let writer = Process()
writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
writer.arguments = ["writer"]
do { try writer.run() } catch { fail("cannot start the writer: \(error)") }

// The main loop: poll() on the inbox's pipe, as GLib's loop polls its wake-up descriptor.
let deadline = Date().addingTimeInterval(60)
while applied.last != writes {
    var entry = pollfd(fd: inbox.readEnd, events: Int16(POLLIN), revents: 0)
    let ready = poll(&entry, 1, 100)
    if ready < 0, errno != EINTR { fail("poll: \(errno)") }
    if ready > 0 {
        if pthread_equal(pthread_self(), mainThread) == 0 { fail("the loop left the main thread") }
        applied.append(contentsOf: inbox.take())
    }
    if Date() > deadline { fail("the loop was not told of the last write in 60 s: last applied \(applied.last ?? -1)") }
}
writer.waitUntilExit()
if writer.terminationStatus != 0 { fail("the writer failed") }
if handlerOnMainThread.isRaised { fail("a handler ran on the loop's thread for a change made elsewhere") }
if zip(applied, applied.dropFirst()).contains(where: { $0 >= $1 }) { fail("values applied out of order: \(applied)") }
withExtendedLifetime(token) {}
print("ForeignLoop: \(applied.count) changes applied on the main thread's poll() loop, the last \(writes)")
