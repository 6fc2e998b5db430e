import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Scripted file-system sequences (SPEC §10), each step named, against a watch engine of the test's own: a
/// suite over a user's, a system and a managed domain, each three directories deep, watched (its third read
/// starts the watches) and kept (its reads after that are served while every domain's generation stands).
/// After every step a read must return what the files hold, and a write of another entry to the user's
/// domain must keep what another program wrote just before it.
@Suite("Scripted file-system sequences: after every step a read returns what the files hold, and no write loses another's change")
struct FileSystemSequenceTests {
    enum Layer: String, CaseIterable, Sendable { case user, system, managed }

    let base = TemporaryDirectory()
    let engine = WatchEngine()
    /// Counts the values written, so that every step writes something new.
    private final class Serial: @unchecked Sendable { var value = 0 }
    private let serial = Serial()

    /// A layer's three directories, top down: `<base>/<layer>`, `…/a`, `…/a/prefs`.
    func levels(_ layer: Layer) -> [String] {
        let top = base.appending(layer.rawValue)
        return [top, top + "/a", top + "/a/prefs"]
    }

    func directory(_ layer: Layer) -> String { levels(layer)[2] }
    func file(_ layer: Layer) -> String { directory(layer) + "/app.plist" }

    /// The suite, its user domain, and the watches its third read started (kept alive by the domains).
    struct World {
        let suite: DefaultsSuite
        let user: FileDomainStorage
    }

    private func makeWorld() throws -> World {
        let domain = { (layer: Layer) throws -> FileDomainStorage in
            try FileDomainStorage(directory: directory(layer), name: "app", durable: false, system: .live, freshness: engine)
        }
        let user = try domain(.user)
        let suite = DefaultsSuite(persistentDomain: user, globalDomain: nil,
                                  systemDomains: [AdministratorDomainStorage(try domain(.system), verifiesOwnership: false)],
                                  managedDomains: [AdministratorDomainStorage(try domain(.managed), verifiesOwnership: true)],
                                  argumentDomain: [:])
        return World(suite: suite, user: user)
    }

    // MARK: Files

    /// The next value to write.
    private func next() -> Int {
        serial.value += 1
        return serial.value
    }

    /// The bytes of a domain file whose collection `c` holds the layer's own entry and a shared one.
    private func contents(_ layer: Layer, _ value: Int, extra: [String: PropertyListValue] = [:]) throws -> [UInt8] {
        var entries: [String: PropertyListValue] = [layer.rawValue: .integer(value), "shared": .string("\(layer.rawValue)-\(value)")]
        entries.merge(extra) { _, new in new }
        return try DomainLimits.encoded(["c": .dictionary(entries)], location: "test")
    }

    /// Writes `path` as a program that does not use the library would: a new file renamed over it.
    private func renameOver(_ path: String, _ bytes: [UInt8]) {
        let temporary = path + ".other-program"
        writeFile(temporary, bytes)
        #expect(rename(temporary, path) == 0, "rename over \(path): \(String(cString: strerror(errno)))")
    }

