import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

// Issue 27, "Costs": what a write does beyond the bare locked rename. Counted in system calls through
// SystemCalls' record, never timed.

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
}
