import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Removing a whole domain file")
struct DomainRemovalTests {
    let directory = TemporaryDirectory()

    @Test("removeDomainFile removes the file under the lock, keeps the lock file, and the next read is empty")
    func removalLeavesNoDomain() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "app")
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        _ = try domain.snapshot()
        try domain.removeDomainFile()
        #expect(directory.contents() == ["app.plist.lock"])
        #expect(try domain.snapshot().contents.isEmpty)
        let other = try FileDomainStorage(directory: directory.path, name: "app")
        #expect(try other.snapshot().contents.isEmpty)
    }

    @Test("Removing a domain that does not exist succeeds and creates nothing")
    func removingNothingCreatesNothing() throws {
        let domain = try FileDomainStorage(directory: directory.appending("missing"), name: "app")
        try domain.removeDomainFile()
        #expect(directory.contents().isEmpty)
    }
}
