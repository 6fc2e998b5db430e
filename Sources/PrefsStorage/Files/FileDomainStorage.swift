import Foundation
import PrefsPropertyList
import Glibc
import Synchronization

/// A persistent domain kept in a binary property-list file, safe to share between threads and
/// processes.
///
/// - Every modification is a read-modify-write under an exclusive `flock` on a lock file beside the
///   domain file (`<name>.plist.lock`). The new contents go to a temporary file in the same directory
///   (`.<name>.plist.tmp`), which is then renamed over the domain file, so a crash at any instant
///   leaves the old file or the new one. A killed writer's temporary file is never read, and the next
///   writer overwrites it.
/// - Every read is fresh. The parsed domain is cached behind the file's identity (device, inode,
///   size, modification and change times); since timestamps on Linux are coarse and inode numbers
///   are reused, a file changed within the last moments is also compared byte for byte before the
///   cache is trusted. An unchanged file therefore costs one `stat()`, and an unreadable file is not
///   parsed again until it changes.
/// - Under the lock, a write re-reads what it rewrites validated by the file itself (its identity), never
///   by a cache the watch vouches for (Invariant W1: a write never trusts the watch), so no change made by
///   another process is ever written over, whatever the watch missed.
/// - A new file gets mode 0600 (its directory 0700); a rewrite keeps the replaced file's permission bits,
///   and its owner and group where the writer may set them (as root, say).
/// - A failed write leaves the previous file intact and is reported as
///   ``PrefsError/writeFailed(path:step:errno:)``. In durable mode the file and its directory are
///   also `fsync`ed before the write returns.
///
/// All instances for one file in a process should be the same object, so that they share one cache:
/// get them from ``shared(directory:name:durable:)``.
public final class FileDomainStorage: DomainStorage, VouchingStorage {
    /// The domain file: `<directory>/<name>.plist`.
    public let path: String
    /// The directory holding the domain file, created with mode 0700 by the first write.
    public let directory: String
    /// Whether writes `fsync` the file and its directory before returning.
    public let durable: Bool
    /// The domain's name: the file's name without `.plist`.
    let name: String

    let lockPath: String
    /// The thread running this domain's transform, for reads and writes it makes of the domain itself.
    private let transformOwner = TransformOwnership()
    /// `path` as a C string, made once: every read of an unchanged file passes it to `stat`.
    private let pathCString: ContiguousArray<CChar>
    let temporaryPath: String
    let system: SystemCalls
    private let cache = PrefsMutex<CachedDomain?>(nil)
    /// Tells a read whether the file may have changed since it was cached, with no system call of
    /// this domain's own (see ``ReadFreshness``); asked for once, so that a read looks nothing up.
    private let freshness: any FreshnessTracker

    /// The file's freshness token now (see ``FreshnessTracker/currentToken()``), for a domain built on this
    /// one that caches what it derives from the file.
    package var freshnessToken: FreshnessToken? { freshness.currentToken() }

    /// The path's generation at which the cached read is known to be what the file holds (Invariant F6: the
    /// cache was validated by the watch, or found the file missing, at that generation); 0 when none is. Set
    /// under the cache mutex; read with no lock by ``generation``.
    private let keptGeneration = Atomic<UInt64>(0)
    private let watchOverride = PrefsMutex<(fallback: DomainWatching.Fallback, pollingInterval: Duration)?>(nil)
    /// The watch engine whose generations vouch for this file's reads, which its watches use: the process's,
    /// unless a test gave one of its own; `nil` when the freshness source is not an engine.
    package let watchEngine: WatchEngine?
    /// The watch that lets the process's engine vouch for this file's reads (see ``startVouching()``):
    /// `nil` until started, then the watch, or `.some(nil)` when there is none to start.
    private let vouchingWatch = PrefsMutex<FileWatch??>(nil)
    /// Whether ``startVouching()`` ran: read with no lock by every read of a suite.
    private let vouchingStarted = Atomic<Bool>(false)

    /// For tests: the fallback and polling interval of this domain's watches started afterwards, instead
    /// of the process-wide ``DomainWatching`` settings (which tests running in parallel share).
    package var watchSettings: (fallback: DomainWatching.Fallback, pollingInterval: Duration)? {
        get { watchOverride.withLock { $0 } }
        set { watchOverride.withLock { $0 = newValue } }
    }

    /// The domain file's path.
    public var location: String { path }

    /// Whether the last read or write of this process found (or made) the domain file. A hint only:
    /// the file may have been removed since.
    public var isKnownToExist: Bool {
        if let started = transformOwner.snapshotForOwnThread { return started.exists }
        return cache.withLock { $0.map { !$0.isMissing } ?? false }
    }