    /// Makes the directories of `layer` that are missing (0700) and renames a new file into place.
    private func install(_ layer: Layer, _ value: Int) throws {
        for level in levels(layer) where !FileManager.default.fileExists(atPath: level) { #expect(mkdir(level, 0o700) == 0) }
        renameOver(file(layer), try contents(layer, value))
    }

    /// The collection `c` of a layer's file as the disk holds it now, read by no engine's domain.
    private func onDisk(_ layer: Layer) -> [String: PropertyListValue]? {
        guard let bytes = fileBytes(file(layer)), let parsed = try? FileDomainStorage.parse(bytes, path: file(layer)),
              case .dictionary(let entries)? = parsed.contents["c"] else { return nil }
        return entries
    }

    /// What a read must return: the managed entries over the user's over the system's, entry by entry.
    private func expected() -> PropertyListValue? {
        let layers = [Layer.system, .user, .managed].compactMap(onDisk)
        guard !layers.isEmpty else { return nil }
        return .dictionary(layers.reduce(into: [:]) { merged, entries in merged.merge(entries) { _, new in new } })
    }

    /// Reads `c` through the suite twice (the second may be served from what the first kept): both must be what
    /// the files hold. Then another program changes the user's file and the suite's user domain writes another
    /// entry: both must be on disk.
    private func check(_ world: World, after step: String) throws {
        let want = expected()
        for read in 1...2 {
            var problems: [PrefsError] = []
            let found = try world.suite.find("c", collection: true, problems: &problems)
            #expect(problems.isEmpty, "after \(step): read \(read) reported \(problems)")
            #expect(found?.value == want, "after \(step): read \(read) returned \(String(describing: found?.value)), the files hold \(String(describing: want))")
        }
        // Where the step left no directory for the user's domain, there is nothing to write over.
        guard FileManager.default.fileExists(atPath: directory(.user)) else { return }
        let (theirs, mine) = (next(), next())
        var user = onDisk(.user) ?? [:]
        user["theirs"] = .integer(theirs)
        renameOver(file(.user), try DomainLimits.encoded(["c": .dictionary(user)], location: "test"))
        try world.user.modify(repairing: .failIfUnreadable) { contents in
            var entries: [String: PropertyListValue] = [:]
            if case .dictionary(let stored)? = contents["c"] { entries = stored }
            entries["mine"] = .integer(mine)
            contents["c"] = .dictionary(entries)
        }
        let stored = onDisk(.user)
        #expect(stored?["mine"] == .integer(mine), "after \(step): the write is not on disk: \(String(describing: stored))")
        #expect(stored?["theirs"] == .integer(theirs),
                "after \(step): the write put an old collection back over another program's change: \(String(describing: stored))")
        let afterWrite = expected()
        var problems: [PrefsError] = []
        #expect(try world.suite.find("c", collection: true, problems: &problems)?.value == afterWrite,
                "after \(step) and a write: the read is stale")
    }

    /// Three reads start the watches; a fourth is served from what the third kept.
    private func settle(_ world: World) throws {
        for _ in 0..<4 {
            var problems: [PrefsError] = []
            _ = try world.suite.find("c", collection: true, problems: &problems)
        }
    }

    // MARK: Sequences

    @Test("Every directory on the path removed and made again, directly, within one drain of events, and while another process holds the old one open",
          arguments: Layer.allCases)
    func directoriesMadeAgain(layer: Layer) throws {
        for layer in Layer.allCases { try install(layer, next()) }
        let world = try makeWorld()
        try settle(world)
        try check(world, after: "the first reads")
        for (depth, level) in levels(layer).enumerated() {
            let name = "\(layer)'s level \(depth + 1) (\(level.dropFirst(base.path.count)))"

            try FileManager.default.removeItem(atPath: level)
            try check(world, after: "\(name) removed")
            try install(layer, next())
            try check(world, after: "\(name) made again with a new file")

            let value = next()
            try engine.holdingLock {
                try FileManager.default.removeItem(atPath: level)
                try install(layer, value)
            }
            try check(world, after: "\(name) removed and made again within one drain")

            let holder = try HeldDirectoryTests.Holder(level)
            try FileManager.default.removeItem(atPath: level)
            try install(layer, next())
            try check(world, after: "\(name) removed and made again while another process holds the old one open")
            renameOver(file(layer), try contents(layer, next()))
            try check(world, after: "\(name) made again while held, then its file replaced")
            holder.release()
            try check(world, after: "\(name) made again while held, the old one released")
        }
    }

    @Test("Renames over the file and over the directory, a hard link made after a read, and symbolic links retargeted (file and parent)",
          arguments: Layer.allCases)
    func renamesAndLinks(layer: Layer) throws {
        for layer in Layer.allCases { try install(layer, next()) }
        let world = try makeWorld()
        try settle(world)
        let directory = directory(layer), file = file(layer)

        renameOver(file, try contents(layer, next()))
        try check(world, after: "a new file renamed over \(layer)'s file")

        // Over a directory: the old one emptied, a prepared one renamed over it.
        let prepared = base.appending("prepared-\(layer)")
        #expect(mkdir(prepared, 0o700) == 0)
        renameOver(prepared + "/app.plist", try contents(layer, next()))
        for entry in try FileManager.default.contentsOfDirectory(atPath: directory) { #expect(unlink(directory + "/" + entry) == 0) }
        #expect(rename(prepared, directory) == 0, "rename over \(directory): \(String(cString: strerror(errno)))")
        try check(world, after: "a prepared directory renamed over \(layer)'s directory")

        // A second name made after a read, the file then rewritten in place through it.
        let linked = base.appending("link-\(layer).plist")
        #expect(link(file, linked) == 0)
        try check(world, after: "a hard link to \(layer)'s file made")
        let bytes = try contents(layer, next())
        let descriptor = open(linked, O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0)
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        close(descriptor)
        try check(world, after: "\(layer)'s file rewritten in place through its hard link")
        #expect(unlink(linked) == 0)
        try check(world, after: "the hard link to \(layer)'s file removed")

        // The parent a symbolic link, retargeted by a rename over it.
        let (first, second) = (base.appending("first-\(layer)"), base.appending("second-\(layer)"))
        for target in [first, second] {
            #expect(mkdir(target, 0o700) == 0)
            renameOver(target + "/app.plist", try contents(layer, next()))
        }
        try FileManager.default.removeItem(atPath: directory)
        #expect(symlink(first, directory) == 0)
        try check(world, after: "\(layer)'s directory replaced by a symbolic link")
        #expect(symlink(second, directory + ".new") == 0)
        #expect(rename(directory + ".new", directory) == 0)
        try check(world, after: "the symbolic link that is \(layer)'s directory retargeted")
        renameOver(second + "/app.plist", try contents(layer, next()))
        try check(world, after: "a file renamed into the symbolic link's new target")

        // The file a symbolic link, retargeted.
        #expect(unlink(directory) == 0)
        #expect(mkdir(directory, 0o700) == 0)
        #expect(symlink(first + "/app.plist", file) == 0)
        try check(world, after: "\(layer)'s file replaced by a symbolic link")
        #expect(symlink(second + "/app.plist", file + ".new") == 0)
        #expect(rename(file + ".new", file) == 0)
        try check(world, after: "the symbolic link that is \(layer)'s file retargeted")
        renameOver(second + "/app.plist", try contents(layer, next()))
        try check(world, after: "the symbolic link's target replaced in its own directory")
        #expect(unlink(file) == 0)
        renameOver(file, try contents(layer, next()))
        try check(world, after: "\(layer)'s file a regular file again")
    }

    @Test("After the event queue overflowed, losing the change's own event, reads return what the files hold",
          arguments: Layer.allCases)
    func overflow(layer: Layer) async throws {
        try await onOwnThread {
            for layer in Layer.allCases { try install(layer, next()) }
            let world = try makeWorld()
            try settle(world)
            let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384
            let value = next()
            // The engine cannot drain while its lock is held: a flood of two events a file fills the queue past its
            // limit, and the change made last is lost, only the overflow queued.
            try engine.holdingLock {
                let flood = directory(layer) + "/flood"
                for index in 0..<((limit + 1_000) / 2) {
                    let descriptor = open(flood + "\(index)", O_CREAT | O_WRONLY, 0o600)
                    close(descriptor)
                    unlink(flood + "\(index)")
                }
                renameOver(file(layer), try contents(layer, value))
            }
            try check(world, after: "the event queue overflowed, \(layer)'s change lost")
        }
    }

    @Test("After a bind mount over a directory on the path, present before the watch began, is unmounted, reads return what the directory under it holds",
          .enabled(if: HeldDirectoryTests.canBindMount, "needs to make bind mounts (root, outside a locked-down container)"),
          arguments: Layer.allCases)
    func unmountedBindMount(layer: Layer) throws {
        for layer in Layer.allCases { try install(layer, next()) }
        // Over the middle level: what the mount holds hides the layer's own directory and file.
        let covered = levels(layer)[1]
        let mounted = base.appending("mounted-\(layer)")
        #expect(mkdir(mounted, 0o700) == 0)
        #expect(mkdir(mounted + "/prefs", 0o700) == 0)
        renameOver(mounted + "/prefs/app.plist", try contents(layer, next()))
        #expect(mount(mounted, covered, nil, UInt(MS_BIND), nil) == 0)
        var isMounted = true
        defer { if isMounted { _ = umount2(covered, Int32(MNT_DETACH)) } }
        let world = try makeWorld()
        try settle(world)
        try check(world, after: "the first reads through the bind mount over \(layer)'s level 2")
        isMounted = !HeldDirectoryTests.unmount(covered)
        #expect(!isMounted, "the unmount failed")
        try check(world, after: "the bind mount over \(layer)'s level 2 unmounted")
        renameOver(file(layer), try contents(layer, next()))
        try check(world, after: "a new file renamed over \(layer)'s file once the mount is gone")
    }
}
