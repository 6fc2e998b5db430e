import Observation
import PrefsPropertyList
import PrefsStorage
import Synchronization

/// `RVS_PersistentPrefs` works with the toolchain's Observation framework: `withObservationTracking`
/// (and so SwiftUI on platforms that have it) sees the entries an app reads and is told when they change.
///
/// - Reading ``RVS_PersistentPrefs/values`` or ``RVS_PersistentPrefs/count`` registers access to the whole
///   collection; reading an entry through the subscript (and so any typed property built on it) registers
///   access to that entry alone. Code that read only `self["volume"]` is not told of a write that changed
///   only `userName`. (One exception: a tracking that begins on another thread while a whole assignment
///   of ``RVS_PersistentPrefs/values`` over etcd waits for its round trip may be told that its entry changed.)
/// - A successful write through the instance triggers `onChange` for the entries it wrote (for an
///   assignment of the whole ``RVS_PersistentPrefs/values``, those that differ) and for the whole
///   collection. With ``RVS_PersistentPrefs/watchesExternalChanges`` on, so does a change made elsewhere,
///   for the entries that differ from what the instance last saw.
/// - Rejected writes, reads and ``RVS_PersistentPrefs/flush()`` trigger nothing.
/// - `onChange` runs once the write is complete, so a read inside it sees the new value: for a write through
///   the instance, on the thread that wrote; for a change made elsewhere, on the main actor when
///   ``RVS_PersistentPrefs/watchesExternalChanges`` was turned on on the main actor (a `@MainActor` model),
///   as a main-actor key-path handler is told (SPEC §12), and otherwise on a delivery thread. A write made
///   inside it is told after it returns, as a write made inside a key-path observer's handler is.
extension RVS_PersistentPrefs: Observable {}

/// The registrar of one instance, and the key paths that stand for its entries.
final class SwiftObservationSupport: Sendable {
    let registrar = ObservationRegistrar()
    /// One key path per entry name, made once: reads are frequent and a key path with a subscript
    /// argument is an allocation.
    private let entryKeyPaths = PrefsMutex<[String: any KeyPath<RVS_PersistentPrefs, Void> & Sendable]>([:])

    /// The key path that stands for the whole collection, made once.
    static let wholeCollection: any KeyPath<RVS_PersistentPrefs, [String: Any]> & Sendable = \RVS_PersistentPrefs.values

    /// Where changes made elsewhere are told to Swift Observation: the main actor's queue of calls when
    /// watching was turned on on the main actor, else `nil` (the delivery thread).
    private let externalChangeIsolation = PrefsMutex<HandlerIsolation?>(nil)

    /// The one queue of calls to the main actor that every instance's Swift Observation calls for changes
    /// made elsewhere share: one change heard by 2,000 instances then starts one task on the main actor that
    /// tells them all, in the order they were queued, not 2,000 tasks. Each instance still queues one call at
    /// most (see `pendingExternalChanges`).
    private static let mainActorCalls = HandlerIsolation(MainActor.shared)

    init() {}

    /// Notes where watching was turned on: on the main actor, changes made elsewhere are then told to Swift
    /// Observation there, so that the registrar's `willSet` and `didSet`, and the `onChange` of a main-actor
    /// model's tracking, never run off the main actor for them; elsewhere, on the delivery thread.
    func noteWatchingTurnedOn(onMainActor: Bool) {
        externalChangeIsolation.withLock { isolation in
            if !onMainActor {
                isolation = nil
            } else {
                isolation = Self.mainActorCalls
            }
        }
    }

    /// The actor on which a change made elsewhere is told to Swift Observation; `nil`: where it is delivered.
    var isolationForExternalChanges: HandlerIsolation? { externalChangeIsolation.withLock { $0 } }

    /// The entries changed elsewhere not yet told on the actor, and whether a call to tell them is queued there.
    ///
    /// One call at most is queued per instance, and the entries of later changes join it: Swift Observation is
    /// only told that tracked values changed, which one call says for all of them. So a program whose main loop
    /// never drains the main actor's queue (a GLib loop that turned watching on from its main thread) holds one
    /// queued call, not one per change for the life of the process.
    private let pendingExternalChanges = PrefsMutex<(entries: Set<String>, queued: Bool)>(([], false))

