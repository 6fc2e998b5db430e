// `prefsctl verify FILE --as system|managed`: a candidate file judged as the library will judge it once
// installed, before it is installed: its form (read by the library's own FileDomainStorage, which creates
// nothing), its name, and, for a managed file, the owner and mode that make the library honour or ignore it. A file
// already in the layer's directory is judged where it is, through every directory of its resolved path.

import Foundation
import Glibc
import RVS_PersistentPrefs

/// The judgement of one candidate administrator's file.
package enum CandidateVerifier {
    /// What the file would be, or why the library would ignore it.
    /// - Returns: One line describing the file, when the library would honour it.
    /// - Throws: A failure (exit status 1) with the first reason the library would ignore it.
    package static func verify(_ path: String, as layer: AdministratorLayer) throws(HarnessError) -> String {
        let path = absolutePath(path)
        let ignored = { (reason: String) in HarnessError.failure("\(path) would be ignored as a \(layer.rawValue) file: \(reason)") }
        var info = stat()
        // The library follows symbolic links (stat): a linked candidate is judged by what it resolves to.
        guard stat(path, &info) == 0 else { throw ignored("it cannot be read: \(SystemError.current)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ignored("it is \(fileKind(info.st_mode)), not a regular file") }
        let file = (path as NSString).lastPathComponent
        guard file.hasSuffix(DomainName.fileExtension), file.count > DomainName.fileExtension.count else {
            throw ignored("the library reads only files named DOMAIN\(DomainName.fileExtension); name it after the domain it sets")
        }
        let name = String(file.dropLast(DomainName.fileExtension.count))
        if let problem = DomainName.problem(with: name) { throw ignored(problem) }
        if info.st_mode & S_IROTH == 0 {
            throw ignored("users other than its owner cannot read it (mode \(String(info.st_mode & 0o7777, radix: 8))); make it 0644")
        }
        if layer == .managed {
            // The library's rule for forced entries (AdministratorDomainStorage): owned by root or by the reading
            // user, writable by nobody else. Only root's file is honoured by every user.
            if info.st_uid != 0 {
                throw ignored("it belongs to user \(info.st_uid), not root: only that user's programs would honour it; chown root:root it")
            }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
                throw ignored("it is writable by its group or by others (mode \(String(info.st_mode & 0o7777, radix: 8))); make it 0644")
            }
            if let problem = directoryProblem(layer.directory()) { throw ignored(problem) }
        }
        // Installed already (in the layer's directory, perhaps as a symbolic link): judged where it is, as the
        // library judges it there, through every directory of its resolved path.
        if isInstalled(path, in: layer.directory()), let problem = installedPathProblem(path, rootOwned: layer == .managed) {
            throw ignored(problem)
        }
        let contents: [String: PropertyListValue]
        do {
            contents = try FileDomainStorage(directory: (path as NSString).deletingLastPathComponent, name: name).snapshot().contents
        } catch {
            throw ignored(error.description)
        }
        // The app's installed schema: a file the library reads, but whose values the app would refuse, is no good.
        if let schema = try InstalledSchema.find(for: name) {
            let problems = schema.problems(in: contents)
            if !problems.isEmpty {
                throw .failure("\(path) does not fit the schema of \(name) (\(schema.path)): \(problems.joined(separator: "; "))")
            }
        }
        return "\(path): a good \(layer.rawValue) file for the domain \(name): \(contents.count) storage \(contents.count == 1 ? "key" : "keys") (\(contents.keys.sorted().joined(separator: ", ")))"
    }

    /// Whether `path` is a file of the layer's `directory` (the directory itself possibly reached another way).
    static func isInstalled(_ path: String, in directory: String) -> Bool {
        let parent = (path as NSString).deletingLastPathComponent
        if PathBytes.trimmed(parent) == PathBytes.trimmed(directory) { return true }
        guard let resolvedParent = resolvedPath(parent), let resolvedDirectory = resolvedPath(directory) else { return false }
        return resolvedParent == resolvedDirectory
    }

    /// Why the library would ignore the installed file `path`, judged through every directory on its resolved path
    /// (`realpath`, every symbolic link followed), as the library's reads judge it: each must let every user
    /// through (a directory other users cannot search hides the file from their programs), and for a managed file
    /// each must also be root's and writable by nobody else unless sticky (the reading user's own would serve
    /// only that user).
    static func installedPathProblem(_ path: String, rootOwned: Bool) -> String? {
        guard let target = resolvedPath(path) else { return "its resolved path cannot be found: \(SystemError.current)" }
        return ancestorProblem(from: (target as NSString).deletingLastPathComponent, searchable: true, rootOwned: rootOwned) {
            "\($0), a directory on the path to \(target),"
        }
    }

    /// Why the library would ignore a managed file in `directory`: as it judges an installed file, every
    /// directory on the resolved path must be root's and writable by nobody else, unless sticky (the library
    /// also accepts the reading user's own; only root's serve every user). A directory not made yet is judged
    /// by the nearest one that exists, as prefsctl --managed would make the rest root's 0755.
    static func directoryProblem(_ directory: String) -> String? {
        var existing = directory
        while !FileManager.default.fileExists(atPath: existing) && existing != "/" {
            existing = (existing as NSString).deletingLastPathComponent
        }
        guard let resolved = resolvedPath(existing) else { return "\(existing) cannot be resolved: \(SystemError.current)" }
        return ancestorProblem(from: resolved, searchable: false, rootOwned: true) {
            "\($0), a directory on the path to the managed directory \(directory),"
        }
    }

    /// Why the directory `first` or one above it, up to `/`, would make the library ignore a file below them: each
    /// must be searchable by every user (when `searchable`), and root's and writable by nobody else unless sticky
    /// (when `rootOwned`). `describe` names a directory in the reason.
    private static func ancestorProblem(from first: String, searchable: Bool, rootOwned: Bool,
                                        _ describe: (String) -> String) -> String? {
        var path = first
        while true {
            var info = stat()
            guard lstat(path, &info) == 0 else { return "\(path) cannot be checked: \(SystemError.current)" }
            let what = describe(path)
            let mode = String(info.st_mode & 0o7777, radix: 8)
            if searchable && info.st_mode & S_IXOTH == 0 {
                return "\(what) cannot be searched by users other than its owner and group (mode \(mode)): their programs cannot read the file"
            }
            if rootOwned && info.st_uid != 0 { return "\(what) belongs to user \(info.st_uid), not root" }
            if rootOwned && info.st_mode & (S_IWGRP | S_IWOTH) != 0 && info.st_mode & S_ISVTX == 0 {
                return "\(what) is writable by its group or by others without the sticky bit (mode \(mode))"
            }
            if path == "/" { return nil }
            path = (path as NSString).deletingLastPathComponent
        }
    }
}
