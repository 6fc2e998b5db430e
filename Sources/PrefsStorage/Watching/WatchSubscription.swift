/// One watched file, as a ``WatchEngine`` keeps it.
struct WatchSubscription {
    /// Tells subscriptions apart, for the whole life of the engine.
    struct ID: Hashable, Comparable, Sendable {
        let value: Int
        static func < (lhs: ID, rhs: ID) -> Bool { lhs.value < rhs.value }
    }

    let id: ID
    let directory: String
    let fileName: String
    let filePath: String
    let fallback: DomainWatching.Fallback
    let pollingInterval: Duration
    let handler: @Sendable () -> Void
    /// The read freshness of the watched file, which this subscription may vouch for.
    let freshness: FileFreshness

    /// The directory watch: of `directory` itself, or of its deepest existing ancestor while a level is missing.
    var wd: Int32?
    /// The next path component below the watched ancestor, or `nil` when the directory itself is watched.
    var nextComponent: String?
    /// The watches of the directories above `directory`, while `wd` watches `directory` itself.
    var ancestors: [Int32] = []
    /// Whether the path was proven to lead to the watched directory, through real directories only
    /// (see ``WatchedPaths/watchPath(to:directoryWatch:inotify:)``).
    var proven = false
    /// The watch of the domain file's own inode: writes through another hard link are events only there.
    var fileWatch: Int32?
    /// Whether the domain file is something its watches cannot follow (a symbolic link, or a file whose
    /// inode could not be watched): the subscription then polls, and vouches for no read.
    var fileUnfollowable = false
    var polls = false
    var lastStamp: FileIdentity?
    var lastStampWasRecent = false

    init(id: ID, directory: String, fileName: String, fallback: DomainWatching.Fallback, pollingInterval: Duration,
         freshness: FileFreshness, handler: @escaping @Sendable () -> Void) {
        self.id = id
        self.directory = directory
        self.fileName = fileName
        self.filePath = directory == "/" ? "/" + fileName : directory + "/" + fileName
        self.fallback = fallback
        self.pollingInterval = pollingInterval
        self.freshness = freshness
        self.handler = handler
    }
}

/// The subscriptions of an engine, and those whose handler is due.
struct SubscriptionTable {
    private(set) var entries: [WatchSubscription.ID: WatchSubscription] = [:]
    private var lastID = 0
    /// Subscriptions whose file may have changed since their handler last ran.
    var dirty: Set<WatchSubscription.ID> = []

    var isEmpty: Bool { entries.isEmpty }

    /// A new identifier, never used before by this table.
    mutating func makeID() -> WatchSubscription.ID {
        lastID += 1
        return WatchSubscription.ID(value: lastID)
    }

    subscript(id: WatchSubscription.ID) -> WatchSubscription? {
        get { entries[id] }
        set { entries[id] = newValue }
    }

    mutating func remove(_ id: WatchSubscription.ID) -> WatchSubscription? {
        dirty.remove(id)
        return entries.removeValue(forKey: id)
    }

    /// The identifiers of the subscriptions for which `condition` holds, in the order they were made.
    func ids(where condition: (WatchSubscription) -> Bool) -> [WatchSubscription.ID] {
        entries.values.filter(condition).map(\.id).sorted()
    }

    /// The shortest polling interval of the subscriptions that poll, or `nil` when none does.
    var pollingInterval: Duration? { entries.values.filter(\.polls).map(\.pollingInterval).min() }

    /// Takes the subscriptions that are due, in the order they were made, with their handlers.
    mutating func takeDue() -> [(WatchSubscription.ID, @Sendable () -> Void)] {
        defer { dirty.removeAll() }
        return dirty.sorted().compactMap { id in entries[id].map { (id, $0.handler) } }
    }
}
