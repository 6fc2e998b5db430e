import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Hostile files, hostile neighbours and edge values: each test here failed before its fix.
@Suite("Storage under hostile files and edge values", .timeLimit(.minutes(1)))
struct StorageHardeningTests {
    let directory = TemporaryDirectory()
    let faults = FaultInjection()

    func domain(_ name: String = "app") throws -> FileDomainStorage {
        try FileDomainStorage(directory: directory.path, name: name, durable: false, system: SystemCalls(faults: faults))
    }

    @Test("A small file whose references share one large payload many times is refused, not expanded to gigabytes")
    func sharedPayloadBombIsRefused() throws {
        let domain = try domain()
        // plistlib writes equal values once and refers to them: 65,536 references to one 64 KB blob.
        _ = try python("""
            import plistlib
            open('\(domain.path)', 'wb').write(plistlib.dumps({'k': [b'x' * 65536] * 65536}, fmt=plistlib.FMT_BINARY))
            """)
        #expect(try #require(fileBytes(domain.path)).count < 400_000)
        do {
            _ = try domain.snapshot()
            Issue.record("the file was expanded")
        } catch {
            guard case .domainUnreadable = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test("A huge (sparse) domain file is refused before anything is allocated for it")
    func hugeFilesAreRefused() throws {
        let domain = try domain()
        writeFile(domain.path, [])
        #expect(truncate(domain.path, 64 << 30) == 0)
        do {
            _ = try domain.snapshot()
            Issue.record("a 64 GiB file was read")
        } catch {
            guard case .domainUnreadable(_, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(reason.contains("bytes"))
        }
    }

    @Test("A repair whose write fails leaves the unreadable file in place, and no second copy of it")
    func failedRepairLeavesTheFileInPlace() throws {
        let domain = try domain()
        let garbage = Array("garbage".utf8)
        writeFile(domain.path, garbage)
        faults.fail(.write, with: .noSpace)
        #expect(throws: PrefsError.self) { try domain.modify(repairing: .moveUnreadableAside) { $0["k"] = .integer(1) } }
        #expect(fileBytes(domain.path) == garbage)
        #expect(!directory.contents().contains { $0.contains(".unreadable-") })
        // And a repair that succeeds keeps the old bytes under the second name.
        try domain.modify(repairing: .moveUnreadableAside) { $0["k"] = .integer(1) }
        let aside = try #require(directory.contents().first { $0.contains(".unreadable-") })
        #expect(fileBytes(directory.appending(aside)) == garbage)
    }

    @Test("A temporary file planted with other permissions and another owner never becomes the domain file")
    func plantedTemporaryFileIsNotReused() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        writeFile(domain.temporaryPath, Array("planted".utf8))
        #expect(chmod(domain.temporaryPath, 0o666) == 0)
        #expect(chown(domain.temporaryPath, 65534, 65534) == 0)
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
        var info = stat()
        #expect(stat(domain.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_uid == getuid())
    }

    @Test("A change that Swift's == cannot see (0.0 for -0.0, another normalization of a string) is still written")
    func changesInvisibleToEqualityAreWritten() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { $0["real"] = .real(-0.0); $0["text"] = .string("e\u{301}") }
        try domain.modify(repairing: .failIfUnreadable) { $0["real"] = .real(0.0); $0["text"] = .string("\u{e9}") }
        let contents = try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents
        guard case .real(let real) = contents["real"], case .string(let text) = contents["text"] else {
            Issue.record("unexpected contents \(contents)"); return
        }
        #expect(real.sign == .plus)
        #expect(Array(text.unicodeScalars) == ["\u{e9}"])
    }

    @Test("The in-memory domain, too, keeps a change that Swift's == cannot see")
    func inMemoryDomainKeepsChangesInvisibleToEquality() throws {
        let domain = InMemoryDomainStorage()
        try domain.modify(repairing: .failIfUnreadable) { $0["real"] = .real(-0.0) }
        try domain.modify(repairing: .failIfUnreadable) { $0["real"] = .real(0.0) }
        guard case .real(let real) = try domain.snapshot().contents["real"] else { Issue.record("no real"); return }
        #expect(real.sign == .plus)
    }

    @Test("Readers in this process do not wait while a writer waits for another process's lock")
    func readersDoNotWaitBehindALockedWriter() throws {
        let writer = try domain()
        try writer.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        // Another process's lock: an open file description of our own, so flock conflicts with it.
        let foreign = open(writer.lockPath, O_RDWR)
        #expect(foreign >= 0 && flock(foreign, LOCK_EX) == 0)
        faults.clearRecordedCalls()
        let finished = Locked(false)
        let thread = Thread {
            _ = try? writer.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
            finished.withLock { $0 = true }
        }
        thread.start()
        // Wait until the writer has asked for the lock (the call is recorded just before it is made).
        while !faults.recordedCalls.contains(where: { $0.call == .flock }) { sched_yield() }
        #expect(try writer.snapshot().contents["k"] == .integer(1), "a read through the writer's own domain")
        #expect(finished.withLock { $0 } == false)
        close(foreign)  // releases the lock; the writer goes on
        while !finished.withLock({ $0 }) { sched_yield() }
        #expect(try writer.snapshot().contents["k"] == .integer(2))
    }

    @Test("A suite whose writable domain is also its global domain reads and writes without waiting on itself")
    func writableGlobalDomainDoesNotDeadlock() throws {
        let domain = try domain(DefaultsLocations.globalDomainName)
        let suite = DefaultsSuite(persistentDomain: domain, globalDomain: domain, arguments: [])
        // What a subscript write does: modify the collection, consulting the later domains from inside.
        try suite.modifyValue(forKey: "OpenPrefs") { (value: inout PropertyListValue?) throws(PrefsError) in
            let fallback = try suite.startingPoint(forKey: "OpenPrefs")
            #expect(fallback == nil)
            value = .dictionary(["a": .integer(1)])
        }
        #expect(try suite.value(forKey: "OpenPrefs") == .dictionary(["a": .integer(1)]))
        #expect(try suite.propertyListRepresentation().count == 1)
    }
}
