import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Failed system calls: reported at once, and the previous file intact")
struct FailureInjectionTests {
    let directory = TemporaryDirectory()
    let faults = FaultInjection()

    func domain(durable: Bool = false) throws -> FileDomainStorage {
        try FileDomainStorage(directory: directory.path, name: "app", durable: durable, system: SystemCalls(faults: faults))
    }

    /// Every step of a write at which a full disk, a permission problem or a read-only file system can
    /// strike, with the path the fault is aimed at.
    static let writeSteps: [(call: SystemCall, path: String)] = [
        (.open, ".plist.tmp"), (.write, ".plist.tmp"), (.fsync, ".plist.tmp"), (.close, ".plist.tmp"),
        (.rename, "app.plist"), (.open, ".plist.lock"), (.flock, ".plist.lock"),
    ]

    static let cases: [(SystemCall, String, PrefsErrno)] = writeSteps.flatMap { step in
        [PrefsErrno.noSpace, .permissionDenied, .readOnlyFileSystem, .ioError].map { (step.call, step.path, $0) }
    }

    @Test("A write failing at any step is reported synchronously and leaves the previous file byte for byte",
          arguments: cases)
    func failedWritesLeaveThePreviousFile(call: SystemCall, path: String, errno: PrefsErrno) throws {
        let domain = try domain(durable: true)
        try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["v": .integer(1)]) }
        let before = try #require(fileBytes(domain.path))

        faults.fail(call, with: errno, pathContaining: path)
        do {
            try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["v": .integer(2)]) }
            Issue.record("the write succeeded despite \(errno) in \(call)")
        } catch {
            guard case .writeFailed(let failedPath, _, let reported) = error else { Issue.record("wrong error \(error)"); return }
            #expect(failedPath == domain.path)
            #expect(reported == errno)
        }
        #expect(fileBytes(domain.path) == before)
        #expect(!FileManager.default.fileExists(atPath: domain.temporaryPath), "the temporary file was left behind")
        #expect(try domain.snapshot().contents["settings"] == .dictionary(["v": .integer(1)]))
        // The failure is not sticky: the next write goes through.
        try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["v": .integer(3)]) }
        #expect(try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents["settings"] == .dictionary(["v": .integer(3)]))
    }

    @Test("A write that fails before the file exists creates no domain file")
    func failedFirstWriteCreatesNoFile() throws {
        let domain = try domain()
        faults.fail(.write, with: .noSpace)
        #expect(throws: PrefsError.self) { try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) } }
        #expect(!FileManager.default.fileExists(atPath: domain.path))
        #expect(!FileManager.default.fileExists(atPath: domain.temporaryPath))
    }

    @Test("Interrupted system calls (EINTR) are retried, and the operation succeeds", arguments: SystemCall.allCases.filter { $0 != .close && !SystemCall.watchEngineCalls.contains($0) })
    func interruptedCallsAreRetried(call: SystemCall) throws {
        let domain = try domain(durable: true)
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        faults.fail(call, with: .interrupted, times: 3)
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
        #expect(try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents["k"] == .integer(2))
    }

    @Test("A failed read (EIO, EACCES) is reported with the file's path and the failed call",
          arguments: [(SystemCall.open, PrefsErrno.permissionDenied), (.read, .ioError), (.stat, .ioError)])
    func failedReadsAreReported(call: SystemCall, errno: PrefsErrno) throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let fresh = try FileDomainStorage(directory: directory.path, name: "app", durable: false, system: SystemCalls(faults: faults))
        if call == .stat {
            // A reader stats only to validate a cache of a file that is no longer recent.
            try waitUntilNotRecent(domain.path)
            _ = try fresh.snapshot()
        }
        faults.fail(call, with: errno, pathContaining: "app.plist")
        do {
            _ = try fresh.snapshot()
            Issue.record("the read succeeded")
        } catch {
            guard case .readFailed(let path, let step, let reported) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == domain.path && step.description == call.rawValue && reported == errno)
        }
    }

    @Test("A failed fsync of the directory in durable mode is reported, and says the new contents are already in place")
    func failedDirectorySyncIsReportedHonestly() throws {
        let domain = try domain(durable: true)
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        faults.fail(.fsync, with: .ioError, skip: 1)  // the file's fsync passes, the directory's fails
        do {
            try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
            Issue.record("the failed directory fsync was not reported")
        } catch {
            #expect(error.description.contains("new contents are in place"))
            #expect(!error.description.contains("previous file is unchanged"))
        }
        #expect(try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents["k"] == .integer(2))
    }

    @Test("Durable mode fsyncs the temporary file before the rename, and the directory after it")
    func durableModeSyncsFileAndDirectory() throws {
        let domain = try domain(durable: true)
        faults.clearRecordedCalls()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let calls = faults.recordedCalls
        let fileSync = try #require(calls.firstIndex { $0.call == .fsync && $0.path == domain.temporaryPath })
        let rename = try #require(calls.firstIndex { $0.call == .rename })
        let directorySync = try #require(calls.firstIndex { $0.call == .fsync && $0.path == directory.path })
        #expect(fileSync < rename && rename < directorySync)

        let ordinary = try FileDomainStorage(directory: directory.path, name: "other", durable: false, system: SystemCalls(faults: faults))
        faults.clearRecordedCalls()
        try ordinary.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        #expect(!faults.recordedCalls.contains { $0.call == .fsync })
    }

    @Test("An unchanged file costs one stat() per read, and no open or read")
    func unchangedFileCostsOneStat() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        // Let the file's change time age past the window in which a same-tick rewrite is possible.
        let aged = timespec(tv_sec: time(nil) - 60, tv_nsec: 0)
        _ = [aged, aged].withUnsafeBufferPointer { utimensat(AT_FDCWD, domain.path, $0.baseAddress, 0) }
        let reader = try FileDomainStorage(directory: directory.path, name: "app", durable: false, system: SystemCalls(faults: faults))
        _ = try reader.snapshot()
        _ = try reader.snapshot()  // the change time of utimensat is recent; the second read confirms the bytes
        try waitUntilNotRecent(domain.path)
        _ = try reader.snapshot()
        faults.clearRecordedCalls()
        for _ in 0..<10 { _ = try reader.snapshot() }
        #expect(faults.recordedCalls.map(\.call) == Array(repeating: .stat, count: 10))
    }
}

