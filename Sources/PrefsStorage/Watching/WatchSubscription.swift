/// One watcher of a file, as a ``WatchEngine`` keeps it: who to tell, and how it asked to be served.
/// How the file is watched is not here but in its ``WatchedFile``, shared by every subscription to the path.
struct WatchSubscription {
    /// Tells subscriptions apart, for the whole life of the engine.
    struct ID: Hashable, Comparable, Sendable {
        let value: Int
        static func < (lhs: ID, rhs: ID) -> Bool { lhs.value < rhs.value }
    }

    let id: ID
    /// The watched file's path: the key of its ``WatchedFile``.
    let filePath: String
    let fallback: DomainWatching.Fallback
    let pollingInterval: Duration
    let handler: @Sendable () -> Void

    /// Whether this subscription must poll whatever its path's watches can do (a forced fallback).
    var forcesPolling: Bool { fallback != .none }
    /// Whether it may hear no inotify event at all (the fallbacks that stand for inotify failing).
    var refusesEvents: Bool { fallback == .inotifyUnavailable || fallback == .watchLimitReached }
}

/// One watched path, with its watch chain and its generation, shared by every subscription to it (SPEC §10:
/// one watch chain and one generation per path). Every event, resolution and poll is applied once per path,
/// whatever the number of subscriptions; what a subscription adds is counted here in O(1).
struct WatchedFile {
    /// A watched directory on the path, and the name in it that the path goes through next (the next
    /// directory, or the domain file's name in the directory itself).
    struct Link: Equatable {
        var wd: Int32
        var name: String
    }

    let directory: String
    let fileName: String
    let filePath: String
    /// The path's generation (the stamp reads compare), which the engine moves and vouches for.
    let freshness: FileFreshness

    /// The subscriptions to the path.
    var subscribers: Set<WatchSubscription.ID> = []
    /// How many of them force polling (their fallback is not `.none`): while any does, nothing is vouched.
    var forcing = 0
    /// How many of them may hear events: while none does, no watch is placed.
    var listening = 0
    /// The polling intervals of every subscriber, and of the forcing ones, with how many ask for each.
    var intervals: [Duration: Int] = [:]
    var forcingIntervals: [Duration: Int] = [:]

    /// The directory watch: of `directory` itself, or of its deepest existing ancestor while a level is missing.
    var wd: Int32?
    /// The next path component below the watched ancestor, or `nil` when the directory itself is watched.
    var nextComponent: String?
    /// Every watched directory on the path, from `/` down, each with the name the path takes in it: the
    /// events that may make the path lead elsewhere are those of these links (see ``WatchedPaths``).
    var chain: [Link] = []
    /// Whether the path was proven to lead to the watched directory, through real directories only, each
    /// watched top down through the ones above it (see ``WatchedPaths/resolve(_:inotify:)``).
    var proven = false
    /// The watch of the domain file's own inode: writes through another hard link are events only there.
    var fileWatch: Int32?
    /// Whether the domain file is something its watches cannot follow (a symbolic link, or a file whose
    /// inode could not be watched): the path then polls, and vouches for no read.
    var fileUnfollowable = false
    /// Whether the path's own watches cannot serve it (no inotify, unproven, events incomplete): every
    /// subscriber then polls.
    var pathPolls = false
    /// The inotify descriptor the path was last resolved with (-1: none, so it polls).
    var resolvedWith: Int32 = -1
    var lastStamp: FileIdentity?
    var lastStampWasRecent = false

    init(directory: String, fileName: String, filePath: String, freshness: FileFreshness) {
        self.directory = directory
        self.fileName = fileName
        self.filePath = filePath
        self.freshness = freshness
    }

    /// Whether the engine's thread polls the path: its watches cannot serve it, or a subscriber forces it.
    var polls: Bool { pathPolls || forcing > 0 }

    /// The shortest interval among the subscribers that poll, or `nil` when none does.
    var pollingInterval: Duration? {
        if pathPolls { return intervals.keys.min() }
        return forcing > 0 ? forcingIntervals.keys.min() : nil
    }

    mutating func add(_ subscription: WatchSubscription) {
        subscribers.insert(subscription.id)
        intervals[subscription.pollingInterval, default: 0] += 1
        if subscription.forcesPolling {
            forcing += 1
            forcingIntervals[subscription.pollingInterval, default: 0] += 1
        }
        if !subscription.refusesEvents { listening += 1 }
    }

    mutating func remove(_ subscription: WatchSubscription) {
        subscribers.remove(subscription.id)
        Self.decrement(&intervals, subscription.pollingInterval)
        if subscription.forcesPolling {
            forcing -= 1
            Self.decrement(&forcingIntervals, subscription.pollingInterval)
        }
        if !subscription.refusesEvents { listening -= 1 }
    }

    private static func decrement(_ counts: inout [Duration: Int], _ key: Duration) {
        if let count = counts[key], count > 1 { counts[key] = count - 1 } else { counts[key] = nil }
    }
}

/// The subscriptions of an engine, the paths they watch, and the paths whose subscribers are due.
struct SubscriptionTable {
    private(set) var entries: [WatchSubscription.ID: WatchSubscription] = [:]
    /// One per watched path, while it has subscribers.
    var files: [String: WatchedFile] = [:]
    private var lastID = 0
    /// Paths that may have changed since their subscribers' handlers last ran (all of them are told, those
    /// that learn of changes by polling included: a handler's call may be spurious).
    var dirty: Set<String> = []

    var isEmpty: Bool { entries.isEmpty }

    /// A new identifier, never used before by this table.
    mutating func makeID() -> WatchSubscription.ID {
        lastID += 1
        return WatchSubscription.ID(value: lastID)
    }

    subscript(id: WatchSubscription.ID) -> WatchSubscription? {
        entries[id]
    }

    mutating func insert(_ subscription: WatchSubscription) {
        entries[subscription.id] = subscription
    }

    mutating func remove(_ id: WatchSubscription.ID) -> WatchSubscription? {
        entries.removeValue(forKey: id)
    }

    /// The shortest polling interval of the paths that poll, or `nil` when none does: one look per path.
    var pollingInterval: Duration? { files.values.compactMap(\.pollingInterval).min() }

    /// Takes the subscriptions that are due, in the order they were made, with their handlers.
    mutating func takeDue() -> [(WatchSubscription.ID, @Sendable () -> Void)] {
        defer { dirty.removeAll() }
        var due: Set<WatchSubscription.ID> = []
        for path in dirty {
            if let file = files[path] { due.formUnion(file.subscribers) }
        }
        return due.sorted().compactMap { id in entries[id].map { (id, $0.handler) } }
    }
}