    /// Adds `entries` to those waiting to be told; returns whether a call must be queued to tell them.
    func noteExternalChange(ofEntries entries: Set<String>) -> Bool {
        pendingExternalChanges.withLock { pending in
            // The first change noted is taken as it is (one change heard by thousands of instances is one set).
            if pending.entries.isEmpty { pending.entries = entries } else { pending.entries.formUnion(entries) }
            guard !pending.queued else { return false }
            pending.queued = true
            return true
        }
    }

    /// How many calls this instance has queued to tell changes made elsewhere and not yet run: 0 or 1.
    var queuedExternalChangeCalls: Int { pendingExternalChanges.withLock { $0.queued ? 1 : 0 } }

    /// The entries waiting to be told, taken by the queued call that tells them.
    func takeExternalChanges() -> Set<String> {
        pendingExternalChanges.withLock { pending in
            defer { pending = ([], false) }
            return pending.entries
        }
    }

    /// The key paths made so far for the entries among `names` (by ``keyPath(forEntry:)``, which every tracked
    /// read of an entry goes through), sorted by name, under one lock: an entry no read ever registered can have
    /// no tracking to tell, so a change of it is told through the whole collection's key path alone.
    func existingKeyPaths(forEntries names: Set<String>) -> [any KeyPath<RVS_PersistentPrefs, Void> & Sendable] {
        entryKeyPaths.withLock { paths in
            guard !paths.isEmpty else { return [] }
            return names.sorted().compactMap { paths[$0] }
        }
    }

    /// Whether any read has registered a single entry with Swift Observation (see ``keyPath(forEntry:)``),
    /// tracked or not (the registrar does not say whether a tracking is under way): until one has, no tracking
    /// can be told of a single entry, only of the whole collection.
    var tracksEntries: Bool { entryKeyPaths.withLock { !$0.isEmpty } }

    /// The entries any read has registered with Swift Observation so far.
    var trackedEntries: Set<String> { entryKeyPaths.withLock { Set($0.keys) } }

    func keyPath(forEntry name: String) -> any KeyPath<RVS_PersistentPrefs, Void> & Sendable {
        entryKeyPaths.withLock { paths in
            if let existing = paths[name] { return existing }
            let made: any KeyPath<RVS_PersistentPrefs, Void> & Sendable = \RVS_PersistentPrefs.[observedEntry: name]
            paths[name] = made
            return made
        }
    }
}

extension RVS_PersistentPrefs {
    /// Stands for one entry in Swift Observation: a key path per entry name, so that access to and changes
    /// of different entries are told apart. It has no value of its own.
    subscript(observedEntry name: String) -> Void { () }

    /// Registers, for `withObservationTracking`, a read of one entry, or of the whole collection (`nil`).
    func registerObservedAccess(toEntry name: String?) {
        if let name {
            swiftObservation.registrar.access(self, keyPath: swiftObservation.keyPath(forEntry: name))
        } else {
            swiftObservation.registrar.access(self, keyPath: SwiftObservationSupport.wholeCollection)
        }
    }

    /// Tells Swift Observation that a successful write or a change made elsewhere changed `entries`
    /// (and so the whole collection).
    func notifyObservedChange(ofEntries entries: Set<String>) {
        let registrar = swiftObservation.registrar
        let paths = swiftObservation.existingKeyPaths(forEntries: entries)
        for path in paths { registrar.willSet(self, keyPath: path) }
        registrar.willSet(self, keyPath: SwiftObservationSupport.wholeCollection)
        registrar.didSet(self, keyPath: SwiftObservationSupport.wholeCollection)
        for path in paths { registrar.didSet(self, keyPath: path) }
    }

    /// The names of the entries that differ between two versions of the collection.
    static func entriesThatDiffer(_ old: [String: PropertyListValue], _ new: [String: PropertyListValue]) -> Set<String> {
        // Each side walked once, with no set of every name built first: a whole replacement's write tells this.
        var differing = Set<String>()
        for (name, value) in old where !PropertyListValue.same(value, new[name]) { differing.insert(name) }
        for name in new.keys where old[name] == nil { differing.insert(name) }
        return differing
    }
}
