import Glibc

/// Which inotify watches the watched paths need, and how a path is resolved to them.
///
/// Directories are watched, for their entries: the domain file is replaced by `rename()`, which a watch on
/// the file would not follow. A directory that does not exist yet is waited for at its nearest existing
/// ancestor, moving down as each level appears. The domain file's own inode is watched too, for writes
/// made in place through another hard link (events only its inode hears).
///
/// A watch follows an inode, not a path. So a path vouches for reads only while it is proven to lead, and
/// keep leading, to the watched directory: every directory on it is watched, top down from `/`, each added
/// through the levels above it, already watched, each a real directory and no symbolic link, so that moving
/// or removing any of them is an event, and so are the entries of each (a directory removed while something
/// holds it sends nothing itself, but its parent tells of the name going and coming back). A mount or
/// unmount, the other way to make a path lead elsewhere, is seen by the engine's watch of the mount table.
/// A path through a symbolic link, or to a domain file that is one, cannot be proven: it is polled.
///
/// Each directory is watched once, however many paths go through it: a level already placed by a proven
/// chain is reused without a system call (``placed``), and one found missing is not looked for again
/// (``missing``: it is waited for at its parent, already watched), until an event may have changed what any path leads
/// to, which forgets them all; every path whose chain holds the directory of that event is then resolved
/// again (``links``), so a chain built on a level changed meanwhile is corrected by the same drain that
/// brings the news, before any read compares a stamp (Invariant F1).
struct WatchedPaths {
    /// The engine's system calls: every `inotify_add_watch`, `inotify_rm_watch`, `statfs` and `lstat` of
    /// resolution goes through them, so that a test's engine can fail any (the watch limit reached mid-run).
    let system: SystemCalls

    init(system: SystemCalls) {
        self.system = system
    }

    /// An inotify watch on one directory, shared by every path that goes through it.
    struct DirectoryWatch {
        var path: String
        var references: Int
        /// The file system's kind, looked up once, when the directory's entries are first needed.
        var kind: FileSystemKind?
        /// Whether it is watched for ``InotifyCalls/directoryMask`` (the entries of a domain file's
        /// directory), rather than only for ``InotifyCalls/ancestorMask``.
        var watchesEntries: Bool
    }

    private(set) var directories: [Int32: DirectoryWatch] = [:]
    /// Watches of domain files' inodes, with the paths that hold each.
    private(set) var files: [Int32: Set<String>] = [:]
    /// For each watched directory, each name a watched path goes through in it, and those paths.
    private(set) var links: [Int32: [String: Set<String>]] = [:]
    /// Directories placed by a proven chain since the last event that may have changed where a path leads.
    private var placed: [String: Int32] = [:]
    /// Levels a proven chain found missing since then: each is waited for at its parent, whose events tell of
    /// it being made, so it is not looked for again meanwhile.
    private var missing: Set<String> = []

    /// Resolves `file` afresh: watches its path top down and the domain file, records its chain, and decides
    /// whether it polls. The new watches are added before the old ones are released, so that a directory
    /// watched again keeps its inotify watch.
    /// - Parameter inotify: The engine's inotify descriptor, or -1 without one (then it polls).
    mutating func resolve(_ file: inout WatchedFile, inotify: Int32) {
        let previousChain = file.chain
        // Out of the index first: a link the new chain has too is indexed again below.
        for link in previousChain { removeLink(link, file.filePath) }
        let previousFileWatch = file.fileWatch
        file.wd = nil
        file.nextComponent = nil
        file.chain = []
        file.proven = false
        file.fileWatch = nil
        file.fileUnfollowable = false
        file.resolvedWith = inotify
        var polls = true
        if inotify >= 0 && file.listening > 0 {
            polls = watchChain(&file, inotify: inotify)
        }
        watchFile(&file, inotify: inotify, watchingInode: file.proven)
        if file.fileUnfollowable { polls = true }
        for link in file.chain { links[link.wd, default: [:]][link.name, default: []].insert(file.filePath) }
        for link in previousChain { release(link.wd, inotify: inotify) }
        if previousFileWatch != file.fileWatch { releaseFile(previousFileWatch, file.filePath, inotify: inotify) }
        if polls && !file.pathPolls {
            file.lastStamp = FileIdentity.polled(file.filePath, system)
            file.lastStampWasRecent = file.lastStamp?.isRecentForPolling ?? false
        }
        file.pathPolls = polls
    }

