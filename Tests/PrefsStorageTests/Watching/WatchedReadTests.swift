import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Reads validated by the process's inotify watch instead of a `stat()` (issue 14, goal 2).
@Suite("Reads validated by a watch of the domain's directory")
struct WatchedReadTests {
    let directory = TemporaryDirectory()

    private func value(_ domain: FileDomainStorage, _ key: String = "settings") throws -> PropertyListValue? {
        try domain.snapshot().contents[key]?.dictionaryValue?["value"]
    }

    private func write(_ domain: FileDomainStorage, _ value: Int, key: String = "settings") throws {
        try domain.modify(repairing: .failIfUnreadable) { $0[key] = .dictionary(["value": .integer(value)]) }
    }

    @Test("While the process watches the directory, reads of an unchanged domain make no system call but one ioctl")
    func unchangedReadsNeedNoStat() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "fast", durable: false, system: SystemCalls(faults: faults))
        try write(domain, 1)
        let watch = domain.watch {}
        #expect(try value(domain) == .integer(1))
        faults.clearRecordedCalls()
        for _ in 0..<100 { #expect(try value(domain) == .integer(1)) }
        #expect(faults.recordedCalls.isEmpty)
        // Another writer (another instance, as another process would be): the next read sees it.
        try write(try FileDomainStorage(directory: directory.path, name: "fast"), 2)
        #expect(try value(domain) == .integer(2))
        watch.cancel()
        // Without the watch, reads are validated with system calls again (a stat(), or a re-read of a
        // file changed so recently that its timestamps cannot tell).
        faults.clearRecordedCalls()
        #expect(try value(domain) == .integer(2))
        #expect(!faults.recordedCalls.isEmpty)
    }

    @Test("Where events are incomplete (forced, as on NFS), reads keep validating with stat()")
    func untrustedWatchesDoNotValidate() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "nfs", durable: false, system: SystemCalls(faults: faults))
        try write(domain, 1)
        let watch = FileWatch(directory: directory.path, fileName: "nfs.plist", fallback: .eventsIncomplete) {}
        #expect(try value(domain) == .integer(1))
        faults.clearRecordedCalls()
        #expect(try value(domain) == .integer(1))
        #expect(!faults.recordedCalls.isEmpty)
        watch.cancel()
    }

    @Test("After the kernel's event queue overflowed, losing the domain's own event, the next read is fresh")
    func overflowInvalidatesEverything() throws {
        // In a worker process of its own: an overflow makes every watched domain of the process re-read,
        // which would break the other tests' count of system calls.
        // The worker holds the hub's lock, so its watch thread cannot drain, while a flood fills the queue
        // past its limit (/proc/sys/fs/inotify/max_queued_events, 16,384 by default); the event of the
        // domain's write, made last, is lost, and only the overflow is queued.
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384
        let floodDirectory = directory.appending("flood")
        try FileManager.default.createDirectory(atPath: floodDirectory, withIntermediateDirectories: true)
        let worker = try ChildProcess.worker("overflow-read", directory.path, "shared", "settings", "\(limit + 1_000)", floodDirectory)
        #expect(worker.readLine() == "value=2")
        #expect(worker.wait() == 0)
    }

    @Test("After an overflow that lost the move of the domain's directory, reads follow the new directory, and see a later write")
    func overflowResolvesPathsAgain() async throws {
        try await onOwnThread {
            let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384
            // Two events a flood file (made, removed): enough to overflow the queue.
            let worker = try ChildProcess.worker("overflow-moved-read", directory.path, "d", "k", "\((limit + 1_000) / 2)")
            let line = worker.readLine()
            #expect(worker.wait() == 0, "\(worker.readErrors())")
            #expect(line == "overflow=integer(2),integer(2) later=integer(3),integer(3)")
        }
    }
}
