import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// A rewrite keeps the file's mode and owner (SPEC §12, issue 29 §2): an administrator's `chmod 644` of a
/// system-wide file, or a user's file written by root, must outlive the next write. New files stay private.
@Suite("Modes and owners of domain files across writes")
struct FileModeTests {
    let directory = TemporaryDirectory()

    private func write(_ domain: FileDomainStorage, _ value: Int) throws {
        try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .integer(value) }
    }

    private func owner(_ path: String) -> (uid: uid_t, gid: gid_t) {
        var info = stat()
        #expect(stat(path, &info) == 0)
        return (info.st_uid, info.st_gid)
    }

    @Test("A new domain file is 0600 in a directory made 0700")
    func newFileIsPrivate() throws {
        let domain = try FileDomainStorage(directory: directory.appending("made"), name: "fresh")
        try write(domain, 1)
        #expect(permissions(directory.appending("made")) == 0o700)
        #expect(permissions(domain.path) == 0o600)
        #expect(owner(domain.path).uid == geteuid())
        try write(domain, 2)
        #expect(permissions(domain.path) == 0o600)
    }

    @Test("A file made 0644 by hand stays 0644 after a write, and its new contents are in place")
    func writeKeepsWiderMode() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "shared")
        try write(domain, 1)
        #expect(chmod(domain.path, 0o644) == 0)
        try write(domain, 2)
        #expect(permissions(domain.path) == 0o644)
        #expect(try FileDomainStorage(directory: directory.path, name: "shared").snapshot().contents["settings"] == .integer(2))
        // A narrower mode is kept as well.
        #expect(chmod(domain.path, 0o400) == 0)
        try write(domain, 3)
        #expect(permissions(domain.path) == 0o400)
    }

    @Test("A file with set-user-ID and sticky bits keeps only its permission bits after a write")
    func writeDropsSpecialBits() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "special")
        try write(domain, 1)
        #expect(chmod(domain.path, 0o4644 | 0o1000) == 0)
        try write(domain, 2)
        #expect(permissions(domain.path) == 0o644)
    }

    @Test("Written by root, a file owned by another user keeps its owner and group", .enabled(if: geteuid() == 0, "needs root to own a file as another user"))
    func rootKeepsOwner() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "users")
        try write(domain, 1)
        #expect(chown(domain.path, 65534, 65534) == 0)
        #expect(chmod(domain.path, 0o640) == 0)
        try write(domain, 2)
        #expect(owner(domain.path).uid == 65534)
        #expect(owner(domain.path).gid == 65534)
        #expect(permissions(domain.path) == 0o640)
        #expect(try FileDomainStorage(directory: directory.path, name: "users").snapshot().contents["settings"] == .integer(2))
    }

    @Test("Where the owner cannot be kept (EPERM, as for a user writing another's file through its group), the file becomes the writer's in the old group",
          .enabled(if: geteuid() == 0, "needs root to own a file as another user"))
    func ownerNotPermittedKeepsGroup() throws {
        let faults = FaultInjection()
        let domain = try FileDomainStorage(directory: directory.path, name: "group", durable: false, system: SystemCalls(faults: faults))
        try write(domain, 1)
        #expect(chown(domain.path, 65534, 65534) == 0)
        #expect(chmod(domain.path, 0o660) == 0)
        faults.fail(.fchown, with: PrefsErrno(rawValue: EPERM))
        try write(domain, 2)
        #expect(owner(domain.path).uid == geteuid())
        #expect(owner(domain.path).gid == 65534)
        #expect(permissions(domain.path) == 0o660)
    }
}