    /// Makes the domain `<directory>/<name>.plist`.
    ///
    /// Creates nothing: the directory and the file appear with the first write.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when `name` cannot be one file name
    ///   (empty, `.`, `..`, with `/` or NUL, or too long) or `directory` is not an absolute path.
    public convenience init(directory: String, name: String, durable: Bool = false) throws(PrefsError) {
        try self.init(directory: directory, name: name, durable: durable, system: .live)
    }

    init(directory: String, name: String, durable: Bool, system: SystemCalls,
         freshness source: any ReadFreshness = WatchEngine.shared) throws(PrefsError) {
        if let problem = DomainName.problem(with: name) {
            throw .userDefaultsUnavailable(reason: problem)
        }
        guard PathBytes.isAbsolute(directory) else {
            throw .userDefaultsUnavailable(reason: "the directory '\(directory)' is not an absolute path")
        }
        // Single slashes (SPEC §7.5), also where the directory is `/`.
        let directory = PathBytes.trimmed(directory)
        self.directory = directory
        self.name = name
        self.path = PathBytes.joined(directory, name + DomainName.fileExtension)
        self.pathCString = path.utf8CString
        self.lockPath = path + ".lock"
        self.temporaryPath = PathBytes.joined(directory, "." + name + DomainName.fileExtension + ".tmp")
        self.durable = durable
        self.system = system
        self.freshness = source.tracker(directory: directory, fileName: name + DomainName.fileExtension)
        self.watchEngine = source as? WatchEngine
    }

    private static let registry = PrefsMutex<[String: FileDomainStorage]>([:])

    /// The process-wide instance for `<directory>/<name>.plist`, made on first use, so that everyone in
    /// the process shares one cache of the parsed file.
    ///
    /// There is one instance per directory, name and durability: a durable and a non-durable instance
    /// of one file each keep their own cache, and exclude each other through the file's lock.
    ///
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the name or directory cannot be
    ///   used (see ``init(directory:name:durable:)``); nothing is created then.
    public static func shared(directory: String, name: String, durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        let registryKey = "\(durable ? "D" : "-")\(directory)\u{0}\(name)"
        return try registry.withLock { (domains: inout [String: FileDomainStorage]) throws(PrefsError) -> FileDomainStorage in
            if let existing = domains[registryKey] { return existing }
            let domain = try FileDomainStorage(directory: directory, name: name, durable: durable)
            domains[registryKey] = domain
            return domain
        }
    }

    // MARK: Reading

    /// Reads the domain file afresh (one `stat()` when it is unchanged since the last read).
    ///
    /// - Returns: The contents, or an empty snapshot when there is no file.
    /// - Throws: ``PrefsError/domainUnreadable(path:reason:)`` when the file is not a property list
    ///   with a dictionary root, ``PrefsError/readFailed(path:step:errno:)`` when it cannot be read.
    public func snapshot() throws(PrefsError) -> DomainSnapshot {
        // From inside this domain's own transform: what it started from (the lock is this thread's).
        if let started = transformOwner.snapshotForOwnThread { return started }
        return try cache.withLock { (cached: inout CachedDomain?) throws(PrefsError) -> DomainSnapshot in
            try load(&cached)
        }
    }

    /// The file's generation: the watch engine's generation of its path, while what the last read found is
    /// known to be what the file holds at it (read at the domain's path itself, through no symbolic link, with
    /// one hard link, and validated by the watch; or found missing where the watch reaches the path); `nil`
    /// otherwise, and from inside this domain's own transform. Pending events are taken first: one `ioctl`
    /// at most, none when a read scope took them already.
    public var generation: UInt64? {
        // Invariant F6: a source reports a generation only for what it would return again.
        guard !transformOwner.isOwnThread else { return nil }
        let kept = keptGeneration.load(ordering: .acquiring)
        guard kept != 0, let now = freshness.currentGeneration(), now.value == kept else { return nil }
        return kept
    }

    /// Watches the file for as long as this object lives, so that the process's watch engine vouches for
    /// its reads: a read of an unchanged file then costs one `ioctl` (the engine's, shared by every
    /// domain a read consults) instead of a `stat()` of its own. Where the engine cannot vouch (a file
    /// system whose events are incomplete, no inotify watch left), reads keep validating with `stat()`.
    package func startVouching() {
        guard watchEngine != nil, !vouchingStarted.load(ordering: .acquiring) else { return }
        vouchingWatch.withLock { started in
            guard started == nil else { return }
            let (fallback, interval) = watchSettings ?? (DomainWatching.forcedFallback, DomainWatching.pollingInterval)
            started = .some(watch(fallback: fallback, pollingInterval: interval, handler: {}))
        }
        vouchingStarted.store(true, ordering: .releasing)
    }

