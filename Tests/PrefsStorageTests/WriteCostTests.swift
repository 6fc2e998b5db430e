import Foundation
import Glibc
import Synchronization
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

// Issue 27, "Costs": what a write does beyond the bare locked rename. Counted in system calls through
// SystemCalls' record, in the events it queues for a watch of its directory, and in what it waits for (the watch
// engine's mutex), never timed.

@Suite("What a write of a file domain costs beyond the bare locked rename")
struct WriteCostTests {
    let directory = TemporaryDirectory()

    @Test("Where the lock file exists, a write reads the domain file once, under the lock (W1), and no refusal leaves a trace")
    func existingLockFileMeansOneRead() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "app", durable: false, system: SystemCalls(faults: faults))
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(0) }
        for round in 1...3 {
            faults.clearRecordedCalls()
            try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(round) }
            let calls = faults.recordedCalls
            let opensOfFile = calls.filter { $0.call == .open && $0.path == domain.path }
            #expect(opensOfFile.count == 1, "the domain file was opened \(opensOfFile.count) times: \(calls.map { "\($0.call.rawValue) \($0.path)" })")
            // The one open is the locked read: after the lock file's flock.
            let flock = try #require(calls.firstIndex { $0.call == .flock })
            let open = try #require(calls.firstIndex { $0.call == .open && $0.path == domain.path })
            #expect(flock < open)
            #expect(try domain.snapshot().contents["k"] == .integer(round))
        }
        // The file made unreadable behind the cache's back: the locked read refuses the write, and nothing new
        // appears beside the lock file that was there.
        writeFile(domain.path, Array("not a property list".utf8))
        let before = directory.contents()
        #expect(throws: PrefsError.self) { try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(9) } }
        #expect(directory.contents() == before)
        #expect(fileBytes(domain.path) == Array("not a property list".utf8))
    }

    @Test("Where the lock file is missing, an unreadable domain file is refused before the lock file or its directory is made")
    func missingLockFileIsCreatedOnlyForWritesThatCanSucceed() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "app")
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        #expect(unlink(domain.lockPath) == 0)
        writeFile(domain.path, Array("damaged".utf8))
        let before = directory.contents()
        #expect(throws: PrefsError.self) { try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) } }
        #expect(directory.contents() == before, "the refused write left \(Set(directory.contents()).subtracting(before))")
        // Repaired deliberately: the lock file is made again, and the write goes through.
        try domain.modify(repairing: .moveUnreadableAside) { $0["k"] = .integer(3) }
        #expect(FileManager.default.fileExists(atPath: domain.lockPath))
        #expect(try domain.snapshot().contents["k"] == .integer(3))
    }

    /// The events queued on a descriptor of its own by what `body` does in the test's directory, watched with `mask`.
    private func events(in path: String, mask: UInt32, during body: () throws -> Void) throws -> [(mask: UInt32, name: String)] {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(inotify >= 0)
        defer { close(inotify) }
        try #require(inotify_add_watch(inotify, path, mask) >= 0)
        try body()
        // A write queues its events before it returns: they are all there to read now.
        var found: [(mask: UInt32, name: String)] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let eventMask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                found.append((eventMask, String(decoding: nameBytes, as: UTF8.self)))
                offset += 16 + length
            }
        }
        return found
    }

    @Test("A write wakes a watch of its domain's directory only for its entries: its temporary file made and renamed over the domain file")
    func writeChangesOnlyEntriesOfTheDirectory() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "app")
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(0) }
        // What the watch engine watches a domain's directory for: the temporary file's writes and close, and the
        // lock file's close, are none of it (the domain file's own inode watch tells of writes in place).
        let seen = try events(in: directory.path, mask: InotifyCalls.directoryMask) {
            try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        }
        let described = seen.map { "\(String($0.mask, radix: 16)) \($0.name)" }
        #expect(seen.count == 3, "\(described)")
        #expect(seen.allSatisfy { $0.mask & UInt32(IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO) != 0 }, "\(described)")
        // (The lock file is opened for writing, which NFS needs of an exclusive lock: its close is an
        // `IN_CLOSE_WRITE`, which the directory's watch does not take.)
        #expect(!seen.contains { $0.name == "app.plist.lock" }, "\(described)")
        #expect(try domain.snapshot().contents["k"] == .integer(1))
    }

    /// Set once, from any thread.
    final class Flag: Sendable {
        let isSet = Atomic<Bool>(false)
    }

    @Test("A write moves its path's generation without waiting for the watch engine's mutex, which the watch thread holds while it applies events")
    func writeDoesNotWaitForTheWatchEngine() throws {
        let engine = WatchEngine()
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "app", durable: false,
                                           system: SystemCalls(faults: faults), freshness: engine)
        let watch = FileWatch(directory: directory.path, fileName: "app.plist", engine: engine) {}
        defer { watch.cancel() }
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(0) }
        #expect(try domain.snapshot().contents["k"] == .integer(0))
        #expect(domain.generation != nil, "the engine does not vouch for the file: nothing here would be proven")
        let countBefore = engine.changeCount
        let held = DispatchSemaphore(value: 0)
        let written = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let waitedInVain = Flag()
        // Right before the write's rename, another thread takes the engine's mutex, as the watch thread does to
        // apply the rename's events, and keeps it until the write returns (or gives up: a write that waits for
        // the mutex returns only then).
        faults.beforeEachCall = { call, _ in
            guard call == .rename else { return }
            Thread.detachNewThread {
                engine.holdingLock {
                    held.signal()
                    if written.wait(timeout: .now() + 20) == .timedOut { waitedInVain.isSet.store(true, ordering: .relaxed) }
                }
                released.signal()
            }
            held.wait()
        }
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let countAfterWrite = engine.changeCount
        faults.beforeEachCall = nil
        written.signal()
        released.wait()
        let waited = waitedInVain.isSet.load(ordering: .relaxed)
        #expect(!waited, "the write waited for the engine's mutex")
        // Moved by the write itself while the mutex was held: no event was applied meanwhile.
        #expect(countAfterWrite != countBefore)
        #expect(try domain.snapshot().contents["k"] == .integer(1))
    }
}