/// Waits until a file's change time is older than the window in which the cache distrusts it.
/// Polls the clock against the file's own timestamp: there is no event to wait on for time passing.
func waitUntilNotRecent(_ path: String) throws {
    var info = stat()
    guard stat(path, &info) == 0 else { throw PrefsErrno(rawValue: errno) }
    while FileIdentity(info).isRecent { usleep(10_000) }
}

@Suite("Failed system calls reach the ownership checks of a forced file")
struct OwnershipCheckFaultTests {
    let directory = TemporaryDirectory()
    let faults = FaultInjection()

    /// Each call the check of a forced file makes, and the path the fault is aimed at (`nil`: the file's own).
    static let checks: [(SystemCall, String?)] = [(.stat, nil), (.realpath, nil), (.lstat, "")]

    @Test("A forced file whose ownership check fails at stat, realpath or lstat is ignored, naming the call's failure; it is honoured once the check succeeds",
          arguments: checks)
    func failedOwnershipCheckIgnoresTheFileUntilItSucceeds(call: SystemCall, aim: String?) throws {
        let writer = try FileDomainStorage(directory: directory.path, name: "managed", durable: false)
        try writer.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["forced": .integer(1)]) }
        let file = try FileDomainStorage(directory: directory.path, name: "managed", durable: false, system: SystemCalls(faults: faults))
        let managed = AdministratorDomainStorage.shared(file, verifiesOwnership: true)
        // `lstat` is aimed at the file's directory, the first directory on its resolved path; the others at the file.
        faults.fail(call, with: .permissionDenied, pathContaining: aim == nil ? file.path : directory.path)
        do {
            _ = try managed.snapshot()
            Issue.record("a forced file was honoured although its \(call) check failed")
        } catch {
            guard case .administratorFileIgnored(let path, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == file.path)
            #expect(reason.contains(PrefsErrno.permissionDenied.description), "the reason: \(reason)")
        }
        #expect(faults.recordedCalls.contains { $0.call == call }, "the check did not go through SystemCalls")
        let snapshot = try managed.snapshot()
        #expect(snapshot.contents["settings"] == .dictionary(["forced": .integer(1)]))
    }
}