    /// Loads the file, trusting `cached` only when the file's identity proves it current.
    private func load(_ cached: inout CachedDomain?) throws(PrefsError) -> DomainSnapshot {
        // Where this process watches the file, its events prove the cache current without a `stat`
        // (see ReadFreshness). The token is taken before anything is read, so whatever changes
        // afterwards makes it differ next time.
        // Invariant F5: evidence before the read.
        let now = freshness.currentGeneration()
        let token = now.flatMap { $0.vouchesContents ? FreshnessToken($0.value) : nil }
        // (Read through `cached?`: binding a copy of the cache would retain its bytes and result.)
        // Invariant F3: vouch only where events are complete (a token, over a read whose every change is an event).
        if let token, cached?.watchToken == token, cached?.eventsReachDirectory == true, let result = cached?.result {
            let snapshot = try result.get()
            if keptGeneration.load(ordering: .relaxed) != token.value { keptGeneration.store(token.value, ordering: .releasing) }
            return snapshot
        }
        // A read that fails vouches for nothing (Invariant F6): an unreadable file is looked at again.
        do {
            let snapshot = try loadFromFile(&cached, token: token)
            noteKept(cached, at: now)
            return snapshot
        } catch {
            keptGeneration.store(0, ordering: .releasing)
            throw error
        }
    }

    /// ``snapshot()`` and the generation that read is known current at (see ``generation``), taken together under
    /// the cache's mutex: so that a domain built on this one (an administrator's) never pairs what it read with a
    /// generation another thread's later read recorded.
    package func snapshotAndGeneration() throws(PrefsError) -> (DomainSnapshot, UInt64?) {
        if let started = transformOwner.snapshotForOwnThread { return (started, nil) }
        return try cache.withLock { (cached: inout CachedDomain?) throws(PrefsError) -> (DomainSnapshot, UInt64?) in
            let snapshot = try load(&cached)
            let kept = keptGeneration.load(ordering: .acquiring)
            return (snapshot, kept == 0 ? nil : kept)
        }
    }

    /// The part of ``load(_:)`` that looks at the file: its identity, or its bytes.
    private func loadFromFile(_ cached: inout CachedDomain?, token: FreshnessToken?) throws(PrefsError) -> DomainSnapshot {
        // A cache that must be re-read anyway (none, or a recent file) needs no `stat` first: the
        // `fstat` of the opened file gives its identity. A file found missing is checked with a `stat`
        // alone: a search list holds domains that usually do not exist (system-wide and administrators'
        // files), and each read of one must cost no more than that.
        // Invariant F4: identity with a recency window.
        if cached?.mayHaveChangedUnseen == false, cached?.identity != nil || cached?.isMissing == true {
            let identity: FileIdentity
            do {
                identity = FileIdentity(try system.stat(path, cString: pathCString))
            } catch {
                if error == .noSuchFileOrDirectory {
                    if cached?.isMissing != true { cached = .missing }
                    cached?.watchToken = token
                    return .missing
                }
                throw .readFailed(path: path, step: .stat, errno: error)
            }
            if let cachedIdentity = cached?.identity, cachedIdentity == identity, let result = cached?.result {
                cached?.watchToken = token
                return try result.get()
            }
        }
        guard let (openedIdentity, bytes, eventsReachDirectory, _) = try readFile() else {
            cached = .missing
            cached?.watchToken = token
            return .missing
        }
        return try keep(bytes ?? [], identity: openedIdentity, eventsReachDirectory: eventsReachDirectory, token: token, in: &cached)
    }

    /// Drops the cached read, so that the next read reads the file, and what suites kept of it with it.
    func forgetCache() {
        cache.withLock { cached in
            cached = nil
            noteChangedHere()
        }
    }

    /// What a change made here (this object's write, a change another's write found under the lock, a cache
    /// dropped) leaves: no generation is reported for what is cached until a read validates the file again, and the
    /// path's generation moves, so that every suite's next comparison sees it (Invariant F6).
    private func noteChangedHere() {
        keptGeneration.store(0, ordering: .releasing)
        freshness.changedHere()
    }

    /// Records the generation at which `cached` is known to be what the file holds (see ``generation``): the
    /// one taken before the read (Invariant F5), where the watch vouched for the read or found no file.
    private func noteKept(_ cached: CachedDomain?, at now: (value: UInt64, vouchesContents: Bool)?) {
        var kept: UInt64 = 0
        if let now, let cached {
            if cached.isMissing || (now.vouchesContents && cached.watchToken?.value == now.value && cached.eventsReachDirectory) {
                kept = now.value
            }
        }
        keptGeneration.store(kept, ordering: .releasing)
    }

