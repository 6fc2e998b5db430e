import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("The file-backed defaults domain")
struct FileDomainTests {
    let directory = TemporaryDirectory()

    func domain(_ name: String = "app", in subdirectory: String? = nil) throws -> FileDomainStorage {
        try FileDomainStorage(directory: subdirectory.map(directory.appending) ?? directory.path, name: name)
    }

    @Test("The domain file is a binary property list that Python's plistlib reads")
    func writesBinaryPropertyListsThatPlistlibReads() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) {
            $0["settings"] = .dictionary(["appearance": .string("dark"), "count": .integer(-7), "on": .bool(true)])
        }
        let bytes = try #require(fileBytes(domain.path))
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        let decoded = try python("""
            import plistlib, sys
            d = plistlib.load(open('\(domain.path)', 'rb'))
            s = d['settings']
            print(s['appearance'], s['count'], s['on'] is True, sep=',')
            """)
        #expect(String(decoding: decoded, as: UTF8.self) == "dark,-7,True\n")
    }

    @Test("An XML property list written by another tool is read")
    func readsXMLPropertyLists() throws {
        let domain = try domain()
        _ = try python("""
            import plistlib
            plistlib.dump({'settings': {'appearance': 'light', 'ratio': 1.5, 'flag': False}}, open('\(domain.path)', 'wb'), fmt=plistlib.FMT_XML)
            """)
        let snapshot = try domain.snapshot()
        #expect(snapshot.contents["settings"] == .dictionary(["appearance": .string("light"), "ratio": .real(1.5), "flag": .bool(false)]))
    }

    @Test("Files are created with mode 0600 and directories with mode 0700")
    func createsPrivateFilesAndDirectories() throws {
        let domain = try domain(in: "nested/deeper")
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        #expect(permissions(directory.appending("nested")) == 0o700)
        #expect(permissions(directory.appending("nested/deeper")) == 0o700)
        #expect(permissions(domain.path) == 0o600)
        #expect(permissions(domain.lockPath) == 0o600)
    }

    @Test("A read creates nothing: no directory, no file, no lock file")
    func readsCreateNothing() throws {
        let domain = try domain(in: "not-yet")
        let snapshot = try domain.snapshot()
        #expect(snapshot.contents.isEmpty && !snapshot.exists)
        #expect(directory.contents().isEmpty)
        let existing = try self.domain()
        _ = try existing.snapshot()
        #expect(directory.contents().isEmpty)
    }

    @Test("A modification that changes nothing writes nothing")
    func unchangedContentsAreNotWritten() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { _ in }
        #expect(!FileManager.default.fileExists(atPath: domain.path))
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let before = try FileManager.default.attributesOfItem(atPath: domain.path)[.systemFileNumber] as? Int
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let after = try FileManager.default.attributesOfItem(atPath: domain.path)[.systemFileNumber] as? Int
        #expect(before == after)
    }

    @Test("Other storage keys in the domain are kept by a write", arguments: [RepairPolicy.failIfUnreadable, .moveUnreadableAside])
    func otherStorageKeysSurviveWrites(policy: RepairPolicy) throws {
        let domain = try domain()
        try domain.modify(repairing: policy) { $0["first"] = .integer(1) }
        try domain.modify(repairing: policy) { $0["second"] = .integer(2) }
        try domain.modify(repairing: policy) { $0["first"] = nil }
        #expect(try domain.snapshot().contents == ["second": .integer(2)])
    }

    static let unreadableFiles: [(name: String, bytes: [UInt8])] = [
        ("garbage", Array("this is not a property list at all".utf8)),
        ("truncated XML", Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><stri".utf8)),
        ("array root", Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><array><string>a</string></array></plist>".utf8)),
        ("truncated binary", Array("bplist00\u{D1}\u{01}\u{02}".utf8)),
        ("empty file", []),
    ]

    @Test("An unreadable domain file is reported with its path and never overwritten by a partial write",
          arguments: unreadableFiles.map(\.name))
    func unreadableFilesAreReportedAndKept(name: String) throws {
        let bytes = try #require(Self.unreadableFiles.first { $0.name == name }).bytes
        let domain = try domain()
        writeFile(domain.path, bytes)
        do {
            _ = try domain.snapshot()
            Issue.record("an unreadable file was read")
        } catch {
            guard case .domainUnreadable(let path, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == domain.path)
            #expect(error.description.contains(domain.path))
        }
        #expect(throws: PrefsError.self) {
            try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        }
        #expect(fileBytes(domain.path) == bytes)
    }

    @Test("A deliberate whole replacement moves the unreadable file aside first, never deleting it")
    func repairMovesTheUnreadableFileAside() throws {
        let domain = try domain()
        let garbage = Array("garbage".utf8)
        writeFile(domain.path, garbage)
        try domain.modify(repairing: .moveUnreadableAside) { $0["k"] = .integer(1) }
        #expect(try domain.snapshot().contents == ["k": .integer(1)])
        let aside = try #require(directory.contents().first { $0.hasPrefix("app.plist.unreadable-") })
        #expect(fileBytes(directory.appending(aside)) == garbage)

        writeFile(domain.path, garbage)
        try domain.modify(repairing: .moveUnreadableAside) { $0["k"] = .integer(2) }
        #expect(directory.contents().filter { $0.hasPrefix("app.plist.unreadable-") }.count == 2)
    }

    /// In a child process of its own, so that the memory of tests running meanwhile is not counted.
    @Test("Reading an unchanged unreadable file 100,000 times does not parse it again or grow memory")
    func repeatedReadsOfAnUnreadableFileDoNotGrowMemory() throws {
        let domain = try domain()
        // Truncated XML: the input on which Foundation's parser leaks (about 12 MB per 20,000 parses).
        writeFile(domain.path, Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><date>20".utf8))
        let reader = try ChildProcess.worker("read-repeatedly", directory.path, "app", "-", "100000")
        let report = try #require(reader.readLine(), "worker failed: \(reader.readErrors())")
        #expect(reader.wait() == 0)
        let growth = try #require(Int(report.replacingOccurrences(of: "rss-growth-kb ", with: "")))
        #expect(growth < 2_048, "resident memory grew by \(growth) kB over 100,000 reads")
    }

    @Test("An unreadable file is parsed once, however often it is read, until it changes")
    func unreadableFileIsParsedOnce() throws {
        let domain = try domain()
        writeFile(domain.path, Array("garbage".utf8))
        for _ in 0..<1_000 { _ = try? domain.snapshot() }
        #expect(FileDomainStorage.parseCount(of: domain.path) == 1)
        writeFile(domain.path, Array("other garbage".utf8))
        #expect(throws: PrefsError.self) { try domain.snapshot() }
    }

    @Test("Something other than a regular file where the domain file belongs (a directory, a FIFO) is unreadable, and a read does not hang")
    func nonRegularFilesAreUnreadable() throws {
        let domain = try domain()
        #expect(mkfifo(domain.path, 0o600) == 0)
        #expect(throws: PrefsError.self) { try domain.snapshot() }
        let other = try self.domain("folder")
        try FileManager.default.createDirectory(atPath: other.path, withIntermediateDirectories: false)
        do {
            _ = try other.snapshot()
            Issue.record("a directory was read as a domain")
        } catch {
            guard case .domainUnreadable(let path, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == other.path)
        }
    }

    @Test("A domain whose file is missing costs one stat() a read, not an open(), and a file made later is read")
    func missingFilesCostOneStat() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "absent", durable: false, system: SystemCalls(faults: faults))
        #expect(try domain.snapshot().exists == false)
        faults.clearRecordedCalls()
        #expect(try domain.snapshot().exists == false)
        #expect(faults.recordedCalls.map(\.call) == [.stat])
        #expect(!domain.isKnownToExist)
        try self.domain("absent").modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        #expect(try domain.snapshot().contents == ["k": .integer(1)])
        #expect(domain.isKnownToExist)
    }

    @Test("A write refused because the domain file is a FIFO, or a symbolic link to one, creates nothing: no lock file, no temporary file")
    func refusedWritesCreateNothing() throws {
        for throughLink in [false, true] {
            let name = throughLink ? "linked" : "fifo"
            let domain = try domain(name)
            let fifo = directory.appending("\(name).fifo")
            #expect(mkfifo(throughLink ? fifo : domain.path, 0o600) == 0)
            if throughLink { #expect(symlink(fifo, domain.path) == 0) }
            let before = directory.contents()
            #expect(throws: PrefsError.self) { try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) } }
            #expect(directory.contents() == before, "the refused write left \(Set(directory.contents()).subtracting(before))")
        }
    }

    @Test("A stray temporary file from a killed writer is ignored by readers and replaced by the next writer")
    func strayTemporaryFilesAreIgnored() throws {
        let domain = try domain()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        writeFile(domain.temporaryPath, Array("half a fi".utf8))
        let fresh = try self.domain()
        #expect(try fresh.snapshot().contents == ["k": .integer(1)])
        try fresh.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
        #expect(!FileManager.default.fileExists(atPath: domain.temporaryPath))
        #expect(try domain.snapshot().contents == ["k": .integer(2)])
    }

    @Test("A read sees a write made through another instance of the same file at once")
    func readsAreFreshAcrossInstances() throws {
        let reader = try domain()
        let writer = try domain()
        for round in 0..<200 {
            try writer.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(round) }
            #expect(try reader.snapshot().contents["k"] == .integer(round))
        }
    }

    @Test("Names that are not one file name are unavailable", arguments: ["", ".", "..", "a/b", "../escape", "nul\u{0}byte", String(repeating: "x", count: 250)])
    func unusableNamesAreUnavailable(name: String) throws {
        do {
            _ = try FileDomainStorage(directory: directory.path, name: name)
            Issue.record("accepted the name \(name.debugDescription)")
        } catch {
            guard case .userDefaultsUnavailable = error else { Issue.record("wrong error \(error)"); return }
        }
        #expect(throws: PrefsError.self) { try FileDomainStorage.shared(directory: self.directory.path, name: name) }
        #expect(directory.contents().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: (directory.path as NSString).deletingLastPathComponent + "/escape.plist"))
    }

    @Test("A directory that cannot be created fails the write at the createDirectory step, with its errno")
    func uncreatableDirectoryFailsTheWriteWithItsErrno() throws {
        writeFile(directory.appending("file"), [1])
        let domain = try domain(in: "file/sub")
        do {
            try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
            Issue.record("wrote below a file")
        } catch {
            guard case .writeFailed(let path, .createDirectory(let failed), let errno) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == domain.path && failed == directory.appending("file/sub") && errno == PrefsErrno(rawValue: ENOTDIR))
        }
    }
}
