import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Changes the preferences directory itself never tells of (SPEC §10, "Events the directory itself never
/// sends"): a directory removed while something holds it open (a descriptor, a process's working
/// directory) sends nothing of its own until the last reference goes, and an unmounted bind mount sends
/// nothing at all. Neither may make a read stale, and no write may put an old collection back over another
/// process's change (Invariant W1: a write never trusts the watch).
///
/// Each test drives a watch engine of its own, so that no other test's events vouch for or disturb it.
@Suite("Reads and writes after the directory was made again while held, or unmounted")
struct HeldDirectoryTests {
    let base = TemporaryDirectory()
    let engine = WatchEngine()

    /// The preferences directory, made with mode 0700.
    var directory: String { base.appending("prefs") }

    /// Holds a directory open twice over until `release()`: by a descriptor of this process, and as the working
    /// directory of a child shell waiting on its standard input.
    final class Holder {
        let descriptor: Int32
        let shell: ChildProcess

        init(_ path: String) throws {
            descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            shell = try ChildProcess("/bin/sh", ["-c", "cd \"$1\" && echo held && read line", "sh", path])
            #expect(descriptor >= 0)
            #expect(shell.readLine() == "held")
        }

        func release() {
            close(descriptor)
            shell.closeInput()
            shell.wait()
        }
    }

    /// A file domain of `directory` whose reads this test's engine vouches for, with the watch that lets it.
    private func watchedDomain(_ name: String = "d") throws -> (FileDomainStorage, FileWatch) {
        let domain = try FileDomainStorage(directory: directory, name: name, durable: false, system: .live, freshness: engine)
        let watch = FileWatch(directory: directory, fileName: name + ".plist", engine: engine) {}
        return (domain, watch)
    }

    /// Replaces the domain file as a program that does not use the library would: a new file renamed over it.
    private func renameOver(_ name: String, _ contents: [String: PropertyListValue]) throws {
        let bytes = try DomainLimits.encoded(contents, location: directory)
        let temporary = directory + "/." + name + ".other"
        writeFile(temporary, bytes)
        #expect(rename(temporary, directory + "/" + name + ".plist") == 0)
    }

    /// What the file holds now, read by a domain object of no engine's (its own `stat()` and read).
    private func onDisk(_ name: String = "d") throws -> [String: PropertyListValue] {
        let bytes = fileBytes(directory + "/" + name + ".plist") ?? []
        return try FileDomainStorage.parse(bytes, path: name).contents
    }

    /// Removes the preferences directory and everything in it, and makes it again, empty, mode 0700.
    private func removeAndMakeAgain() throws {
        try FileManager.default.removeItem(atPath: directory)
        #expect(mkdir(directory, 0o700) == 0)
    }

    /// A watch that misses everything: its token never moves, whatever happens to the file.
    final class BlindFreshness: ReadFreshness, FreshnessTracker {
        func tracker(directory: String, fileName: String) -> any FreshnessTracker { self }
        func currentGeneration() -> (value: UInt64, vouchesContents: Bool)? { (1, true) }
        func changedHere() {}
    }

    @Test("A write re-reads the file it rewrites even when the watch vouches for a stale cache (Invariant W1)")
    func writeNeverTrustsTheWatch() throws {
        #expect(mkdir(directory, 0o700) == 0)
        let domain = try FileDomainStorage(directory: directory, name: "d", durable: false, system: .live, freshness: BlindFreshness())
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(0) }
        #expect(try domain.snapshot().contents["mine"] == .integer(0))
        try renameOver("d", ["mine": .integer(0), "theirs": .integer(1)])
        // The premise: the blind watch keeps vouching for what the domain read before.
        #expect(try domain.snapshot().contents["theirs"] == nil)
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(1) }
        let stored = try onDisk()
        #expect(stored["theirs"] == .integer(1), "the write put the cached collection back over another program's change")
        #expect(stored["mine"] == .integer(1))
        // A write that changes nothing writes nothing, and what it read is what reads see.
        try domain.modify(repairing: .failIfUnreadable) { _ in }
        #expect(try domain.snapshot().contents["theirs"] == .integer(1))
    }

    @Test("A read after the directory was removed and made again while held returns what the new file holds")
    func readSeesFileInDirectoryMadeAgainWhileHeld() throws {
        try expectFreshReadsAfterHeldRemake { try $0() }
    }

    @Test("A read after the directory was removed and made again while held, within one drain of events, returns what the new file holds")
    func readSeesDirectoryMadeAgainWithinOneDrain() throws {
        // The engine's mutex held: the watch thread drains nothing until all of it is done.
        try expectFreshReadsAfterHeldRemake { remake in try engine.holdingLock { try remake() } }
    }

    /// Reads the domain, holds its directory, removes and makes it again and renames a new file into it (the
    /// two steps run by `around`), then expects every read to return what the file holds, round after round.
    private func expectFreshReadsAfterHeldRemake(around: (() throws -> Void) throws -> Void) throws {
        #expect(mkdir(directory, 0o700) == 0)
        let (domain, watch) = try watchedDomain()
        defer { watch.cancel() }
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(0) }
        #expect(try domain.snapshot().contents["mine"] == .integer(0))
        #expect(try domain.snapshot().contents["mine"] == .integer(0))
        let holder = try Holder(directory)
        defer { holder.release() }
        try around {
            try removeAndMakeAgain()
            try renameOver("d", ["theirs": .integer(1)])
        }
        #expect(try domain.snapshot().contents["theirs"] == .integer(1))
        for round in 2...5 {
            try renameOver("d", ["theirs": .integer(round)])
            #expect(try domain.snapshot().contents["theirs"] == .integer(round), "stale read in round \(round)")
        }
    }

    @Test("A write after the directory was removed and made again while held keeps what another program renamed into place")
    func writeKeepsRenamedChangeAfterHeldRemake() throws {
        #expect(mkdir(directory, 0o700) == 0)
        let (domain, watch) = try watchedDomain()
        defer { watch.cancel() }
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(0) }
        #expect(try domain.snapshot().contents["mine"] == .integer(0))
        #expect(try domain.snapshot().contents["mine"] == .integer(0))
        let holder = try Holder(directory)
        defer { holder.release() }
        try removeAndMakeAgain()
        try renameOver("d", ["mine": .integer(0), "theirs": .integer(1)])
        // The removal of the old file was an event: this read finds the new one, and the watch vouches again.
        #expect(try domain.snapshot().contents["theirs"] == .integer(1))
        try renameOver("d", ["mine": .integer(0), "theirs": .integer(2)])
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(1) }
        let stored = try onDisk()
        #expect(stored["theirs"] == .integer(2), "the other program's change was written over")
        #expect(stored["mine"] == .integer(1))
    }

    @Test("A write of another entry after the directory was made again while held keeps what another process wrote through the library")
    func writeKeepsWorkerChangeAfterHeldRemake() throws {
        #expect(mkdir(directory, 0o700) == 0)
        let (domain, watch) = try watchedDomain()
        defer { watch.cancel() }
        let key = "settings"
        try domain.modify(repairing: .failIfUnreadable) { $0[key] = .dictionary(["volume": .integer(0)]) }
        #expect(try domain.snapshot().contents[key] != nil)
        #expect(try domain.snapshot().contents[key] != nil)
        let holder = try Holder(directory)
        defer { holder.release() }
        try removeAndMakeAgain()
        let worker = try ChildProcess.worker("serve-entries", directory, "d", key)
        defer {
            worker.closeInput()
            worker.wait()
        }
        worker.send("count 1")
        #expect(worker.readLine() == "done count 1")
        #expect(try domain.snapshot().contents[key]?.dictionaryValue?["count"] == .integer(1))
        worker.send("count 2")
        #expect(worker.readLine() == "done count 2")
        // Another entry of the same collection, as a subscript write changes it: re-read under the lock.
        try domain.modify(repairing: .failIfUnreadable) { contents in
            var collection = contents[key]?.dictionaryValue ?? [:]
            collection["volume"] = .integer(7)
            contents[key] = .dictionary(collection)
        }
        let stored = try onDisk()[key]?.dictionaryValue ?? [:]
        #expect(stored["count"] == .integer(2), "the other process's change was written over")
        #expect(stored["volume"] == .integer(7))
    }

    /// Whether this process may make and remove bind mounts (root, with the capability, outside a locked-down
    /// container): found by trying once, on directories of its own.
    static let canBindMount: Bool = {
        let scratch = TemporaryDirectory()
        let (source, target) = (scratch.appending("source"), scratch.appending("target"))
        guard mkdir(source, 0o700) == 0, mkdir(target, 0o700) == 0 else { return false }
        guard mount(source, target, nil, UInt(MS_BIND), nil) == 0 else { return false }
        return unmount(target)
    }()

    /// Unmounts `target`, as an administrator's `umount` does; when another process holds a directory under it
    /// at that moment (`EBUSY`: a `find` or an indexer walking `/tmp`), as `umount -l` does, which uncovers the
    /// path at once all the same. Either way the mount table changes and the path leads to what the mount hid,
    /// which is what the tests that call this check. When this process holds something under it (a descriptor
    /// or its working directory), the unmount fails: the library must never keep an administrator from
    /// unmounting.
    static func unmount(_ target: String) -> Bool {
        if umount2(target, 0) == 0 { return true }
        guard errno == EBUSY, !heldByThisProcess(target) else { return false }
        return umount2(target, Int32(MNT_DETACH)) == 0
    }

    /// Whether one of this process's descriptors, or its working directory, is `target` or under it.
    private static func heldByThisProcess(_ target: String) -> Bool {
        let links = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).map { "/proc/self/fd/" + $0 }
        return (links + ["/proc/self/cwd"]).contains { link in
            guard let place = try? FileManager.default.destinationOfSymbolicLink(atPath: link) else { return false }
            return place == target || place.hasPrefix(target + "/")
        }
    }

    @Test("After a bind mount over the directory, present before the watch began, is unmounted, reads return what the directory under it holds, and a write keeps it",
          .enabled(if: canBindMount, "needs to make bind mounts (root, outside a locked-down container)"))
    func unmountedBindMount() throws {
        #expect(mkdir(directory, 0o700) == 0)
        // The directory's own file, which the mount will hide.
        try renameOver("d", ["layer": .string("under")])
        let mounted = base.appending("mounted")
        #expect(mkdir(mounted, 0o700) == 0)
        #expect(mount(mounted, directory, nil, UInt(MS_BIND), nil) == 0)
        var isMounted = true
        defer { if isMounted { _ = umount2(directory, Int32(MNT_DETACH)) } }
        try renameOver("d", ["layer": .string("mounted")])
        let (domain, watch) = try watchedDomain()
        defer { watch.cancel() }
        #expect(try domain.snapshot().contents["layer"] == .string("mounted"))
        #expect(try domain.snapshot().contents["layer"] == .string("mounted"))
        isMounted = !Self.unmount(directory)
        #expect(!isMounted, "the unmount failed")
        #expect(try domain.snapshot().contents["layer"] == .string("under"), "stale read after the unmount")
        try renameOver("d", ["layer": .string("under"), "theirs": .integer(2)])
        #expect(try domain.snapshot().contents["theirs"] == .integer(2), "stale read after a write under the unmounted directory")
        try renameOver("d", ["layer": .string("under"), "theirs": .integer(3)])
        try domain.modify(repairing: .failIfUnreadable) { $0["mine"] = .integer(1) }
        let stored = try onDisk()
        #expect(stored["theirs"] == .integer(3), "the write put the cached collection back over another program's change")
        #expect(stored["mine"] == .integer(1))
    }
}