    /// Caches what was read from the file, parsing it unless it has the bytes of the cached version.
    private func keep(_ bytes: [UInt8], identity openedIdentity: FileIdentity, eventsReachDirectory: Bool, token: FreshnessToken?,
                      in cached: inout CachedDomain?) throws(PrefsError) -> DomainSnapshot {
        let result: Result<DomainSnapshot, PrefsError>
        // Invariant F9: the snapshot is the generation (same bytes, same snapshot object).
        if let previous = cached, !previous.isMissing, previous.bytes == bytes {
            // Same bytes: keep the parsed result (and never re-parse a bad file, which leaks in Foundation).
            result = previous.result
        } else {
            result = Result { () throws(PrefsError) -> DomainSnapshot in try Self.parse(bytes, path: path) }
        }
        cached = CachedDomain(identity: openedIdentity, bytes: bytes, result: result, eventsReachDirectory: eventsReachDirectory)
        cached?.watchToken = token
        return try result.get()
    }

    /// Loads the file for a write, under the domain's lock, validating the cache by the file itself.
    ///
    /// Invariant W1: a write never trusts the watch. The watch's token proves nothing about the file a
    /// write is about to replace: a directory removed and made again while something held it open, or a
    /// bind mount unmounted, leaves the watch on the old directory, still vouching, while another process
    /// writes in the new one; rewriting the cached collection then would put it back over that process's
    /// change. So the file is opened, and the cache is reused only when the open file's identity (device,
    /// inode, size, modification and change times) is the one the cache was read from, and that version
    /// was not so recent that a later write could share its timestamps; anything else is read again.
    /// - Parameter existing: Set to the mode and owner of the file found, which the new file keeps.
    private func loadForWrite(_ cached: inout CachedDomain?, existing: inout FileOwnership?) throws(PrefsError) -> DomainSnapshot {
        // Invariant W1: a write never trusts the watch
        // The token is kept only for later reads, as `load` keeps it; it decides nothing here.
        let token = freshness.currentToken()
        let known = cached?.mayHaveChangedUnseen == false ? cached?.identity : nil
        guard let (openedIdentity, bytes, eventsReachDirectory, ownership) = try readFile(unlessIdentityIs: known) else {
            cached = .missing
            cached?.watchToken = token
            return .missing
        }
        existing = ownership
        if let bytes {
            return try keep(bytes, identity: openedIdentity, eventsReachDirectory: eventsReachDirectory, token: token, in: &cached)
        }
        // The open file is the version the cache was read from.
        cached?.watchToken = token
        guard let result = cached?.result else { return .missing }
        return try result.get()
    }