    /// Watches `file`'s path top down (see the type's discussion); whether it must poll.
    private mutating func watchChain(_ file: inout WatchedFile, inotify: Int32) -> Bool {
        let components = PathBytes.components(file.directory)
        var level = "/"
        var chain: [WatchedFile.Link] = []
        for index in 0...components.count {
            let isDirectory = index == components.count
            let name = isDirectory ? file.fileName : components[index]
            let wd: Int32
            do {
                wd = try place(level, entries: isDirectory, inotify: inotify)
            } catch {
                if error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR), let parent = chain.last, isProvenNoLink(level) {
                    // Missing (or no directory): waited for at its parent, which hears it made, since the
                    // parent was watched before this level was looked for.
                    file.chain = chain
                    file.wd = parent.wd
                    file.nextComponent = parent.name
                    return kind(of: parent.wd)?.eventsAreComplete != true
                }
                // Through a symbolic link (its target can change without an event here), a level `lstat` could
                // not tell, or no watch to be had (the watch limit, no permission): what was placed goes, and
                // the path is polled, with the events its directory gives where it can be watched at all.
                for link in chain { release(link.wd, inotify: inotify) }
                watchUnproven(&file, inotify: inotify)
                return true
            }
            chain.append(WatchedFile.Link(wd: wd, name: name))
            level = level == "/" ? "/" + name : level + "/" + name
        }
        file.chain = chain
        file.wd = chain.last?.wd
        file.proven = true
        return file.wd.flatMap { kind(of: $0) }?.eventsAreComplete != true
    }

    /// Watches the directory `path` (for its entries when `entries`, else as a level above one), no symbolic
    /// link followed: without a system call when a proven chain placed it already (see ``placed``).
    private mutating func place(_ path: String, entries: Bool, inotify: Int32) throws(PrefsErrno) -> Int32 {
        if let wd = placed[path], let watch = directories[wd], watch.watchesEntries || !entries {
            directories[wd]?.references += 1
            return wd
        }
        if missing.contains(path) { throw .noSuchFileOrDirectory }
        let wd: Int32
        do {
            wd = entries ? try system.addWatch(inotify, path, following: false) : try system.addAncestorWatch(inotify, path)
        } catch {
            if error == .noSuchFileOrDirectory { missing.insert(path) }
            throw error
        }
        if var watch = directories[wd] {
            // The same directory, perhaps reached by another path now (moved, or bind-mounted).
            watch.path = path
            watch.references += 1
            watch.watchesEntries = watch.watchesEntries || entries
            directories[wd] = watch
        } else {
            directories[wd] = DirectoryWatch(path: path, references: 1, kind: nil, watchesEntries: entries)
        }
        placed[path] = wd
        return wd
    }

    /// The kind of file system the directory watched by `wd` is on, looked up once per watch.
    private mutating func kind(of wd: Int32) -> FileSystemKind? {
        guard let watch = directories[wd] else { return nil }
        if let kind = watch.kind { return kind }
        // A failed `statfs` gives type 0, not a local kind: the path polls rather than trust incomplete events.
        let kind = FileSystemKind(type: (try? system.fileSystemType(watch.path)) ?? 0)
        directories[wd]?.kind = kind
        return kind
    }

    /// Whether `lstat` shows that the level at `path`, which could not be watched as a directory, is no symbolic
    /// link: missing, or something else than a directory. Only then is it waited for at its parent. A failed
    /// `lstat` proves nothing (the level could be a link whose target changes without an event here): the path
    /// is then unproven, and polled.
    private func isProvenNoLink(_ path: String) -> Bool {
        do {
            return try system.lstat(path).st_mode & S_IFMT != S_IFLNK
        } catch {
            return error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR)
        }
    }

    /// A path that cannot be proven: its deepest existing directory is watched through whatever links lead
    /// there, so that its events still come, and the path is polled.
    private mutating func watchUnproven(_ file: inout WatchedFile, inotify: Int32) {
        var path = file.directory
        while true {
            do {
                let wd = try system.addWatch(inotify, path, following: true)
                if var watch = directories[wd] {
                    watch.references += 1
                    watch.watchesEntries = true
                    directories[wd] = watch
                } else {
                    directories[wd] = DirectoryWatch(path: path, references: 1, kind: nil, watchesEntries: true)
                }
                file.wd = wd
                file.nextComponent = path == file.directory ? nil : PathBytes.component(of: file.directory, below: path)
                file.chain = [WatchedFile.Link(wd: wd, name: file.nextComponent ?? file.fileName)]
                return
            } catch {
                guard error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR), path != "/" else { return }
                path = PathBytes.parent(path)
            }
        }
    }

    /// Watches the inode of the domain file, when it is a regular file; notes one that its watches cannot
    /// follow. Called again whenever its directory says a new file may be at its name.
    /// - Parameter watchingInode: `false` to watch no inode (the path is not proven, and polled).
    mutating func watchFile(_ file: inout WatchedFile, inotify: Int32, watchingInode: Bool) {
        let previous = file.fileWatch
        file.fileWatch = nil
        file.fileUnfollowable = false
        let found: Glibc.stat?
        do { found = try system.lstat(file.filePath) } catch {
            found = nil
            // Missing: its creation is an event in the directory. Anything else (`EIO`, `EACCES`, `ENOMEM`) leaves
            // unknown what is at the name, perhaps a symbolic link or a file with other links: nothing is vouched,
            // and the path polls, as for a file its watches cannot follow.
            if error != .noSuchFileOrDirectory && error != PrefsErrno(rawValue: ENOTDIR) { file.fileUnfollowable = true }
        }
        if let info = found {
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                // Its target can be replaced, or written, in a directory nobody here watches.
                file.fileUnfollowable = true
            case S_IFREG where inotify >= 0 && watchingInode:
                if let wd = try? system.addFileWatch(inotify, file.filePath) {
                    files[wd, default: []].insert(file.filePath)
                    file.fileWatch = wd
                } else {
                    file.fileUnfollowable = true
                }
            default:
                break  // Not a domain file at all: reads refuse it, and its replacement is a directory event.
            }
        }
        if previous != file.fileWatch { releaseFile(previous, file.filePath, inotify: inotify) }
    }

    /// Drops everything `file` holds.
    mutating func release(_ file: WatchedFile, inotify: Int32) {
        for link in file.chain {
            removeLink(link, file.filePath)
            release(link.wd, inotify: inotify)
        }
        releaseFile(file.fileWatch, file.filePath, inotify: inotify)
    }

    /// The watches the kernel has dropped already (their `IN_IGNORED` is in the batch being applied, perhaps after
    /// the event that releases them): releasing one removes no inotify watch, which would only fail (`EINVAL`).
    /// Set by the engine's drain for the batch it applies (a domain file renamed over drops the old inode's watch
    /// in the same `rename()` that queues the name's event), empty otherwise.
    var droppedByKernel: Set<Int32> = []

    /// The paths whose chain goes through the directory `wd`, under any name.
    func paths(through wd: Int32) -> Set<String> {
        links[wd].map { $0.values.reduce(into: Set<String>()) { $0.formUnion($1) } } ?? []
    }

    /// The paths whose chain goes through the entry `name` of the directory `wd`.
    func paths(through wd: Int32, named name: String) -> Set<String> { links[wd]?[name] ?? [] }

    /// The paths whose domain file's inode `wd` watches.
    func paths(ofFileWatch wd: Int32) -> Set<String>? { files[wd] }

    /// Something may have made a path lead elsewhere: no level placed so far is reused without asking the
    /// kernel again.
    mutating func forgetPlaced() {
        placed.removeAll()
        missing.removeAll()
    }

    private mutating func removeLink(_ link: WatchedFile.Link, _ path: String) {
        guard var names = links[link.wd], var paths = names[link.name] else { return }
        paths.remove(path)
        names[link.name] = paths.isEmpty ? nil : paths
        links[link.wd] = names.isEmpty ? nil : names
        // Nobody waits at this entry any longer, so its creation will concern no path, and nothing would clear a
        // note that the level is missing: a path watched later would wait for good for a directory made meanwhile.
        // The notes only save system calls; all go.
        if paths.isEmpty { missing.removeAll() }
    }

    /// Drops one reference to the directory watch `wd`, removing the inotify watch with the last.
    private mutating func release(_ wd: Int32, inotify: Int32) {
        guard var watch = directories[wd] else { return }
        watch.references -= 1
        if watch.references > 0 {
            directories[wd] = watch
        } else {
            directories[wd] = nil
            if placed[watch.path] == wd { placed[watch.path] = nil }
            if inotify >= 0 && !droppedByKernel.contains(wd) { system.removeWatch(inotify, wd, path: watch.path) }
        }
    }

    private mutating func releaseFile(_ wd: Int32?, _ path: String, inotify: Int32) {
        guard let wd, var holders = files[wd] else { return }
        holders.remove(path)
        if !holders.isEmpty {
            files[wd] = holders
        } else {
            files[wd] = nil
            if inotify >= 0 && !droppedByKernel.contains(wd) { system.removeWatch(inotify, wd, path: path) }
        }
    }

    /// Drops the record of a watch the kernel dropped (`IN_IGNORED`); the paths through it are resolved again.
    mutating func forget(_ wd: Int32) {
        if let watch = directories[wd], placed[watch.path] == wd { placed[watch.path] = nil }
        directories[wd] = nil
        files[wd] = nil
    }

    /// Whether events from the directory `wd` are complete (a local file system).
    func isComplete(_ wd: Int32?) -> Bool { wd.flatMap { directories[$0]?.kind?.eventsAreComplete } ?? false }
}
