import Glibc
import PrefsPropertyList
import Synchronization

/// A domain file an administrator keeps: the system-wide defaults of a domain, or the entries an
/// administrator forces (see <doc:Administration>). Read-only: the library never writes, repairs or
/// moves such a file, and reports what is wrong with it as
/// ``PrefsError/administratorFileIgnored(path:reason:)``.
///
/// A forced (managed) file is honoured only while it and its directory (what the directory resolves to,
/// when it is a symbolic link) belong to root or to this process's user and are writable by nobody
/// else, and so does every directory on the file's resolved path (writable by others only with the sticky
/// bit): otherwise anyone could force settings on the user.
///
/// Every read of every collection consults these files, and most machines have none of them. So each
/// object watches its file once a suite has read it three times (one inotify watch chain, shared with every
/// other watch of the path, waiting at the nearest directory that exists; before, every read looks), and a
/// read that last found no file, or found it already checked, trusts that while the file's generation stands
/// (see ``DomainStorage/generation``): a directory and file made later move it, since their events are
/// queued before `mkdir` returns and taken before the generation is compared (where only polling serves,
/// there is no generation, and every read looks).
package final class AdministratorDomainStorage: DomainStorage, VouchingStorage {
    /// The file, read as any domain file is (cached, validated by the process's watch where it has one).
    package let file: FileDomainStorage
    /// Whether the file's owner and mode must prove that only root or this user could have written it.
    package let verifiesOwnership: Bool
    /// What the last read found, kept while the file's generation stands: the generation (shifted left by
    /// one) and whether the file was missing (the low bit); 0 when the last read kept nothing (it failed, or
    /// no generation vouched for it). One value, so that two reads racing never pair one's generation with
    /// the other's finding. A file kept at a generation that verifies ownership passed the checks at it.
    private let kept = Atomic<UInt64>(0)

    package init(_ file: FileDomainStorage, verifiesOwnership: Bool) {
        self.file = file
        self.verifiesOwnership = verifiesOwnership
    }

    private static let registry = PrefsMutex<[ObjectIdentifier: AdministratorDomainStorage]>([:])
    private static let verifyingRegistry = PrefsMutex<[ObjectIdentifier: AdministratorDomainStorage]>([:])

    /// One object per file and per kind: a managed directory that is also a system directory still has its
    /// files' ownership checked when they are read as managed.

    /// The process-wide object for `file` (itself shared per path) and kind, so that suites over the same
    /// administrator's files are one suite.
    package static func shared(_ file: FileDomainStorage, verifiesOwnership: Bool) -> AdministratorDomainStorage {
        verifiesOwnership ? shared(file, verifiesOwnership: true, in: verifyingRegistry) : shared(file, verifiesOwnership: false, in: registry)
    }

    private static func shared(_ file: FileDomainStorage, verifiesOwnership: Bool,
                               in registry: borrowing PrefsMutex<[ObjectIdentifier: AdministratorDomainStorage]>) -> AdministratorDomainStorage {
        registry.withLock { domains in
            if let existing = domains[ObjectIdentifier(file)] { return existing }
            let domain = AdministratorDomainStorage(file, verifiesOwnership: verifiesOwnership)
            domains[ObjectIdentifier(file)] = domain
            return domain
        }
    }

    package var location: String { file.path }

    /// The file's contents; a file that cannot be used throws
    /// ``PrefsError/administratorFileIgnored(path:reason:)``, which the search list reports and skips.
    package func snapshot() throws(PrefsError) -> DomainSnapshot {
        // The common case on most machines: no such file, nothing heard since. One `ioctl` at most.
        let before = kept.load(ordering: .acquiring)
        if before & 1 == 1, let generation = file.generation, generation == before >> 1 { return .missing }
        do {
            let (snapshot, generation) = try read(ownershipCheckedAt: before >> 1)
            kept.store(generation.map { $0 << 1 | (snapshot.exists ? 0 : 1) } ?? 0, ordering: .releasing)
            return snapshot
        } catch {
            // A file that could not be used may be usable at the next read without any event (an ownership
            // check that could not be made): nothing is kept.
            kept.store(0, ordering: .releasing)
            throw error
        }
    }

    /// Reads the file, checks its ownership unless it was checked at the generation it is read at, and
    /// returns the generation the read stays true at, if any.
    private func read(ownershipCheckedAt checked: UInt64) throws(PrefsError) -> (DomainSnapshot, UInt64?) {
        let snapshot: DomainSnapshot
        let generation: UInt64?
        do {
            // Together: the generation this very read is current at (taken before it, Invariant F5), never one
            // another thread's read recorded meanwhile.
            (snapshot, generation) = try file.snapshotAndGeneration()
        } catch {
            switch error {
            case .domainUnreadable(_, let reason): throw .administratorFileIgnored(path: file.path, reason: reason)
            case .readFailed(_, let step, let errno):
                throw .administratorFileIgnored(path: file.path, reason: "\(step) failed: \(errno)")
            default: throw error
            }
        }
        // Checked only where there is something to honour: a missing file forces nothing. A check made after
        // the generation was taken sees every change made before it; one made later to the file, its directory or
        // a directory above moves the generation (the file's inode watch, and each directory's parent's watch, take
        // mode and owner changes: `InotifyCalls.ancestorMask`).
        if verifiesOwnership && snapshot.exists && (generation == nil || generation != checked) {
            if let problem = ownershipProblem() { throw .administratorFileIgnored(path: file.path, reason: problem) }
        }
        return (snapshot, generation)
    }

    /// The file's generation, while the last read stays true at it (it succeeded, the ownership checks
    /// passed, and the file's generation has not moved since); `nil` otherwise.
    package var generation: UInt64? {
        // Invariant F6: a source reports a generation only for what it would return again.
        let kept = kept.load(ordering: .acquiring)
        guard kept != 0, let generation = file.generation, generation == kept >> 1 else { return nil }
        return generation
    }

    /// Starts the watch of its file, at the third read of a suite that consults it (see ``DefaultsSuite``):
    /// a process that reads once never watches the administrators' directories.
    package func startVouching() { file.startVouching() }

    /// Its file's engine.
    package var watchEngine: WatchEngine? { file.watchEngine }

    /// Why the file, or a directory on the way to it, could have been changed by someone other than root or
    /// this user.
    ///
    /// The file and its directory (each as `stat` resolves it) must belong to root or this user and be
    /// writable by nobody else. So must every directory on the file's resolved path (`realpath`, every
    /// symbolic link followed): a link into a directory others may write lets them replace or delete what
    /// it points to. Those ancestors may be writable by others only with the sticky bit (as `/tmp` is),
    /// which keeps others from renaming or deleting entries they do not own.
    private func ownershipProblem() -> String? {
        let user = getuid()
        // Through the file's system calls, so that a test can make any of these checks fail.
        let system = file.system
        for (path, what) in [(file.directory, "its directory"), (file.path, "the file")] {
            // `stat` follows symbolic links: a linked directory or file is judged by what it resolves to.
            let info: stat
            do { info = try system.stat(path) } catch { return "\(what) cannot be checked: \(error)" }
            if let problem = Self.ownerProblem(info, user: user, what: what) { return problem }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
                return "\(what) is writable by its group or by others (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
        }
        let target: String
        do { target = try system.realpath(file.path) } catch {
            return "the file's resolved path cannot be found: \(error)"
        }
        var directory = target
        while directory != "/" {
            directory = Self.parent(of: directory)
            let what = "\(directory), a directory on the path to \(target)"
            let info: stat
            do { info = try system.lstat(directory) } catch { return "\(what), cannot be checked: \(error)" }
            if let problem = Self.ownerProblem(info, user: user, what: what) { return problem }
            // Group or others may write only a sticky directory, whose entries they cannot rename or remove.
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && info.st_mode & S_ISVTX == 0 {
                return "\(what), is writable by its group or by others without the sticky bit (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
        }
        // The file itself, resolved: the checks above followed the link with `stat`, and so judged it already.
        return nil
    }

    /// Why `info`'s owner could not be trusted: anyone but root and this process's user.
    private static func ownerProblem(_ info: stat, user: uid_t, what: String) -> String? {
        guard info.st_uid != 0 && info.st_uid != user else { return nil }
        return "\(what) belongs to user \(info.st_uid), neither root nor this process's user (\(user))"
    }

    /// The directory holding `path`, an absolute path with no trailing slash (`/` for a top-level entry).
    private static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Never written: refused as an unavailable domain.
    @discardableResult
    package func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        throw .userDefaultsUnavailable(reason: "\(file.path) is kept by the administrator and is read-only")
    }

    /// An administrator's change is heard as any change of a watched file is.
    package func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        file.watchChanges(onChange)
    }
}