    /// Reads the whole file, with the identity of what was read and whether every change to it is an
    /// event in this domain's directory; `nil` when there is no file.
    ///
    /// A file reached through a symbolic link, or with another hard link, can be changed through another
    /// directory, whose events a watch of this one never sees: its reads keep being validated with `stat()`.
    /// - Parameter known: When the open file has this identity, its bytes are not read (`nil` bytes).
    /// - Returns: Also the file's mode and owner, which a write keeps.
    private func readFile(unlessIdentityIs known: FileIdentity? = nil) throws(PrefsError)
        -> (FileIdentity, [UInt8]?, eventsReachDirectory: Bool, FileOwnership)? {
        var fd: Int32
        var followedLink = false
        do {
            // O_NONBLOCK: a FIFO put where the domain file belongs must not hang the reader; it is
            // then refused as not a regular file. The flag means nothing for a regular file.
            do {
                fd = try system.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW)
            } catch where error == PrefsErrno(rawValue: ELOOP) {
                followedLink = true
                fd = try system.open(path, O_RDONLY | O_NONBLOCK)
            }
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw .readFailed(path: path, step: .open, errno: error)
        }
        var step = PrefsError.Step.fstat
        do {
            let info = try system.fstat(fd, path: path)
            guard info.st_mode & S_IFMT == S_IFREG else {
                _ = try? system.close(fd, path: path)
                throw PrefsError.domainUnreadable(path: path, reason: "not a regular file")
            }
            guard info.st_size <= Self.maximumFileSize else {
                _ = try? system.close(fd, path: path)
                throw PrefsError.domainUnreadable(
                    path: path, reason: "the file is \(info.st_size) bytes; at most \(Self.maximumFileSize) are read")
            }
            if let known, FileIdentity(info) == known {
                step = .close
                try system.close(fd, path: path)
                return (known, nil, !followedLink && info.st_nlink == 1, FileOwnership(info))
            }
            step = .read
            let bytes = try system.readAll(fd, path: path, sizeHint: Int(info.st_size), limit: Self.maximumFileSize)
            step = .close
            try system.close(fd, path: path)
            return (FileIdentity(info), bytes, !followedLink && info.st_nlink == 1, FileOwnership(info))
        } catch let error as PrefsErrno {
            if step != .close { _ = try? system.close(fd, path: path) }
            throw .readFailed(path: path, step: step, errno: error)
        } catch let error as PrefsError {
            throw error
        } catch {
            throw .unknownError(error: error)
        }
    }

    /// The largest domain file read or written: ``DomainLimits/maximumSize``, one limit for both.
    package static var maximumFileSize: Int { DomainLimits.maximumSize }

    #if DEBUG
    private static let parses = PrefsMutex([String: Int]())

    /// How many times this process has parsed the domain file at `path`: lets tests prove that an
    /// unchanged file, readable or not, is never parsed again. Counted by path, so that other tests
    /// parsing other files meanwhile do not change it. A test hook, in debug builds only.
    package static func parseCount(of path: String) -> Int { parses.withLock { $0[path, default: 0] } }
    #endif

    static func parse(_ bytes: [UInt8], path: String) throws(PrefsError) -> DomainSnapshot {
        #if DEBUG
        parses.withLock { $0[path, default: 0] += 1 }
        #endif
        let root: (value: PropertyListValue, shadowed: ShadowedEntries?)
        do {
            root = try bytes.withUnsafeBytes { try PropertyListText.decodeFileKeepingShadowed($0) }
        } catch {
            throw .domainUnreadable(path: path, reason: "\(error)")
        }
        guard case .dictionary(let contents) = root.value else {
            throw .domainUnreadable(path: path, reason: "the root is not a dictionary")
        }
        return DomainSnapshot(contents: contents, shadowed: root.shadowed)
    }

    // MARK: Writing

    /// Reads, changes and saves the domain under the domain's exclusive lock.
    ///
    /// Nothing is written when `transform` throws or leaves the contents as they were, or when the
    /// file cannot be read as it is (unless `policy` is ``RepairPolicy/moveUnreadableAside``, which
    /// first renames an unreadable file to `<name>.plist.unreadable-<time>`). `transform` is given what
    /// the file holds under the lock, checked against the file itself, not against what a read cached.
    /// The new file keeps the old one's permission bits, and its owner where the writer may set it.
    ///
    /// - Throws: ``PrefsError/writeFailed(path:step:errno:)`` when a step of the write fails, creating
    ///   the directory included (the old file is then intact); the read errors of ``snapshot()``; whatever `transform` throws.
    @discardableResult
    public func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        // From inside this domain's own transform: it would wait for the lock its own thread holds.
        if transformOwner.isOwnThread { throw TransformOwnership.nestedWrite(path: path, lockPath: lockPath) }
        // The file lock first, then the in-process cache: readers in this process take only the
        // latter, so they never wait while this writer waits for another process's lock.
        let lock = try acquireLock(beforeCreating: { () throws(PrefsError) in
            // A write that will be refused creates nothing, not even the lock file: an unreadable domain
            // (a FIFO, a link to one, a damaged file) is found by a read before the lock file or its
            // directory is made. The read under the lock decides; this one only spares the refusal its
            // traces, so it is made only when there are traces to spare: where the lock file exists, a
            // refused write leaves none, and the file is read once, under the lock.
            guard policy == .failIfUnreadable else { return }
            do throws(PrefsError) {
                _ = try snapshot()
            } catch {
                // Other failures (a missing directory, say) are the write's to report, at its own step.
                if case .domainUnreadable = error { throw error }
            }
        })
        defer { releaseLock(lock) }
        return try cache.withLock { (cached: inout CachedDomain?) throws(PrefsError) -> DomainSnapshot in
            // Whatever happens, what a suite kept of this domain is looked at again: the next read validates
            // the file (a write this process made is seen even where no event of it reaches the watch).
            // Invariant F6: a source reports a generation only for what it would return again. Whatever this
            // write changed in the cache (its own new file, or another's change the locked re-read found, which
            // the watch may have missed), the next read validates the file, and the path's generation moves, so
            // that a suite's first comparison, its engine's count of changes, sees it.
            let before = try? cached?.result.get()
            defer {
                if (try? cached?.result.get()) !== before {
                    noteChangedHere()
                }
            }
            var current = DomainSnapshot.missing
            var moveAside = false
            var existing: FileOwnership?
            do throws(PrefsError) {
                // Invariant W1: a write never trusts the watch (see loadForWrite).
                current = try loadForWrite(&cached, existing: &existing)
                // Another's change the watch missed, found under the lock: told before the transform runs, so
                // that a read the transform makes through a suite is not served what a suite kept.
                if (try? cached?.result.get()) !== before {
                    noteChangedHere()
                }
            } catch {
                guard case .domainUnreadable = error, policy == .moveUnreadableAside else { throw error }
                moveAside = true
            }
            var contents = current.contents
            try transformOwner.running(from: current) { () throws(PrefsError) in try transform(&contents) }
            if !moveAside && !current.exists && contents.isEmpty { return current }

            // Unchanged only when identical: `==` alone would also skip a change it cannot see
            // (-0.0 for 0.0, another Unicode normalization of an equal string).
            if !moveAside, current.exists, PropertyListValue.dictionary(contents, isIdenticalTo: current.contents) { return current }
            // Entries of another program's file that `contents` cannot hold are written back as they were.
            let shadowed = current.shadowed?.retained(in: .dictionary(contents))
            let bytes = try DomainLimits.encoded(contents, location: path, shadowed: shadowed)
            let aside = moveAside ? try keepUnreadableFileAside() : nil
            // A repaired file keeps the mode and owner of the unreadable one too.
            if moveAside, existing == nil, let info = try? system.stat(aside?.name ?? path), info.st_mode & S_IFMT == S_IFREG {
                existing = FileOwnership(info)
            }
            do throws(PrefsError) {
                try replaceFile(with: bytes, keeping: existing)
            } catch {
                // The rename may have happened (a durable write whose directory's fsync failed): the next read
                // validates the file, whatever it holds.
                cached = nil
                noteChangedHere()
                // Leave everything as it was: a regular file is still in place, so drop the second name it
                // was given; anything else was renamed away, so rename it back.
                if let aside {
                    if aside.wasRenamed { try? system.rename(aside.name, path) } else { try? system.unlink(aside.name) }
                }
                throw error
            }
            let written = DomainSnapshot(contents: contents, shadowed: shadowed)
            // The new file is recent, so the next load re-reads it anyway: keep its bytes and contents
            // (then not parsed again) without spending a `stat` on its identity now.
            cached = CachedDomain(unverifiedBytes: bytes, result: .success(written))
            return written
        }
    }

    /// Releases the lock ``acquireLock(beforeCreating:)`` took.
    func releaseLock(_ fd: Int32) {
        HeldDomainLocks.noteReleased(fd)
        _ = try? system.close(fd, path: lockPath)
    }

    /// Opens and exclusively locks the lock file, creating it (and the directory) when missing.
    /// - Parameter beforeCreating: Runs once the lock file is found missing, before anything is created:
    ///   throwing from it creates nothing. An existing lock file is opened without it.
    /// - Returns: The descriptor; ``releaseLock(_:)`` releases the lock.
    func acquireLock(beforeCreating: () throws(PrefsError) -> Void = {}) throws(PrefsError) -> Int32 {
        var createdDirectory = false
        // The lock file is opened as it is first; only when it is missing is it created (with its directory).
        var creates = false
        while true {
            let fd: Int32
            do {
                // For reading and writing, though `flock` needs neither on a local file system: on NFS, Linux makes
                // it a POSIX lock, and an exclusive one needs a descriptor open for writing (NFSv4 refuses it with
                // EBADF). The close of such a descriptor (`IN_CLOSE_WRITE`) is no event the library's watches take.
                fd = try system.open(lockPath, O_RDWR | O_NOFOLLOW | (creates ? O_CREAT | O_EXCL : 0), 0o600)
            } catch {
                // Made meanwhile by another writer: open it as it is.
                if creates && error == .fileExists {
                    creates = false
                    continue
                }
                if !creates && (error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR)) {
                    try beforeCreating()
                    creates = true
                    continue
                }
                if (error == .noSuchFileOrDirectory || error == PrefsErrno(rawValue: ENOTDIR)) && !createdDirectory {
                    try createDirectory()
                    createdDirectory = true
                    continue
                }
                throw .writeFailed(path: path, step: .openLockFile(lockPath), errno: error)
            }
            // Made here: mode 0600 whatever the process's umask (SPEC §2.2), which a umask such as 0277 would
            // make 0400, a lock file no later write of its owner could open for writing.
            if creates {
                do { try system.fchmod(fd, path: lockPath, 0o600) } catch {
                    _ = try? system.close(fd, path: lockPath)
                    throw .writeFailed(path: path, step: .openLockFile(lockPath), errno: error)
                }
            }
            // Which lock file this is: the same inode while the descriptor is open, so one `fstat` serves both
            // the check below and the one after the wait. A failure fails the write before any wait: without the
            // identity, a wait could be for this thread itself.
            let held: Glibc.stat
            do {
                held = try system.fstat(fd, path: lockPath)
            } catch {
                _ = try? system.close(fd, path: lockPath)
                throw .writeFailed(path: path, step: .lock(lockPath), errno: error)
            }
            let identity = HeldDomainLocks.Identity(held)
            // This thread holds the file's lock already, through another object for the same file: inside
            // that one's transform. Waiting would be for itself.
            if HeldDomainLocks.isHeldByCurrentThread(identity) {
                _ = try? system.close(fd, path: lockPath)
                throw TransformOwnership.nestedWrite(path: path, lockPath: lockPath)
            }
            do {
                try system.flock(fd, path: lockPath, LOCK_EX)
                // Someone may have removed the lock file while we waited: then our lock guards nothing.
                let linked = try? system.stat(lockPath)
                if let linked, linked.st_dev == held.st_dev, linked.st_ino == held.st_ino {
                    HeldDomainLocks.noteHeld(identity, fd: fd)
                    return fd
                }
                _ = try? system.close(fd, path: lockPath)
            } catch {
                _ = try? system.close(fd, path: lockPath)
                throw .writeFailed(path: path, step: .lock(lockPath), errno: error)
            }
        }
    }

    /// Creates the directory and any missing parents with mode 0700, whatever the process's umask (SPEC §2.2):
    /// one that a umask such as 0277 left 0500 would refuse the next level, and this user's every later write.
    private func createDirectory() throws(PrefsError) {
        var prefix = ""
        for component in PathBytes.components(directory) {
            prefix += "/" + component
            do {
                try system.mkdir(prefix, 0o700)
            } catch {
                guard error == .fileExists else {
                    throw .writeFailed(path: path, step: .createDirectory(prefix), errno: error)
                }
                continue
            }
            // Made here, as a directory (mkdir never follows a link at its last name): its mode set by its path.
            guard FileCreationMask.clears(0o700) else { continue }
            do {
                try system.chmod(prefix, 0o700)
            } catch {
                throw .writeFailed(path: path, step: .createDirectory(prefix), errno: error)
            }
        }
        guard let info = try? system.stat(directory), info.st_mode & S_IFMT == S_IFDIR else {
            throw .writeFailed(path: path, step: .createDirectory(directory), errno: PrefsErrno(rawValue: ENOTDIR))
        }
    }

    /// Creates the temporary file afresh, mode 0600. One left by a killed writer (or planted by
    /// someone else, with other permissions or another owner) is removed first rather than reused:
    /// the file becomes the domain file, and must be ours alone until it is given the replaced file's
    /// mode and owner (see ``keep(_:on:)``).
    private func createTemporaryFile() throws(PrefsErrno) -> Int32 {
        do {
            return try system.open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        } catch {
            guard error == .fileExists else { throw error }
            try system.unlink(temporaryPath)
            return try system.open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        }
    }

    /// Gives the temporary file the mode and owner of the file it replaces: an administrator's `chmod 644`
    /// of a system-wide file, or a user's file edited by root, must outlive the next write (SPEC §12). The
    /// owner is kept only where the writer may set it (root, or a group of the writer's own); elsewhere the
    /// file is the writer's, as any new file is. Only the permission bits are kept: set-user-ID, set-group-ID
    /// and sticky bits mean nothing on a property list, and a file made by root must not gain them.
    private func keep(_ existing: FileOwnership, on fd: Int32) throws(PrefsErrno) {
        if existing.owner != geteuid() || existing.group != getegid() {
            do {
                try system.fchown(fd, path: temporaryPath, existing.owner, existing.group)
            } catch where error == PrefsErrno(rawValue: EPERM) {
                // Not permitted (another user's file, written through its group): the file becomes the
                // writer's, in the old group when that is one of the writer's own.
                if existing.group != getegid() {
                    do {
                        try system.fchown(fd, path: temporaryPath, uid_t.max, existing.group)
                    } catch where error == PrefsErrno(rawValue: EPERM) {
                    }
                }
            }
        }
        // Changing the owner clears nothing of 0777, but is made first so that the mode is the last word.
        if existing.permissions != 0o600 || FileCreationMask.clears(0o600) {
            try system.fchmod(fd, path: temporaryPath, existing.permissions)
        }
    }

    /// Writes `bytes` to the temporary file and renames it over the domain file.
    /// - Parameter existing: The mode and owner of the file replaced, which the new file keeps; `nil` for a
    ///   new file, which stays 0600 and the writer's.
    private func replaceFile(with bytes: [UInt8], keeping existing: FileOwnership?) throws(PrefsError) {
        var step = PrefsError.Step.createTemporaryFile(temporaryPath)
        do throws(PrefsErrno) {
            let fd = try createTemporaryFile()
            do throws(PrefsErrno) {
                if let existing {
                    try keep(existing, on: fd)
                } else if FileCreationMask.clears(0o600) {
                    // A new file is 0600 whatever the process's umask (SPEC §2.2).
                    try system.fchmod(fd, path: temporaryPath, 0o600)
                }
                step = .writeTemporaryFile(temporaryPath)
                try system.writeAll(fd, path: temporaryPath, bytes)
                if durable {
                    step = .syncTemporaryFile(temporaryPath)
                    try system.fsync(fd, path: temporaryPath)
                }
            } catch {
                _ = try? system.close(fd, path: temporaryPath)
                throw error
            }
            step = .closeTemporaryFile(temporaryPath)
            try system.close(fd, path: temporaryPath)
            step = .renameOverDomainFile(temporaryPath)
            try system.rename(temporaryPath, path)
        } catch {
            try? system.unlink(temporaryPath)
            throw .writeFailed(path: path, step: step, errno: error)
        }
        if durable { try syncDirectory() }
    }

    /// Makes the rename itself durable. Once the rename has happened it cannot be undone, so a failure
    /// here is reported although the new contents are already in place.
    private func syncDirectory() throws(PrefsError) {
        do {
            let fd = try system.open(directory, O_RDONLY | O_DIRECTORY)
            defer { _ = try? system.close(fd, path: directory) }
            try system.fsync(fd, path: directory)
        } catch {
            throw .writeFailed(path: path, step: .syncDirectory(directory), errno: error)
        }
    }

    /// Gives an unreadable domain file a second name, `<name>.plist.unreadable-<seconds>[-n]`, before
    /// it is replaced: a hard link, so that the domain file stays in place until the rename of the new
    /// one replaces it atomically, and a failed write leaves everything as it was. (Something other
    /// than a regular file, such as a directory, is renamed instead.)
    /// - Returns: The new name, and whether the file was renamed to it rather than linked.
    private func keepUnreadableFileAside() throws(PrefsError) -> (name: String, wasRenamed: Bool) {
        let stamp = "\(path).unreadable-\(Int(Date().timeIntervalSince1970))"
        var candidate = stamp
        var counter = 1
        do {
            let isRegularFile = try system.stat(path).st_mode & S_IFMT == S_IFREG
            while true {
                // Whatever holds a name already, a dangling symbolic link included, is never replaced:
                // `lstat` sees the link itself, and `link` refuses an existing name (EEXIST) atomically.
                if (try? system.lstat(candidate)) == nil {
                    do {
                        if isRegularFile {
                            try system.link(path, candidate)
                        } else {
                            try system.rename(path, candidate)
                        }
                        return (candidate, !isRegularFile)
                    } catch where error == .fileExists {
                        // Taken since the lstat: try the next name.
                    }
                }
                counter += 1
                candidate = "\(stamp)-\(counter)"
            }
        } catch {
            throw .writeFailed(path: path, step: .keepUnreadableFileAside(candidate), errno: error)
        }
    }
}

