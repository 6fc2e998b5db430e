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
/// object watches its file for as long as the process lives once a suite has read it three times (one inotify
/// watch chain, waiting at the nearest directory that exists; before, every read looks), and a read that last found no file, or found it already checked, trusts that while the
/// watch has told of nothing since. Where the file's directory exists, the watch vouches for reads as it
/// does for any domain file (one `ioctl` a read, and fresh: pending events are taken first). Where the
/// directory does not exist (most machines), nothing is read: a directory and file made later are seen by
/// the next read, since their events, queued before `mkdir` returns, move the count of changes the watch
/// engine took for the file (where only polling serves, within ``DomainWatching/pollingInterval``).
package final class AdministratorDomainStorage: DomainStorage, EpochVouchedStorage {
    /// The file, read as any domain file is (cached, validated by the process's watch where it has one).
    package let file: FileDomainStorage
    /// Whether the file's owner and mode must prove that only root or this user could have written it.
    package let verifiesOwnership: Bool
    /// Bumped by the watch's handler whenever the file, or the path to it, may have changed.
    private let changes = Atomic<UInt64>(0)
    /// What the last read found that may be trusted while `changes` is unchanged: that there was no file,
    /// or that the file's owner and mode passed the checks.
    private let trusted = PrefsMutex<(token: FreshnessToken?, changes: UInt64, missing: Bool, ownershipChecked: Bool)?>(nil)
    private let watch = PrefsMutex<(any DomainChangeWatch)?>(nil)
    /// The count of changes told, plus one, while a missing file is trusted on that count alone (its
    /// directory does not exist, so no token vouches): what the common read checks with no lock. 0: none.
    private let missingAtChanges = Atomic<UInt64>(0)
    /// Whether the last read threw: what it found is then never kept by a suite.
    private let lastReadFailed = Atomic<Bool>(false)

    package init(_ file: FileDomainStorage, verifiesOwnership: Bool) {
        self.file = file
        self.verifiesOwnership = verifiesOwnership
    }

    /// Starts the watch that lets reads trust what they found, once; until then every read checks the file.
    /// The engine's mutex is taken under `watch`'s, which nothing takes under the engine's.
    private func startWatching() {
        watch.withLock { watch in
            guard watch == nil else { return }
            watch = file.watchChanges { [weak self] in
                // Invariant F6: every change moves the epoch (here, the watch's call).
                self?.changes.add(1, ordering: .releasing)
                // After the count: a suite's read kept from before is found again, and sees it.
                ReadEpoch.advance()
            }
        }
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
        do {
            let snapshot = try read()
            if lastReadFailed.load(ordering: .relaxed) { lastReadFailed.store(false, ordering: .releasing) }
            return snapshot
        } catch {
            lastReadFailed.store(true, ordering: .releasing)
            throw error
        }
    }

    private func read() throws(PrefsError) -> DomainSnapshot {
        // The common case on most machines: no such directory, nothing heard since. A few atomic loads.
        if let seenFirst = changesSeen(), missingAtChanges.load(ordering: .acquiring) == seenFirst &+ 1,
           file.freshnessToken == nil {
            return .missing
        }
        // Both taken before the file is looked at: a change after this point makes them differ next time.
        // The token, where the watch vouches, is fresh (pending events first); the count of changes told
        // serves where it cannot (a directory that does not exist yet).
        // A system file found last time needs no token of its own: its read below validates itself.
        // Invariant F5: evidence before the read.
        let needsToken = verifiesOwnership || trusted.withLock { $0?.missing ?? true }
        let token = needsToken ? file.freshnessToken : nil
        let seen = changesSeen()
        let watched = watch.withLock { $0 != nil }
        let trust = watched ? trusted.withLock { current -> (token: FreshnessToken?, changes: UInt64, missing: Bool, ownershipChecked: Bool)? in
            guard let current else { return nil }
            let unchanged = token != nil ? current.token == token : (current.token == nil && seen != nil && current.changes == seen)
            return unchanged ? current : nil
        } : nil
        if trust?.missing == true { return .missing }
        let snapshot: DomainSnapshot
        do {
            snapshot = try file.snapshot()
        } catch {
            switch error {
            case .domainUnreadable(_, let reason): throw .administratorFileIgnored(path: file.path, reason: reason)
            case .readFailed(_, let step, let errno):
                throw .administratorFileIgnored(path: file.path, reason: "\(step) failed: \(errno)")
            default: throw error
            }
        }
        // Checked only where there is something to honour: a missing file forces nothing.
        if verifiesOwnership && snapshot.exists && trust?.ownershipChecked != true {
            if let problem = ownershipProblem() { throw .administratorFileIgnored(path: file.path, reason: problem) }
        }
        if watched {
            trusted.withLock { $0 = (token, seen ?? 0, !snapshot.exists, snapshot.exists && verifiesOwnership) }
            let trustedMissing = token == nil && !snapshot.exists ? seen.map { $0 &+ 1 } : nil
            missingAtChanges.store(trustedMissing ?? 0, ordering: .releasing)
        }
        return snapshot
    }

    /// The changes that may concern the file so far: those the watch engine took, pending ones first,
    /// which a directory made an instant before has already moved (its event is queued before `mkdir`
    /// returns), and those its watch told (polling, where events cannot serve).
    /// `nil` while no watch's events would reach the file (it could not be placed, or must poll): a missing
    /// file is then looked for again at every read, since a count that cannot move proves nothing.
    private func changesSeen() -> UInt64? {
        // Invariant F8: counted only while covered (a missing file is trusted on this count).
        guard let count = file.changeCount else { return nil }
        return count &+ changes.load(ordering: .acquiring)
    }

    /// Whether the last read stays current until the ``ReadEpoch`` moves: a file known missing from a
    /// directory that does not exist (its watch's handler moves the epoch), or a file whose reads the
    /// process's watch engine vouches for.
    package var isVouchedByEpoch: Bool {
        // A file that could not be used may be usable at the next read without any event (an ownership
        // check that could not be made): not kept. Nor is a file another engine than the process's tracks.
        guard file.trackedByProcessEngine, !lastReadFailed.load(ordering: .acquiring),
              watch.withLock({ $0 != nil }) else { return false }
        guard let seen = changesSeen() else { return false }
        if missingAtChanges.load(ordering: .acquiring) == seen &+ 1, file.freshnessToken == nil { return true }
        guard let token = file.freshnessToken else { return false }
        if trusted.withLock({ $0?.token == token && $0?.missing == true }) { return true }
        return file.isVouchedByEpoch
    }

    /// Starts its watch, at the third read of a suite that consults it (see ``DefaultsSuite``): a process
    /// that reads once never watches the administrators' directories.
    package func startVouching() { startWatching() }

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
