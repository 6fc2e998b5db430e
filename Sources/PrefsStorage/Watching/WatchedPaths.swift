import Glibc

/// Which inotify watches the subscriptions' paths need, and how a path is resolved to them.
///
/// Directories are watched, for their entries: the domain file is replaced by `rename()`, which a watch on
/// the file would not follow. A directory that does not exist yet is waited for by watching its nearest
/// existing ancestor and moving down as each level appears. The domain file's own inode is watched too,
/// for writes made in place through another hard link (events only its inode hears).
///
/// A watch follows an inode, not a path. So a subscription vouches for reads only while its path is
/// proven to lead, and keep leading, to the watched directory: every directory above it is watched too
/// (``InotifyCalls/ancestorMask``), top down from `/`, each a real directory and no symbolic link, so that
/// moving or removing any of them is an event, and so are the entries of each (a directory removed while
/// something holds it sends nothing itself, but its parent tells of the name going and coming back). A
/// mount or unmount, the other way to make a path lead elsewhere, is seen by the engine's watch of the
/// mount table.
/// A path through a symbolic link, or to a domain file that is one, cannot be proven: it is polled.
struct WatchedPaths {
    /// An inotify watch on one directory, shared by every subscription whose path leads there.
    struct DirectoryWatch {
        var path: String
        var references: Int
        var kind: FileSystemKind
        /// Whether some subscription watches the directory's entries, rather than only its being moved
        /// or removed as a directory above another.
        var watchesEntries: Bool
    }

    private(set) var directories: [Int32: DirectoryWatch] = [:]
    /// Watches of domain files' inodes, with how many subscriptions hold each.
    private(set) var files: [Int32: Int] = [:]

    /// Watches the deepest existing directory on `subscription`'s path, proves the path, watches the
    /// domain file, and decides whether the subscription polls. The new watches are added before the
    /// old ones are released, so that a directory watched again keeps its inotify watch.
    /// - Parameter inotify: The engine's inotify descriptor, or -1 without one (then it polls).
    mutating func resolve(_ subscription: inout WatchSubscription, inotify: Int32) {
        let previous = subscription.wd
        let previousAncestors = subscription.ancestors
        subscription.wd = nil
        subscription.nextComponent = nil
        subscription.ancestors = []
        subscription.proven = false
        var polls = subscription.fallback != .none
        let eventsForbidden = subscription.fallback == .inotifyUnavailable || subscription.fallback == .watchLimitReached
        if inotify >= 0 && !eventsForbidden {
            polls = watchDeepestDirectory(&subscription, inotify: inotify) || polls
        } else {
            polls = true
        }
        if subscription.nextComponent == nil, let wd = subscription.wd {
            let (ancestors, leadsThere) = watchPath(to: subscription.directory, directoryWatch: wd, inotify: inotify)
            subscription.ancestors = ancestors
            subscription.proven = leadsThere
            // Through a symbolic link, or moved meanwhile: a change of what the path leads to would be no
            // event here.
            if !leadsThere { polls = true }
        }
        watchFile(&subscription, inotify: inotify, watchingInode: subscription.proven)
        if subscription.fileUnfollowable { polls = true }
        for wd in previousAncestors { release(wd, inotify: inotify) }
        release(previous, inotify: inotify)
        if polls && !subscription.polls {
            subscription.lastStamp = FileIdentity.polled(subscription.filePath)
            subscription.lastStampWasRecent = subscription.lastStamp?.isRecentForPolling ?? false
        }
        subscription.polls = polls
    }

