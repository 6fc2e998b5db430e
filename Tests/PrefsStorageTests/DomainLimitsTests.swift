import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Limits that protect the whole domain")
struct DomainLimitsTests {
    let directory = TemporaryDirectory()

    @Test("A write whose domain file would exceed what a read accepts is refused, naming the size and the limit, and changes nothing")
    func oversizedWriteIsRefused() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "app")
        try domain.modify(repairing: .failIfUnreadable) { $0["other"] = .dictionary(["kept": .integer(1)]) }
        let before = try #require(fileBytes(domain.path))
        do {
            try domain.modify(repairing: .failIfUnreadable) {
                $0["settings"] = .dictionary(["big": .data(Data(count: FileDomainStorage.maximumFileSize))])
            }
            Issue.record("the oversized write succeeded")
        } catch {
            guard case .domainTooLarge(let path, let size, let limit) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == domain.path && size > limit && limit == FileDomainStorage.maximumFileSize)
            #expect(error.description.contains("\(size)") && error.description.contains("\(limit)"))
        }
        #expect(fileBytes(domain.path) == before)
        let reader = try FileDomainStorage(directory: directory.path, name: "app")
        #expect(try reader.snapshot().contents == ["other": .dictionary(["kept": .integer(1)])])
    }

    @Test("A hand-built value nested far deeper than a file may hold is refused by either domain, which keeps what it had",
          arguments: [true, false])
    func overlyNestedValueIsRefused(inMemory: Bool) throws {
        let domain: any DomainStorage = inMemory ? InMemoryDomainStorage() : try FileDomainStorage(directory: directory.path, name: "app")
        try domain.modify(repairing: .failIfUnreadable) { $0["kept"] = .integer(1) }
        // Deep enough that encoding it would overflow the stack, were it not refused first.
        var nested = PropertyListValue.integer(0)
        for _ in 0..<10_000 { nested = .array([nested]) }
        let deep = nested
        #expect {
            try domain.modify(repairing: .failIfUnreadable) { $0["deep"] = deep }
        } throws: { error in
            guard case .valuesNotPlistCompatible(let names)? = error as? PrefsError else { return false }
            return names == ["deep"]
        }
        #expect(try domain.snapshot().contents == ["kept": .integer(1)])
    }

    @Test("An in-memory domain refuses the same oversized write")
    func oversizedInMemoryWriteIsRefused() throws {
        let domain = InMemoryDomainStorage()
        #expect {
            try domain.modify(repairing: .failIfUnreadable) { $0["big"] = .data(Data(count: FileDomainStorage.maximumFileSize)) }
        } throws: { error in
            guard case .domainTooLarge? = error as? PrefsError else { return false }
            return true
        }
        #expect(try domain.snapshot().contents.isEmpty)
    }

    @Test("A repair goes past a dangling symbolic link planted at the name an unreadable file would be kept under")
    func repairSkipsPlantedNames() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "app")
        writeFile(domain.path, Array("not a property list".utf8))
        // Plant dangling links at every name the repair could pick in the next minute (a loaded machine
        // may stall this test for seconds), with and without the first counter suffix.
        let now = Int(Date().timeIntervalSince1970)
        var planted: [String] = []
        for second in now - 1 ... now + 60 {
            for suffix in ["", "-2"] {
                let name = "\(domain.path).unreadable-\(second)\(suffix)"
                #expect(symlink(directory.appending("nowhere"), name) == 0)
                planted.append(name)
            }
        }
        try domain.modify(repairing: .moveUnreadableAside) { $0["settings"] = .dictionary(["a": .integer(1)]) }
        #expect(try domain.snapshot().contents == ["settings": .dictionary(["a": .integer(1)])])
        for name in planted {
            var info = stat()
            #expect(lstat(name, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "\(name) was replaced")
        }
        let keptAside = directory.contents().filter { $0.hasPrefix("app.plist.unreadable-") && $0.hasSuffix("-3") }
        #expect(keptAside.count == 1)
        #expect(keptAside.first.flatMap { fileBytes(directory.appending($0)) } == Array("not a property list".utf8))
    }

    @Test("A failed repair over a directory in the domain file's place puts the directory back")
    func failedRepairOfADirectoryPutsItBack() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "app", durable: false, system: SystemCalls(faults: faults))
        #expect(mkdir(domain.path, 0o700) == 0)
        faults.fail(.write, with: .noSpace)
        #expect(throws: PrefsError.self) { try domain.modify(repairing: .moveUnreadableAside) { $0 = ["k": .string("v")] } }
        var info = stat()
        #expect(lstat(domain.path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR, "the directory was not put back")
        #expect(directory.contents() == ["app.plist", "app.plist.lock"])
    }
}
