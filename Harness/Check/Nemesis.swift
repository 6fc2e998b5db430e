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
    /// What the nemesis did, one line each, with its start and end on the history's clock (milliseconds, as
    /// the anomalies' slices print them): kept as faults.txt beside a kept history, to read an anomaly by.
    private(set) var journal: [String] = []
    private var sequence = 0
    private var administratorRound = 0
    /// The bind mount in place, if any.
    private(set) var bindMount: BindMount?
    /// Why bind mounts cannot be made on this machine (not root, or no private mount namespace), once known.
    private(set) var bindMountRefusal: String?
    private var bindMountSequence = 0

    /// A bind mount of `source` over `target`, a directory on `domain`'s path, to be unmounted at `until`
    /// seconds of the run; `covered` is a descriptor of the directory it covers, opened before the mount, through
    /// which the files written meanwhile are linked back.
    struct BindMount {
        let domain: String
        let target: String
        let source: String
        let covered: Int32
        let until: Double
    }

    /// A nemesis over `layout`. Bind mounts are made only when `mounts` is `nil`; otherwise it says why not
    /// (each planned one is then counted as skipped).
    init(layout: CheckLayout, mountsRefused mounts: String? = nil) {
        self.layout = layout
        bindMountRefusal = mounts
    }

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
        let begin = monotonicNow()
        defer { note("\(fault.kind.rawValue) (choice \(fault.choice))", since: begin) }
        let done: Bool
        switch fault.kind {
        case .recreateDirectory:
            // A mount point cannot be renamed: the mount over it ends first (early).
            if bindMount?.domain == "d0" { unmount() }
            done = recreateDirectory(holdOpenMicroseconds: UInt32(fault.choice) * 300)
        case .renameOverFile: done = renameOverFile(domain: CheckLayout.domains[fault.choice % 2])
        case .hardLinkWrite: done = hardLinkWrite(entry: ["a", "b", "c"][fault.choice % 3])
        case .retargetSymlink:
            if bindMount?.domain == "d1" { unmount() }
            done = retargetSymlink()
        case .bindMount:
            // One mount at a time: one in place ends first.
            if bindMount != nil { unmount() }
            // Held 0.3 to 2.2 s; the one made before the workers start, until 0.5 to 2.4 s into the run.
            done = mountOver(domain: CheckLayout.domains[fault.choice % 2], until: fault.time + (fault.beforeStart ? 0.5 : 0.3) + Double(fault.choice % 20) / 10)
        case .systemFile: done = administratorFile(directory: layout.systemDirectory, entry: CheckLayout.systemEntry, present: fault.choice % 3 != 0)
        case .managedFile: done = administratorFile(directory: layout.managedDirectory, entry: CheckLayout.managedEntry, present: fault.choice % 3 != 0)
        case .killWorker, .killMember, .killTwoMembers, .pauseMember, .partitionMember: done = true
        }
        if done { counts[fault.kind, default: 0] += 1 } else { skipped[fault.kind, default: 0] += 1 }
    }

    /// Counts a fault the coordinator made (a kill of a worker, the etcd faults).
    func count(_ kind: Fault.Kind) { counts[kind, default: 0] += 1 }

    /// Adds a line to the journal: `what`, from `begin` to now.
    func note(_ what: String, since begin: UInt64) {
        journal.append(String(format: "[%.3f–%.3f] ", Double(begin) / 1e6, Double(monotonicNow()) / 1e6) + what)
    }

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
            // link(2) does not cross mounts: under a bind mount, the same file is linked from the mounted directory.
            let named = bindMount?.domain == "d0" ? bindMount!.source + "/d0.plist" : file
            guard link(named, linkPath) == 0 else { return false }
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

    /// Makes a new directory holding hard links to the files of the directory on `domain`'s path, and bind
    /// mounts it over that directory, holding the domain's lock (so no write is under way: the files seen
    /// through the mount are those stored).
    private func mountOver(domain: String, until: Double) -> Bool {
        guard bindMountRefusal == nil else { return false }
        return withLock(of: domain) {
            let target: String
            if domain == "d0" {
                target = layout.preferences
            } else {
                guard let current = try? FileManager.default.destinationOfSymbolicLink(atPath: layout.link) else { return false }
                target = layout.root + "/" + current
            }
            bindMountSequence += 1
            let source = layout.root + "/bind\(bindMountSequence)"
            guard mkdir(source, 0o700) == 0 else { return false }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: target)) ?? [] where link(target + "/" + name, source + "/" + name) != 0 {
                _ = removeTree(source)
                return false
            }
            let covered = open(target, 0o10_000_000 /* O_PATH */ | O_DIRECTORY | O_CLOEXEC)
            guard covered >= 0 else {
                _ = removeTree(source)
                return false
            }
            guard CheckIsolation.mount(source, target, flags: 4096 /* MS_BIND */) else {
                let reason = String(cString: strerror(errno))
                if errno == EPERM || errno == EACCES { bindMountRefusal = "mount(2) refused: \(reason)" }
                close(covered)
                _ = removeTree(source)
                return false
            }
            bindMount = BindMount(domain: domain, target: target, source: source, covered: covered, until: until)
            journal.append("  mounted \(source) over \(target)")
            return true
        }
    }

    /// Ends the bind mount in place, if any: holding the domain's lock, links the files of the mounted
    /// directory back into the covered one (renamed over what it holds, what it no longer holds removed), then
    /// unmounts lazily (a process that holds a descriptor in the mounted directory keeps it), and removes the
    /// mounted directory. Bounded by the lock's 5 s; the unmount is made even without the lock.
    func unmount() {
        guard let mount = bindMount else { return }
        bindMount = nil
        let begin = monotonicNow()
        defer { note("unmounted \(mount.target) (mounted from \(mount.source))", since: begin) }
        defer { close(mount.covered) }
        var unmounted = false
        _ = withLock(of: mount.domain) {
            let names = Set((try? FileManager.default.contentsOfDirectory(atPath: mount.source)) ?? [])
            for name in names {
                var mounted = stat(), covered = stat()
                guard stat(mount.source + "/" + name, &mounted) == 0 else { continue }
                if fstatat(mount.covered, name, &covered, AT_SYMLINK_NOFOLLOW) == 0, covered.st_ino == mounted.st_ino { continue }
                unlinkat(mount.covered, ".nemesis-link", 0)
                if linkat(AT_FDCWD, mount.source + "/" + name, mount.covered, ".nemesis-link", 0) == 0 {
                    renameat(mount.covered, ".nemesis-link", mount.covered, name)
                }
            }
            let coveredNames = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd/\(mount.covered)")) ?? []
            for name in coveredNames where !names.contains(name) { unlinkat(mount.covered, name, 0) }
            // Still holding the lock: a writer waiting for it would otherwise write into the mounted directory
            // after the last link back, and its acknowledged write would vanish with the mount.
            unmounted = CheckIsolation.unmountLazily(mount.target)
            return true
        }
        if !unmounted { _ = CheckIsolation.unmountLazily(mount.target) }
        _ = removeTree(mount.source)
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