    /// Watches `subscription.directory`, or its deepest existing ancestor; whether it must poll.
    private mutating func watchDeepestDirectory(_ subscription: inout WatchSubscription, inotify: Int32) -> Bool {
        var path = subscription.directory
        var attempts = 0
        while true {
            do {
                let wd = try InotifyCalls.addWatch(inotify, path)
                if directories[wd]?.watchesEntries != true {
                    let kind = FileSystemKind(type: (try? InotifyCalls.fileSystemType(path)) ?? 0)
                    // A directory watched so far only as another's ancestor keeps its references.
                    directories[wd] = DirectoryWatch(path: path, references: directories[wd]?.references ?? 0, kind: kind,
                                                     watchesEntries: true)
                }
                directories[wd]?.references += 1
                subscription.wd = wd
                if path != subscription.directory {
                    let next = PathBytes.component(of: subscription.directory, below: path)
                    subscription.nextComponent = next
                    // The next level may have been made after it was found missing and before this watch
                    // was in place, so its creation was not seen: start again from the bottom.
                    attempts += 1
                    if attempts < 64 && access((path == "/" ? "" : path) + "/" + next, F_OK) == 0 {
                        release(wd, inotify: inotify)
                        subscription.wd = nil
                        subscription.nextComponent = nil
                        path = subscription.directory
                        continue
                    }
                }
                return directories[wd]?.kind.eventsAreComplete != true
            } catch {
                // A missing level is waited for from its parent; anything else (the watch limit, no
                // permission) leaves polling.
                guard error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR), path != "/" else {
                    return true
                }
                path = PathBytes.parent(path)
            }
        }
    }

    /// Watches every directory above `directory`, top down, for being moved or removed, and checks that
    /// the path still leads to the directory `directoryWatch` watches.
    ///
    /// Top down, each level is watched through the levels above it, already watched: a level moved or
    /// removed after its watch was added is an event; one moved before was not yet watched, so the levels
    /// below are watched through what replaced it. Each level, and the directory itself last, must be a
    /// real directory (no symbolic link: its target could change without an event here), and the
    /// directory must still be the inode `directoryWatch` follows.
    /// - Returns: The ancestor watches taken (each one reference), and whether the path is proven.
    mutating func watchPath(to directory: String, directoryWatch: Int32, inotify: Int32) -> (ancestors: [Int32], leadsThere: Bool) {
        var ancestors: [Int32] = []
        var prefix = ""
        let components = PathBytes.components(directory)
        // "/" itself cannot be moved or removed, but its entries hold the first level of the path.
        var levels = components.isEmpty ? [] : ["/"]
        for component in components.dropLast() {
            prefix += "/" + component
            levels.append(prefix)
        }
        for level in levels {
            guard let wd = try? InotifyCalls.addAncestorWatch(inotify, level) else { return (ancestors, false) }
            if directories[wd] == nil {
                directories[wd] = DirectoryWatch(path: level, references: 0, kind: FileSystemKind(type: 0), watchesEntries: false)
            }
            directories[wd]?.references += 1
            ancestors.append(wd)
        }
        guard let wd = try? InotifyCalls.addAncestorWatch(inotify, directory) else { return (ancestors, false) }
        if wd != directoryWatch {
            // Another directory is at the path now; a watch made only by this check is dropped.
            if directories[wd] == nil { InotifyCalls.removeWatch(inotify, wd) }
            return (ancestors, false)
        }
        return (ancestors, true)
    }

    /// Watches the inode of the domain file, when it is a regular file; notes one that its watches cannot
    /// follow. Called again whenever its directory says the file changed (a new inode replaced it).
    /// - Parameter watchingInode: `false` to watch no inode (the path is not proven, and polled).
    mutating func watchFile(_ subscription: inout WatchSubscription, inotify: Int32, watchingInode: Bool) {
        let previous = subscription.fileWatch
        subscription.fileWatch = nil
        subscription.fileUnfollowable = false
        var info = Glibc.stat()
        if lstat(subscription.filePath, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                // Its target can be replaced, or written, in a directory nobody here watches.
                subscription.fileUnfollowable = true
            case S_IFREG where inotify >= 0 && watchingInode:
                if let wd = try? InotifyCalls.addFileWatch(inotify, subscription.filePath) {
                    files[wd, default: 0] += 1
                    subscription.fileWatch = wd
                } else {
                    subscription.fileUnfollowable = true
                }
            default:
                break  // Not a domain file at all: reads refuse it, and its replacement is a directory event.
            }
        }
        // Missing: its creation is an event in the directory.
        releaseFile(previous, inotify: inotify)
    }

    /// Drops everything `subscription` holds.
    mutating func release(_ subscription: WatchSubscription, inotify: Int32) {
        release(subscription.wd, inotify: inotify)
        for wd in subscription.ancestors { release(wd, inotify: inotify) }
        releaseFile(subscription.fileWatch, inotify: inotify)
    }

    /// Drops one reference to the directory watch `wd`, removing the inotify watch with the last.
    mutating func release(_ wd: Int32?, inotify: Int32) {
        guard let wd, var watch = directories[wd] else { return }
        watch.references -= 1
        if watch.references > 0 {
            directories[wd] = watch
        } else {
            directories[wd] = nil
            if inotify >= 0 { InotifyCalls.removeWatch(inotify, wd) }
        }
    }

    private mutating func releaseFile(_ wd: Int32?, inotify: Int32) {
        guard let wd, let references = files[wd] else { return }
        if references > 1 {
            files[wd] = references - 1
        } else {
            files[wd] = nil
            if inotify >= 0 { InotifyCalls.removeWatch(inotify, wd) }
        }
    }

    /// Drops the record of a watch the kernel dropped (`IN_IGNORED`).
    mutating func forget(_ wd: Int32) {
        directories[wd] = nil
        files[wd] = nil
    }

    /// Whether events from the directory `wd` are complete (a local file system).
    func isComplete(_ wd: Int32?) -> Bool { wd.flatMap { directories[$0]?.kind.eventsAreComplete } ?? false }
}
