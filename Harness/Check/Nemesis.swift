// The nemesis of `harness check`: faults on the files the workers share, each bounded in time. Every fault
// but the kill keeps what is stored (the same files, reached by a new path or inode), or, for the write
// through a hard link, makes a write of its own that it records in the history: so the checker can hold the
// library to every promise while the ground moves under it. Faults that move files take the domain's lock
// first, as the library's writers do, so that no acknowledged write is lost by the nemesis itself.

import Foundation
import Glibc
import PrefsHistory
import PrefsTool

/// What the nemesis did and wrote.
final class Nemesis {
    let layout: CheckLayout
    private(set) var counts: [Fault.Kind: Int] = [:]
    private(set) var skipped: [Fault.Kind: Int] = [:]
    private(set) var records: [HistoryRecord] = []
    private var sequence = 0
    private var administratorRound = 0

    init(layout: CheckLayout) { self.layout = layout }

    /// Makes the directories the faults work on; `d1`'s directory is reached through the link.
    func prepare() throws {
        for directory in [layout.preferences, layout.root + "/tA", layout.systemDirectory, layout.managedDirectory, layout.logs, layout.scratch] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: directory == layout.preferences || directory.hasSuffix("/tA") ? 0o700 : 0o755])
        }
        guard symlink("tA", layout.link) == 0 else { throw HarnessError.failure("cannot link \(layout.link): \(String(cString: strerror(errno)))") }
    }

    /// Applies `fault`; `kill` kills a worker (given the fault's choice) and is done by the coordinator.
    func apply(_ fault: Fault) {
        let done: Bool
        switch fault.kind {
        case .recreateDirectory: done = recreateDirectory(holdOpenMicroseconds: UInt32(fault.choice) * 300)
        case .renameOverFile: done = renameOverFile(domain: CheckLayout.domains[fault.choice % 2])
        case .hardLinkWrite: done = hardLinkWrite(entry: ["a", "b", "c"][fault.choice % 3])
        case .retargetSymlink: done = retargetSymlink()
        case .systemFile: done = administratorFile(directory: layout.systemDirectory, entry: CheckLayout.systemEntry, present: fault.choice % 3 != 0)
        case .managedFile: done = administratorFile(directory: layout.managedDirectory, entry: CheckLayout.managedEntry, present: fault.choice % 3 != 0)
        case .killWorker, .killMember, .killTwoMembers, .pauseMember: done = true
        }
        if done { counts[fault.kind, default: 0] += 1 } else { skipped[fault.kind, default: 0] += 1 }
    }

    /// Counts a fault the coordinator made (a kill of a worker, the etcd faults).
    func count(_ kind: Fault.Kind) { counts[kind, default: 0] += 1 }

    // MARK: Locks

    /// Runs `body` holding the library's lock of `domain` (`<file>.lock`, `flock` exclusive), as a writer
    /// does; gives up after 5 s, returning `false`.
    private func withLock(of domain: String, _ body: () -> Bool) -> Bool {
        let lockPath = layout.file(of: domain) + ".lock"
        let deadline = monotonicNow() + 5_000_000_000
        while monotonicNow() < deadline {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard monotonicNow() < deadline else { return false }
                usleep(1_000)
            }
            // The lock guards the file only while it is still the one named by the path.
            var held = stat(), named = stat()
            guard fstat(fd, &held) == 0, stat(lockPath, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev else { continue }
            return body()
        }
        return false
    }

    // MARK: Faults

    /// Exchanges the preferences directory atomically with a new one holding hard links to the same files,
    /// then empties and removes the old one while holding it open for a moment (a process that holds a
    /// descriptor of it, as a watch does).
    private func recreateDirectory(holdOpenMicroseconds: UInt32) -> Bool {
        withLock(of: "d0") {
            let directory = layout.preferences
            let fresh = layout.root + "/prefs.new"
            guard mkdir(fresh, 0o700) == 0 else { return false }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names where link(directory + "/" + name, fresh + "/" + name) != 0 {
                _ = removeTree(fresh)
                return false
            }
            let old = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if old >= 0 { close(old) } }
            guard exchange(fresh, directory) else {
                _ = removeTree(fresh)
                return false
            }
            // `fresh` now names the old directory.
            _ = removeTree(fresh)
            usleep(min(holdOpenMicroseconds, 300_000))
            return true
        }
    }

    /// Renames a copy of the domain file over it: the same bytes under a new inode.
    private func renameOverFile(domain: String) -> Bool {
        withLock(of: domain) {
            let file = layout.file(of: domain)
            guard let data = FileManager.default.contents(atPath: file) else { return false }
            let copy = layout.directory(of: domain) + "/.nemesis-copy"
            guard FileManager.default.createFile(atPath: copy, contents: data, attributes: [.posixPermissions: 0o600]) else { return false }
            return rename(copy, file) == 0
        }
    }

    /// Sets entry `entry` of `d0`'s checked collection in place, through a hard link made elsewhere (no
    /// event in the domain's directory tells of it), and records the write.
    private func hardLinkWrite(entry: String) -> Bool {
        withLock(of: "d0") {
            let file = layout.file(of: "d0")
            guard let data = FileManager.default.contents(atPath: file),
                  var domain = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else { return false }
            sequence += 1
            let value = HistoryRecord.nemesisProcess * 1_000_000_000 + sequence * 10
            var collection = domain[CheckLayout.key] as? [String: Any] ?? [:]
            collection[entry] = value
            domain[CheckLayout.key] = collection
            guard let contents = try? PropertyListSerialization.data(fromPropertyList: domain, format: .binary, options: 0) else { return false }
            let linkPath = layout.scratch + "/hardlink"
            unlink(linkPath)
            guard link(file, linkPath) == 0 else { return false }
            defer { unlink(linkPath) }
            var record = HistoryRecord(process: HistoryRecord.nemesisProcess, sequence: sequence, kind: .write, domain: "d0", key: CheckLayout.key,
                                       entry: entry, value: value, start: monotonicNow(), end: nil, outcome: .unknown)
            let fd = open(linkPath, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return false }
            let written = contents.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            let truncated = written == contents.count && ftruncate(fd, off_t(contents.count)) == 0
            close(fd)
            record.end = monotonicNow()
            // A write that did not finish is of unknown outcome: part of it may be there.
            record.outcome = truncated ? .ok : .unknown
            records.append(record)
            return truncated
        }
    }

    /// Retargets the symbolic link on `d1`'s path to a new directory holding hard links to the same files,
    /// by renaming a new link over it, then empties and removes the old directory.
    private func retargetSymlink() -> Bool {
        withLock(of: "d1") {
            guard let current = try? FileManager.default.destinationOfSymbolicLink(atPath: layout.link) else { return false }
            let next = current == "tA" ? "tB" : "tA"
            let (from, to) = (layout.root + "/" + current, layout.root + "/" + next)
            _ = removeTree(to)
            guard mkdir(to, 0o700) == 0 else { return false }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: from)) ?? [] where link(from + "/" + name, to + "/" + name) != 0 {
                return false
            }
            let newLink = layout.root + "/link.new"
            unlink(newLink)
            guard symlink(next, newLink) == 0, rename(newLink, layout.link) == 0 else { return false }
            _ = removeTree(from)
            return true
        }
    }

    /// Writes (by a rename, as an administrator's tool would) or removes `d0`'s file in `directory`, holding
    /// `entry` of the checked collection with a new value each time.
    private func administratorFile(directory: String, entry: String, present: Bool) -> Bool {
        let file = directory + "/d0.plist"
        guard present else { return unlink(file) == 0 || errno == ENOENT }
        administratorRound += 1
        let domain: [String: Any] = [CheckLayout.key: [entry: administratorRound]]
        guard let data = try? PropertyListSerialization.data(fromPropertyList: domain, format: .binary, options: 0) else { return false }
        let temporary = directory + "/.d0.plist.new"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o644]) else { return false }
        return rename(temporary, file) == 0
    }

    // MARK: Reading what is stored, without the library

    /// The domain file at `path` parsed by Foundation: `nil` when there is none, a failure when it does not parse.
    static func parse(_ path: String) -> Result<[String: Any]?, ParseFailure> {
        guard let data = FileManager.default.contents(atPath: path) else { return .success(nil) }
        do {
            guard let domain = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
                return .failure(ParseFailure(reason: "the root is not a dictionary (\(data.count) bytes)"))
            }
            return .success(domain)
        } catch {
            return .failure(ParseFailure(reason: "\(error) (\(data.count) bytes)"))
        }
    }

    struct ParseFailure: Error { let reason: String }

    // MARK: Helpers

    /// `renameat2(RENAME_EXCHANGE)`: swaps two paths atomically, so that the directory's path never names nothing.
    private func exchange(_ first: String, _ second: String) -> Bool {
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return false }
        let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
        return renameat2(AT_FDCWD, first, AT_FDCWD, second, 2 /* RENAME_EXCHANGE */) == 0
    }

    private func removeTree(_ path: String) -> Bool {
        (try? FileManager.default.removeItem(atPath: path)) != nil
    }
}
