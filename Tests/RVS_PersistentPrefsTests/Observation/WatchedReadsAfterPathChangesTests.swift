import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Reads validated by the watch must never be stale when the path to the domain file leads elsewhere than
/// when the watch was made, or when the file is reachable (and changed) through another directory.
@Suite("Watched reads after the path to the domain file changed", .serialized)
struct WatchedReadsAfterPathChangesTests {
    let directory = TemporaryDirectory()

    private func prefs(_ directory: String) throws -> TrackedPrefs {
        TrackedPrefs(suite: DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory, name: "tracked"), arguments: ["p"]))
    }

    @Test("a read after a parent of the watched directory was moved away and re-created is fresh, and a write keeps the other's write",
          arguments: ["parent", "\u{301}parent"])  // the second begins with a combining mark: one Character with the slash before it
    func parentMovedAndRecreated(parentName: String) throws {
        let parent = directory.path + "/" + parentName
        let prefsDir = parent + "/prefs"
        let a = try prefs(prefsDir)
        a.volume = 1
        a.watchesExternalChanges = true
        #expect(a.volume == 1)
        #expect(a.volume == 1)
        #expect(rename(parent, directory.path + "/parent-old") == 0)
        let b = try prefs(prefsDir)
        b.volume = 2
        #expect(a.volume == 2, "stale read served from the watch-validated cache")
        a.userName = "from a"
        #expect(a.lastError == nil)
        let onDisk = try FileDomainStorage(directory: prefsDir, name: "tracked").snapshot().contents["settings"]
        #expect(onDisk?.dictionaryValue?["volume"] == .integer(2), "the other's write was lost: \(String(describing: onDisk))")
        // Watching still serves: a later change in the re-created directory is read too.
        b.volume = 3
        #expect(a.volume == 3)
    }

    @Test("a read through a symbolic link to a directory that is retargeted is fresh")
    func symlinkedDirectoryRetargeted() throws {
        let one = directory.path + "/one", two = directory.path + "/two", link = directory.path + "/link"
        let first = try prefs(one), second = try prefs(two)
        first.volume = 1
        second.volume = 2
        #expect(symlink(one, link) == 0)
        let a = try prefs(link)
        a.watchesExternalChanges = true
        #expect(a.volume == 1)
        #expect(a.volume == 1)
        #expect(unlink(link) == 0)
        #expect(symlink(two, link) == 0)
        #expect(a.volume == 2, "stale read after the link was retargeted")
        second.volume = 3
        #expect(a.volume == 3)
    }

    @Test("a domain file that is a symbolic link, changed through its target's directory, reads fresh")
    func symlinkedDomainFile() throws {
        let realDir = directory.path + "/real", linkDir = directory.path + "/link"
        let b = try prefs(realDir)
        b.volume = 1
        #expect(mkdir(linkDir, 0o700) == 0)
        #expect(symlink(realDir + "/tracked.plist", linkDir + "/tracked.plist") == 0)
        let a = try prefs(linkDir)
        a.watchesExternalChanges = true
        #expect(a.volume == 1)
        #expect(a.volume == 1)
        b.volume = 2
        #expect(a.volume == 2, "stale read served from the watch-validated cache")
    }

    @Test("a domain file with a second hard link, rewritten in place through it, reads fresh")
    func hardLinkedDomainFile() throws {
        let realDir = directory.path + "/real", otherDir = directory.path + "/other"
        let b = try prefs(realDir)
        b.volume = 1
        #expect(mkdir(otherDir, 0o700) == 0)
        #expect(link(realDir + "/tracked.plist", otherDir + "/tracked.plist") == 0)
        let a = try prefs(realDir)
        a.watchesExternalChanges = true
        #expect(a.volume == 1)
        #expect(a.volume == 1)
        // Rewrite the shared inode in place through the other name: the event lands in the other directory.
        let c = try prefs(directory.path + "/scratch")
        c.volume = 22
        let bytes = fileBytes(directory.path + "/scratch/tracked.plist") ?? []
        let fd = open(otherDir + "/tracked.plist", O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(a.volume == 22, "stale read served from the watch-validated cache")
    }
}
