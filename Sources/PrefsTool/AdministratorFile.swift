// `prefsctl --system` and `--managed`: domain files written where the library reads those layers, the way an
// administrator's files must be: mode 0644 in 0755 directories (readable by every user, writable by the owner
// only, which the library requires of a managed file), owned by whoever runs the tool (root, with sudo), and
// no lock file left behind.
//
// Why not FileDomainStorage: it is the user's storage, and makes what a user's domain needs: mode 0600 files
// (unreadable by the users the system layer serves), 0700 directories, and a DOMAIN.plist.lock beside each
// domain. Here the lock is the directory itself (flock on its descriptor): the library never writes these
// directories, so the only writers to keep apart are prefsctl processes, and a lock on the directory keeps them
// apart without leaving a file in /etc. (Removing a lock file after each write instead would race: a writer
// waiting on the removed file's lock would go ahead beside one that made a new lock file.)

import Foundation
import Glibc
import RVS_PersistentPrefs

/// The administrator's layers that `prefsctl` writes.
package enum AdministratorLayer: String, Sendable {
    case system, managed

    /// Where the library reads this layer, from this process's environment: the first directory of
    /// `$XDG_CONFIG_DIRS` (default /etc/xdg) with RVS_PersistentPrefs inside, or the managed directory.
    package func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        switch self {
        case .system:
            let first = (environment["XDG_CONFIG_DIRS"] ?? "").split(separator: ":").map(String.init).first { $0.hasPrefix("/") } ?? "/etc/xdg"
            return Self.trimmed(first) + "/RVS_PersistentPrefs"
        case .managed:
            let configured = environment[DefaultsLocations.managedDirectoryVariable].flatMap { $0.isEmpty ? nil : $0 }
            return Self.trimmed(configured.map(absolutePath) ?? DefaultsLocations.defaultManagedDirectory)
        }
    }

    /// The administrator's layer whose directory `directory` is (the same directory, however reached), if any.
    package static func layer(ofDirectory directory: String) -> AdministratorLayer? {
        guard let resolved = resolvedPath(directory) else { return nil }
        return [AdministratorLayer.system, .managed].first { resolvedPath($0.directory()) == resolved }
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// One domain file of an administrator's layer, written as ``AdministratorLayer`` describes.
package final class AdministratorFile: DomainStorage {
    package let directory: String
    package let name: String

    /// The file of domain `name` in `directory`.
    package init(directory: String, name: String) {
        (self.directory, self.name) = (directory, name)
    }

    package var location: String { PathBytes.joined(directory, name + DomainName.fileExtension) }

    /// Read as the library reads it, with nothing created.
    package func snapshot() throws(PrefsError) -> DomainSnapshot {
        try FileDomainStorage(directory: directory, name: name).snapshot()
    }

    /// One read-modify-write under the directory's lock; the new file replaces the old one by a rename, with
    /// the old one's mode and owner (0644 and this process's user for a new one). An unreadable file is
    /// never replaced unless `policy` says so, and then it is moved aside, not deleted.
    @discardableResult
    package func modify(repairing policy: RepairPolicy,
                        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try makeDirectories()
        return try withDirectoryLock { () throws(PrefsError) -> DomainSnapshot in
            var contents: [String: PropertyListValue]
            do throws(PrefsError) {
                contents = try snapshot().contents
            } catch {
                guard case .domainUnreadable = error, policy == .moveUnreadableAside else { throw error }
                let aside = location + ".unreadable-\(Int(Date().timeIntervalSince1970))"
                guard rename(location, aside) == 0 else { throw .writeFailed(path: location, step: .keepUnreadableFileAside(aside), errno: .current) }
                contents = [:]
            }
            try transform(&contents)
            let data: Data
            do {
                data = try PropertyListValue.dictionary(contents).binaryPropertyListData()
            } catch {
                throw .valuesNotPlistCompatible(invalidElements: ["\(error)"])
            }
            try replace(with: data)
            return DomainSnapshot(contents: contents)
        }
    }

    /// Removes the file under the directory's lock.
    /// - Returns: Whether there was a file.
    package func remove() throws(PrefsError) -> Bool {
        var info = stat()
        guard stat(directory, &info) == 0 else { return false }
        return try withDirectoryLock { () throws(PrefsError) -> Bool in
            if unlink(location) == 0 { return true }
            if errno == ENOENT { return false }
            throw .writeFailed(path: location, step: .removeDomainFile(location), errno: .current)
        }
    }

    /// The missing directories on the way, made 0755 whatever the umask.
    private func makeDirectories() throws(PrefsError) {
        var path = ""
        for component in directory.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o755) == 0 {
                chmod(path, 0o755)
            } else if errno != EEXIST {
                throw .writeFailed(path: location, step: .createDirectory(path), errno: .current)
            }
        }
    }

    private func withDirectoryLock<Result>(_ body: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .writeFailed(path: location, step: .lock(directory), errno: .current) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno != EINTR { throw .writeFailed(path: location, step: .lock(directory), errno: .current) }
        }
        return try body()
    }

    /// Writes `data` to a temporary file beside the domain file, with the mode and owner the file must have,
    /// synced, and renames it over the file: a reader sees the old file or the new one, never half of one.
    private func replace(with data: Data) throws(PrefsError) {
        var mode: mode_t = 0o644
        var owner = (geteuid(), getegid())
        var info = stat()
        if stat(location, &info) == 0 {
            (mode, owner) = (info.st_mode & 0o7777, (info.st_uid, info.st_gid))
        }
        let temporary = directory + "/." + name + DomainName.fileExtension + ".prefsctl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .writeFailed(path: location, step: .createTemporaryFile(temporary), errno: .current) }
        var isOpen = true
        do throws(PrefsError) {
            // fchmod is not narrowed by the umask; fchown keeps a rewritten file its owner's.
            if fchmod(descriptor, mode) != 0 { throw .writeFailed(path: location, step: .writeTemporaryFile(temporary), errno: .current) }
            if (owner.0 != geteuid() || owner.1 != getegid()) && fchown(descriptor, owner.0, owner.1) != 0 {
                throw .writeFailed(path: location, step: .writeTemporaryFile(temporary), errno: .current)
            }
            do {
                try PosixIO.writeAll(data, to: descriptor)
            } catch {
                throw .writeFailed(path: location, step: .writeTemporaryFile(temporary), errno: PrefsErrno(rawValue: error.code))
            }
            if fsync(descriptor) != 0 { throw .writeFailed(path: location, step: .syncTemporaryFile(temporary), errno: .current) }
            isOpen = false
            if close(descriptor) != 0 { throw .writeFailed(path: location, step: .closeTemporaryFile(temporary), errno: .current) }
            if rename(temporary, location) != 0 { throw .writeFailed(path: location, step: .renameOverDomainFile(temporary), errno: .current) }
        } catch {
            if isOpen { close(descriptor) }
            unlink(temporary)
            throw error
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}

private extension PrefsErrno {
    /// This thread's `errno`.
    static var current: PrefsErrno { PrefsErrno(rawValue: errno) }
}
