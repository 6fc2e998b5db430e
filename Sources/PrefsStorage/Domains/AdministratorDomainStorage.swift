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
/// else: otherwise anyone could force settings on the user.
package final class AdministratorDomainStorage: DomainStorage {
    /// The file, read as any domain file is (cached, validated by the process's watch where it has one).
    package let file: FileDomainStorage
    /// Whether the file's owner and mode must prove that only root or this user could have written it.
    package let verifiesOwnership: Bool

    package init(_ file: FileDomainStorage, verifiesOwnership: Bool) {
        self.file = file
        self.verifiesOwnership = verifiesOwnership
    }

    private static let registry = Mutex<[ObjectIdentifier: AdministratorDomainStorage]>([:])

    /// The process-wide object for `file` (itself shared per path), so that suites over the same
    /// administrator's files are one suite; whether ownership is verified is decided by the first caller,
    /// and the package always asks the same of one directory.
    package static func shared(_ file: FileDomainStorage, verifiesOwnership: Bool) -> AdministratorDomainStorage {
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
        if verifiesOwnership && snapshot.exists, let problem = ownershipProblem() {
            throw .administratorFileIgnored(path: file.path, reason: problem)
        }
        return snapshot
    }

    /// Why the file or its directory could have been written by someone other than root or this user.
    private func ownershipProblem() -> String? {
        let user = getuid()
        for (path, what) in [(file.directory, "its directory"), (file.path, "the file")] {
            var info = stat()
            // `stat` follows symbolic links: a linked directory or file is judged by what it resolves to.
            guard stat(path, &info) == 0 else { return "\(what) cannot be checked: \(PrefsErrno(rawValue: errno))" }
            if info.st_uid != 0 && info.st_uid != user {
                return "\(what) belongs to user \(info.st_uid), neither root nor this process's user (\(user))"
            }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
                return "\(what) is writable by its group or by others (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
        }
        return nil
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