/// The permission bits and owner of a domain file, which a write that replaces it keeps.
struct FileOwnership: Equatable {
    /// The permission bits alone (`0777`).
    let permissions: mode_t
    let owner: uid_t
    let group: gid_t

    init(_ info: Glibc.stat) {
        permissions = info.st_mode & 0o777
        owner = info.st_uid
        group = info.st_gid
    }
}

/// What identifies one version of a file, as far as `stat()` can tell.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec
    let changed: timespec

    init(_ info: Glibc.stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
            && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
    }

    /// Whether a later write could still leave this identity unchanged.
    ///
    /// File timestamps come from a coarse clock (a few milliseconds per tick; a whole second on some
    /// file systems), and a new file may get a freed inode number, so a write within the same tick as
    /// this version can produce an identical `stat()`. Once the tick has passed, any later write gets
    /// a later change time. Whole-second timestamps (no nanoseconds) get a longer window.
    var isRecent: Bool {
        // Invariant F4: identity with a recency window.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let newest = max(Self.nanoseconds(modified), Self.nanoseconds(changed))
        let window: Int64 = (changed.tv_nsec == 0 && modified.tv_nsec == 0) ? 2_500_000_000 : 100_000_000
        return Self.nanoseconds(now) - newest < window
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}

/// The last version of a domain file this process read or wrote.
struct CachedDomain {
    let identity: FileIdentity?
    let bytes: [UInt8]
    let result: Result<DomainSnapshot, PrefsError>
    /// Recorded when the version was read: a recent file must be re-read before the cache is trusted.
    let mayHaveChangedUnseen: Bool
    /// The watch's token taken before this version was read or validated; while the directory's token
    /// is still equal, nothing in it has changed.
    var watchToken: FreshnessToken?
    /// Whether the version was read from a regular file at the domain's path itself, no symbolic link,
    /// with no other hard link: only then is every change to it an event in the domain's directory, and
    /// a watch's token may stand in for a `stat()`.
    let eventsReachDirectory: Bool
    /// Whether this records that there was no file (see ``missing``).
    var isMissing = false

    init(identity: FileIdentity, bytes: [UInt8], result: Result<DomainSnapshot, PrefsError>, eventsReachDirectory: Bool) {
        self.identity = identity
        self.bytes = bytes
        self.result = result
        self.mayHaveChangedUnseen = identity.isRecent
        self.eventsReachDirectory = eventsReachDirectory
    }

    /// No file: what a read found last. A file created later is an event in the directory, and has an
    /// identity a `stat` finds.
    static let missing = CachedDomain(missing: ())

    private init(missing: Void) {
        identity = nil
        bytes = []
        result = .success(.missing)
        mayHaveChangedUnseen = false
        eventsReachDirectory = true
        isMissing = true
    }

    /// A version whose file identity is not known: trusted only after a re-read finds the same bytes.
    init(unverifiedBytes bytes: [UInt8], result: Result<DomainSnapshot, PrefsError>) {
        self.identity = nil
        self.bytes = bytes
        self.result = result
        self.mayHaveChangedUnseen = true
        self.eventsReachDirectory = false
    }
}
