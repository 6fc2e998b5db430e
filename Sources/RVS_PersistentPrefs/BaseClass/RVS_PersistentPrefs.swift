import Foundation
import Synchronization

/// A small, validated preferences bucket: one string-keyed dictionary of property-list values,
/// kept under a storage key in a defaults domain.
///
/// Subclass it, list the entry names you allow in ``keys``, and expose typed computed properties
/// over the dictionary:
///
/// ```swift
/// final class AppPreferences: RVS_PersistentPrefs {
///     override var keys: [String] { ["launchCount", "appearance"] }
///     var launchCount: Int {
///         get { self["launchCount"] as? Int ?? 0 }
///         set { self["launchCount"] = newValue }
///     }
/// }
/// ```
///
/// Every read is fresh: it sees every write completed before it, in this process or any other.
/// Every write is validated first (allowed names, property-list values), and nothing is written
/// when validation fails. Operations never throw: each one sets ``lastError``, which is `nil` after
/// a success. Observers registered with ``PrefsObserving/observe(_:options:isolation:changeHandler:)`` hear
/// about successful writes made through the instance.
///
/// An instance may be used from several threads; its operations are serialized. The class is not
/// declared `Sendable`, so that subclasses need not restate an unchecked conformance; to share one
/// instance between threads in Swift 6, keep it where the compiler lets you (an actor, a
/// `nonisolated(unsafe)` constant), knowing that the instance itself is safe.
///
/// ## Topics
///
/// ### Creating a Collection
/// - ``init()``
/// - ``init(key:values:)``
/// - ``init(key:values:suite:)``
///
/// ### Configuring Storage
/// - ``keys``
/// - ``key``
/// - ``groupID``
/// - ``groupContainerDirectory``
/// - ``applicationDomainName``
/// - ``durableWrites``
/// - ``userDefaults``
///
/// ### Reading and Writing
/// - ``values``
/// - ``subscript(_:)``
/// - ``count``
/// - ``modify(_:_:)-(String,_)``
///
/// ### Versioned Collections
/// - <doc:SchemaEvolution>
/// - ``schemaVersion``
/// - ``migrate(_:from:)``
///
/// ### Typed Entries
/// - <doc:TypedEntries>
/// - ``Entry``
/// - ``value(of:)``
/// - ``updates(of:initial:)``
/// - ``modify(_:_:)-(KeyPath<Self,RVS_PersistentPrefs.Entry<Value>>,_)``
/// - ``reset(_:)``
/// - ``isDefaultValue(_:)``
/// - ``EntryUpdates``
///
/// ### Describing the Collection to Tools
/// - ``schema``
/// - ``PrefsSchema``
///
/// ### Settings an Administrator Forces
/// - <doc:Administration>
/// - ``isForced(_:)``
///
/// ### Handling Errors
/// - ``lastError``
/// - ``lastWarnings``
/// - ``PrefsError``
/// - ``Errno``
///
/// ### Reloading and Removing
/// - ``flush()``
/// - ``clear()``
/// - ``deleteAll()``
///
/// ### Observing Changes
/// - <doc:Observation>
/// - ``observe(_:options:isolation:changeHandler:)``
/// - ``changes``
/// - ``changeBufferLimit``
/// - ``watchesExternalChanges``
/// - ``withoutNotifying(_:)``
open class RVS_PersistentPrefs {
    // MARK: State of this instance

    /// Serializes the operations of this instance. Recursive, so that an observer may read or write
    /// the instance from inside a notification.
    let operationLock = OperationLock()
    /// Serializes this instance's writes (and its deliveries of changes made elsewhere, and the switches that
    /// change what they are told against) among themselves, across the whole write, while the operation lock
    /// is released for an optimistic domain's `modify` (see ``perform(_:)``). Taken before the operation lock,
    /// and only by a thread that does not hold that (see ``exclusively(_:)``). Recursive, for a `modify`
    /// transform that misuses its instance on its own thread (which then fails).
    let writeLock = OperationLock()
    // Every access to these is under `operationLock`, which the compiler cannot see; unchecked, so that a
    // read of an unchanged collection does not pay a dynamic exclusivity check for each.
    @exclusivity(unchecked) private var storageKey = ""
    /// The outcome of the last operation, boxed: clearing it, which every successful read does, is then a
    /// pointer store instead of copies of a many-payload enum.
    @exclusivity(unchecked) private var error: OperationError?
    /// The warnings of the last operation (see ``lastWarnings``); guarded by `operationLock`.
    @exclusivity(unchecked) private var warnings: [PrefsError] = []
    /// Whether `warnings` is not empty, read by every read without touching the array.
    @exclusivity(unchecked) private var hasWarnings = false
    @exclusivity(unchecked) private var nativeCache: NativeCache?
    /// The suite handed to ``init(key:values:suite:)``, which the default ``userDefaults`` returns.
    private let givenSuite: DefaultsSuite?
    let observers = ObserverList()
    let swiftObservation = SwiftObservationSupport()
    let externalChanges = ExternalChanges()
    /// The changes waiting to be told, and what telling them needs. Guarded by `operationLock`.
    @exclusivity(unchecked) var notifications = NotificationState()
    /// The thread running this instance's `modify` transform, while it runs (0: none): anything that
    /// would use the instance's storage from that thread fails at once instead of waiting for itself.
    let transformThread = Atomic<UInt>(0)
    /// Whether the running transform used the instance: it then fails. Touched only by the thread in
    /// `transformThread`, which may run it without the operation lock (an optimistic domain's `modify`).
    let transformMisusedInstance = Atomic<Bool>(false)
    /// How many times this instance converted a collection to native values to read an observer's key path
    /// over it, in a delivery: counted so that tests can prove that instances hearing one change share one
    /// conversion (see ``DeliveredCollection``).
    let deliveryConversions = Atomic<Int>(0)

    /// The native form of the collection last read, kept while its snapshot is current, so that a read
    /// of an unchanged domain converts nothing.
    private final class NativeCache {
        let snapshot: DomainSnapshot
        let key: String
        let values: [String: Any]
        /// The suite that found it, and the read it keeps (see `DefaultsSuite.Found.keptAt`):
        /// while the suite says nothing changed since, the values are returned without a search.
        let suite: DefaultsSuite
        var keptAt: DefaultsSuite.KeptRead?

        init(snapshot: DomainSnapshot, key: String, values: [String: Any], suite: DefaultsSuite, keptAt: DefaultsSuite.KeptRead?) {
            (self.snapshot, self.key, self.values, self.suite, self.keptAt) = (snapshot, key, values, suite, keptAt)
        }
    }

    /// A ``lastError`` other than `nil`.
    private final class OperationError {
        let error: PrefsError
        init(_ error: PrefsError) { self.error = error }
    }

    /// The storage key: the name of this instance's whole dictionary in the defaults domain.
    ///
    /// Distinct from the entry names in ``keys``. Changing it redirects later operations; it does not
    /// rename or migrate the stored collection.
    open var key: String {
        get {
            operationLock.lock()
            defer { operationLock.unlock() }
            return storageKey
        }
        // Exclusively: a write in progress keeps the storage key it started with until it is told.
        set { exclusively { storageKey = newValue } }
    }

    /// The outcome of the most recent operation: `nil` after a success, else what went wrong.
    ///
    /// Every operation sets it, reads included: reading ``values``, the subscript or ``count`` starts
    /// a new operation and can clear an earlier error. With several threads, the most recent operation
    /// may be another thread's. The reads the library makes to notify observers leave it unchanged;
    /// operations a handler performs itself set it.
    ///
    /// A problem that did not stop the operation, such as an administrator's file that was ignored, is
    /// never here: it is in ``lastWarnings``. So `if let error = prefs.lastError` reports failures only.
    ///
    /// It is settable, so that a subclass may report failures of its own, for example with
    /// ``PrefsError/unknownError(error:)``.
    open var lastError: PrefsError? {
        get { locked { error?.error } }
        set {
            // Consumed, not borrowed: a `nil` (every successful operation's) then leaves nothing to destroy, where
            // destroying the optional error costs the unchanged read as much as the rest of this setter.
            let boxed: OperationError?
            switch consume newValue {
            case .none: boxed = nil
            case .some(let error): boxed = OperationError(error)
            }
            operationLock.lock()
            defer { operationLock.unlock() }
            error = boxed
        }
    }

    /// The problems the most recent operation met that did not stop it: empty after most operations.
    ///
    /// Every operation replaces it, as it sets ``lastError``. It holds, for example:
    /// - ``PrefsError/administratorFileIgnored(path:reason:)`` for an administrator's system or managed
    ///   file the operation ignored, with its path and why (an owner or mode others could have changed, a
    ///   file that is not a property list): the operation used the other domains' values;
    /// - ``PrefsError/userDefaultsUnavailable(reason:)`` when there is no preferences directory (a
    ///   service with no usable home and no `STATE_DIRECTORY`): reads still return the administrator's
    ///   settings, while writes fail with the same error in ``lastError``.
    ///
    /// ```swift
    /// prefs.appearance = "dark"
    /// if let error = prefs.lastError { print("not saved:", error) }
    /// for warning in prefs.lastWarnings { print("warning:", warning) }
    /// ```
    public var lastWarnings: [PrefsError] {
        locked { warnings }
    }

    /// Replaces ``lastWarnings`` with the suite's standing warnings and `problems`. Caller holds the
    /// operation lock.
    @inline(never)
    func keepWarnings(_ problems: [PrefsError], of suite: DefaultsSuite) {
        warnings = suite.standingWarnings + problems
        hasWarnings = !warnings.isEmpty
    }

    /// Replaces ``lastWarnings`` with the suite's standing warnings, for a read that found no problem: on
    /// the path of every read, so two loads of flags when there is nothing to say (no array is retained).
    @inline(__always)
    func keepWarnings(of suite: DefaultsSuite) {
        if hasWarnings || suite.hasStandingWarnings { keepWarnings([], of: suite) }
    }

    /// The entry names this subclass allows. Override with a stable list.
    ///
    /// By default, the names of the subclass's `@Entry` properties (see ``Entry``), sorted; the base
    /// class itself allows none. Every `@Entry` name is allowed even when an override leaves it out,
    /// so an override lists only untyped names (`super.keys + ["legacy"]` keeps `keys` complete).
    /// Reads keep names written by older versions or other tools, so a subclass can migrate or remove them.
    ///
    /// While such a name is stored, subscript writes and initializer merges that set an entry, and
    /// in-place changes of ``values`` that keep it, fail with
    /// ``PrefsError/incorrectKeys(invalidElements:)`` naming it. A subscript write
    /// that only removes entries is allowed, so `prefs["oldName"] = nil` clears the way, as does
    /// assigning a whole ``values`` without it.
    open var keys: [String] { declaredEntryNames }

    /// The defaults suite this instance reads and writes: the one given to ``init(key:values:suite:)``,
    /// else the application domain or the group suite selected by ``groupID``, over the global domain
    /// and this process's arguments.
    ///
    /// To use another suite, for example one over an ``InMemoryDomainStorage`` in tests, pass it to
    /// ``init(key:values:suite:)`` (which keeps your class `final`), or override this property.
    /// Returning `nil` makes every operation fail with ``PrefsError/userDefaultsUnavailable(reason:)``;
    /// so does a ``groupID`` or ``applicationDomainName`` that cannot name a domain, for the default.
    ///
    /// It is evaluated on every operation, including the load and merge that `super.init` performs:
    /// an override must use only state set before it calls `super.init`.
    open var userDefaults: DefaultsSuite? {
        if isRunningOwnTransform {
            // Reached from inside this instance's `modify` transform, while the domain is locked: using the
            // suite would wait for itself. The transform fails instead (see `modify`).
            transformMisusedInstance.store(true, ordering: .relaxed)
            return nil
        }
        if let givenSuite { return givenSuite }
        if let resolved = Self.resolvedConfiguredSuite { return resolved }
        do {
            return try Self.configuredSuite()
        } catch {
            return nil
        }
    }

    /// The number of entries in the collection, read afresh (zero when the read fails; see ``lastError``).
    open var count: Int { values.count }

    // MARK: Schema version (see SchemaVersion.swift)

    /// The version of the collection's layout this class reads and writes: 0 unless overridden.
    ///
    /// Raise it when a release restructures the collection, and override ``migrate(_:from:)`` to bring
    /// an older collection to it. The version is kept beside the collection in the same domain (under
    /// the storage key `<key>.schemaVersion`), never among its entries; a collection stored without one
    /// is version 0. A collection stored by a newer version is read as it is, and writes to it fail
    /// with ``PrefsError/collectionFromNewerVersion(stored:supported:)``. See <doc:SchemaEvolution>.
    open class var schemaVersion: Int { 0 }

    /// Brings a collection stored by schema version `version` to this class's ``schemaVersion``; does
    /// nothing unless overridden.
    ///
    /// It runs once per collection, whichever process gets there first: at the first operation of an
    /// instance whose class is newer than the stored collection, as one locked update of the domain that
    /// re-reads the stored version under the lock. Change `values` in place; the result is checked as a write
    /// is (property-list values; the names it adds, against ``keys``; the values it made, against the entries'
    /// constraints), then stored with the new version, and replaces the collection whole. Over a backend that retries on conflict
    /// (etcd) it may run more than once, even on two threads at a time, and its result is stored once: keep it a
    /// function of `values` and `version`, with no other effect. It runs while the domain is locked against
    /// every other writer: do not use this instance, or any instance over the same domain, inside it.
    /// - Parameters:
    ///   - values: The stored collection, as native values; change it in place.
    ///   - version: The schema version it was stored by (0 for a collection stored without one).
    open func migrate(_ values: inout [String: Any], from version: Int) {}

    let schemaState = SchemaState()

    // MARK: Initialization

    /// Loads the collection stored under the subclass's unqualified type name.
    ///
    /// A missing collection is empty, without error. Inspect ``lastError`` for a failed read.
    /// Renaming the class therefore moves it to a new, empty collection; pass the old name to
    /// ``init(key:values:)`` to keep the stored one.
    public init() {
        storageKey = Self.defaultStorageKey
        givenSuite = nil
        _ = values
    }

    /// Loads the collection stored under `key`, and merges `values` into it, supplied entries winning.
    ///
    /// Existing entries not named in `values` are kept. The merge is validated and saved as one
    /// locked read-modify-write; if the load fails or validation rejects the entries, nothing is
    /// written. Inspect ``lastError`` right after construction.
    ///
    /// Do not pass defaults meant as fallbacks: they overwrite the stored values at every launch. Give
    /// fallbacks in typed getters (`self["name"] as? Int ?? 0`) or in the suite's registration domain.
    ///
    /// When the persistent domain holds nothing under `key` yet, the merge starts from the collection
    /// the global or registration domain supplies, and that collection, with the supplied entries, is
    /// stored. The registration domain itself is never written.
    ///
    /// - Parameters:
    ///   - key: The storage key; `nil` (the default) means the subclass's unqualified type name.
    ///   - values: Entries to merge; `nil`, `[:]` or omitted only loads.
    public init(key: String! = nil, values: [String: Any]! = [:]) {
        storageKey = key ?? Self.defaultStorageKey
        givenSuite = nil
        load(merging: values)
    }

    /// Like ``init(key:values:)``, over `suite` instead of the suite the process-wide settings select:
    /// for tests over an ``InMemoryDomainStorage``, or a program that keeps several suites, without
    /// subclassing (so an app's class can stay `final`).
    ///
    /// ```swift
    /// let suite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])
    /// let prefs = AppPreferences(key: "test", suite: suite)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The storage key; `nil` (the default) means the subclass's unqualified type name.
    ///   - values: Entries to merge; `nil`, `[:]` or omitted only loads.
    ///   - suite: The suite every operation of the instance uses (unless a subclass overrides
    ///     ``userDefaults``).
    public init(key: String! = nil, values: [String: Any]! = [:], suite: DefaultsSuite) {
        storageKey = key ?? Self.defaultStorageKey
        givenSuite = suite
        load(merging: values)
    }

    /// What the initializers do once the instance is set up: load, then merge `values` if any.
    private func load(merging values: [String: Any]?) {
        _ = self.values
        if let suite = userDefaults {
            enforceConstraints(EntryRegistry.registry(of: self).constraints, in: suite, storageKey: key)
        }
        if lastError == nil, let values, !values.isEmpty {
            perform(.entries(values.mapValues { Optional($0) }))
        }
    }

    private static var defaultStorageKey: String {
        String(describing: self).split(separator: ".").last.map(String.init) ?? "RVS_PersistentPrefs"
    }

    // MARK: Reading and writing

    /// The whole collection: read afresh through the search list, or replaced after validation.
    ///
    /// A read returns `[:]` for a missing collection (no error), and `[:]` with ``lastError`` set when
    /// the domain cannot be read or the stored value is not a dictionary. Values come back as native
    /// Swift values (`Bool`, `Int`, `Double`, `String`, `Date`, `Data`, `[Any]`, `[String: Any]`).
    ///
    /// Assigning validates every entry first: names must be in ``keys`` and values must be
    /// property-list values; a rejected assignment changes nothing and notifies nobody. Assigning `[:]`
    /// removes the collection from the writable domain. Assigning deliberately replaces even an
    /// unreadable domain file, which is first moved aside.
    ///
    /// An in-place change such as `prefs.values["appearance"] = "dark"` reads, changes and assigns the
    /// whole collection, and writes nothing if the read failed. Assigning is last-writer-wins across
    /// processes: it discards another process's concurrent changes. Prefer the subscript for single
    /// entries: it updates one entry atomically, keeping other processes' changes to other entries.
    ///
    /// A value for the storage key in the argument domain (`-<storageKey> …` on the command line)
    /// shadows the written collection: reads return the argument's value, whatever is written.
    public var values: [String: Any] {
        get {
            registerObservedAccess(toEntry: nil)
            return locked { read() }
        }
        set { perform(.replacement(newValue, repairing: .moveUnreadableAside)) }
        _modify {
            operationLock.lock()
            defer { operationLock.unlock() }
            var collection = read()
            let readSucceeded = lastError == nil
            yield &collection
            if readSucceeded { perform(.replacement(collection, repairing: .failIfUnreadable)) }
        }
    }

    /// One entry of the collection: read afresh, or updated atomically without touching the others.
    ///
    /// Assigning `nil` removes the entry. The update re-reads the stored collection under the domain's
    /// lock and changes only this entry, so processes updating different entries all keep their
    /// changes. It is validated like ``values``, and writes nothing when the stored collection cannot
    /// be read. When nothing is stored under the storage key yet, the update starts from the
    /// collection the global or registration domain supplies, as ``init(key:values:)`` does.
    /// - Parameter entry: An entry name from ``keys`` (not the storage key).
    /// - Returns: The entry's value as a native Swift value, or `nil` when the collection has no such
    ///   entry or cannot be read (see ``lastError``).
    public subscript(_ entry: String) -> Any? {
        get {
            registerObservedAccess(toEntry: entry)
            return locked { read() }[entry]
        }
        set { perform(.entries([entry: newValue])) }
    }

    // MARK: Utilities

    /// Reloads the collection and updates ``lastError``; writes nothing and notifies nobody.
    ///
    /// The name is historical: it forces no disk write, since every write is already on disk when it
    /// returns.
    public func flush() {
        _ = values
    }

    /// Removes this collection from the writable domain; other storage keys in the domain stay.
    ///
    /// Values for this storage key in the argument, global or registration domain become visible
    /// again. Like assigning `[:]` to ``values``, which it is: observers are notified even when
    /// nothing was stored. Over an unreadable domain file, the file is first moved aside, so the
    /// collections of other storage keys survive only in the moved-aside file (see
    /// ``PrefsError/domainUnreadable(path:reason:)``).
    public func clear() {
        values = [:]
    }

    // MARK: Operations

    @discardableResult
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        operationLock.lock()
        defer { operationLock.unlock() }
        return try body()
    }

    /// Runs `body` under the operation lock, and, when this thread does not hold that lock already, under the
    /// write lock taken first: a write (``perform(_:)``), the delivery of a change made elsewhere, or a switch
    /// of what they are told against (``key``, ``watchesExternalChanges``), which must not run while another
    /// thread's write waits for its domain without the operation lock. A thread holding the operation lock
    /// (inside a handler, ``withoutNotifying(_:)``, or the `values` accessor's read-modify-write) never waits
    /// for the write lock: its holder may be waiting for the operation lock to tell its write.
    @discardableResult
    func exclusively<Result>(_ body: () throws -> Result) rethrows -> Result {
        if operationLock.isHeldByCurrentThread { return try locked(body) }
        writeLock.lock()
        defer { writeLock.unlock() }
        return try locked(body)
    }

    /// Runs one operation: clears ``lastError`` and ``lastWarnings``, and records what `body` throws there.
    /// - Parameter notifies: Whether `body` may run observers' handlers, whose own operations set
    ///   ``lastError`` and ``lastWarnings`` meanwhile: then both are set again after a success (a `body`
    ///   that cannot notify sets the warnings it finds itself).
    /// - Parameter found: The warnings `body` found itself (a write's, before its lock), set after a success
    ///   instead of looking for them again; `nil`: looked for after `body`.
    func operation<Result>(failure: Result, notifies: Bool = true, warnings found: (() -> [PrefsError]?)? = nil,
                           _ body: () throws(PrefsError) -> Result) -> Result {
        // Through the property, so that a subclass's override of `lastError` (an observer, say) hears it.
        lastError = nil
        if hasWarnings {
            warnings = []
            hasWarnings = false
        }
        do {
            let result = try body()
            if notifies {
                // A success over an administrator's broken file is a success: what went wrong is a warning,
                // found after handlers' own operations.
                lastError = nil
                warnings = found?() ?? userDefaults?.warnings(forCollection: key) ?? []
                hasWarnings = !warnings.isEmpty
            }
            return result
        } catch {
            lastError = error
            return failure
        }
    }

    func collection() throws(PrefsError) -> StoredCollection {
        // Through the property, so that a subclass's override of `key` is honoured.
        let storageKey = key
        let collection = StoredCollection(suite: try suiteForOperation(), storageKey: storageKey)
        try prepareSchema(of: collection, writing: false)
        return collection
    }

    /// The suite an operation uses: ``userDefaults``, through the property so that a subclass's override
    /// is honoured; refused from inside this instance's own `modify` transform.
    func suiteForOperation() throws(PrefsError) -> DefaultsSuite {
        if isRunningOwnTransform {
            transformMisusedInstance.store(true, ordering: .relaxed)
            throw ModifyMisuse.error(storageKey: storageKey)
        }
        guard let suite = userDefaults else {
            // The default is nil when the configuration names no usable domain: say why.
            if givenSuite == nil { _ = try Self.configuredSuite() }
            throw .userDefaultsUnavailable(reason: "the instance's userDefaults is nil")
        }
        return suite
    }

    /// Reads the collection through the search list, converting it to native values only when the
    /// domain changed since the last read.
    private func read() -> [String: Any] {
        if notifications.recording != nil { notifications.recording!.untyped = true }
        if let pinned = pinnedValues() { return pinned }
        if let (suite, storageKey) = suiteAndKeyForKeptRead(), schemaStandsForKeptRead(by: suite, storageKey: storageKey),
           let values = keptNativeValues(by: suite, storageKey: storageKey) {
            lastError = nil
            keepWarnings(of: suite)
            return values
        }
        return operation(failure: [:], notifies: false) { () throws(PrefsError) -> [String: Any] in
            // The kept read was tried above, with the same suite and key: here the domains are searched.
            let collection = try collection()
            var problems: [PrefsError] = []
            // Reported as warnings: the read succeeds with the other domains' values.
            defer { if problems.isEmpty { keepWarnings(of: collection.suite) } else { keepWarnings(problems, of: collection.suite) } }
            guard let found = try collection.read(problems: &problems) else { return [:] }
            let snapshot = found.snapshot
            // Invariant F9: the snapshot is the generation (the native values are keyed by it).
            if let cache = nativeCache, let snapshot, cache.snapshot === snapshot, cache.key == collection.storageKey,
               cache.suite === collection.suite {
                // Kept again (a generation moved for something else): the next read can skip the search again.
                if cache.keptAt !== found.keptAt { cache.keptAt = found.keptAt }
                return cache.values
            }
            let native = (try collection.entries(of: found) ?? [:]).nativeValues
            if let snapshot {
                nativeCache = NativeCache(snapshot: snapshot, key: collection.storageKey, values: native,
                                          suite: collection.suite, keptAt: found.keptAt)
            }
            return native
        }
    }

    /// The suite and storage key a read would use now, through the properties so that a subclass's
    /// overrides are honoured; `nil` when the read cannot be a kept one: inside this instance's own `modify`
    /// transform, where the full read fails as it must (checked here, as ``suiteForOperation()`` does: an
    /// override of `userDefaults` does not check it), or without a suite.
    ///
    /// Taken before anything kept is looked at: what is kept is then compared without being retained
    /// across these calls.
    @inline(__always)
    func suiteAndKeyForKeptRead() -> (DefaultsSuite, String)? {
        guard !isRunningOwnTransform, let suite = userDefaults else { return nil }
        return (suite, key)
    }

    /// Whether a kept read by `suite` for `storageKey`, the suite and storage key a read would use now (see
    /// ``suiteAndKeyForKeptRead()``), may answer a read of this instance as far as the schema goes: the
    /// collection's schema was checked for them (always, for a class without a schema version). Asked before
    /// anything kept is loaded, so that what is kept is not retained across this class's overridable getter.
    @inline(__always)
    func schemaStandsForKeptRead(by suite: DefaultsSuite, storageKey: String) -> Bool {
        guard type(of: self).schemaVersion > 0 else { return true }
        guard let verified = schemaState.verified, verified.suite == ObjectIdentifier(suite),
              verified.storageKey == storageKey else { return false }
        return true
    }

    /// Whether the read `keptAt` kept by `suite` (see ``DefaultsSuite/isUnchanged(since:)``) still answers a
    /// read of this instance, its schema checked (``schemaStandsForKeptRead(by:storageKey:)``): nothing changed
    /// since. The read then returns what that read returned, with no search and no operation's machinery.
    /// Caller holds the operation lock, under which what holds `keptAt` (the native cache, an entry's
    /// definition) keeps it: it is asked without being retained.
    @inline(__always)
    func keptReadStands(_ keptAt: Unmanaged<DefaultsSuite.KeptRead>?, by suite: DefaultsSuite) -> Bool {
        guard let keptAt else { return false }
        // Invariant F7: keep only what every consulted source vouches for (the suite's kept read).
        return suite.isUnchanged(since: keptAt)
    }

    /// The native values of the cache, when they came from a read `suite` kept for `storageKey` that still
    /// stands (see ``keptReadStands(_:by:)``). Taken before the check, from the cache checked, so that nothing
    /// the check runs can change what is returned; the cache itself is not retained across it.
    @inline(__always)
    private func keptNativeValues(by suite: DefaultsSuite, storageKey: String) -> [String: Any]? {
        guard let cache = nativeCache, cache.suite === suite, cache.key == storageKey else { return nil }
        let values = cache.values
        let keptAt = unretained(cache.keptAt)
        return keptReadStands(keptAt, by: suite) ? values : nil
    }

    /// The one write pipeline: every write of the instance (assigning ``values``, the subscript, an
    /// initializer's merge, a typed entry's assignment, both forms of `modify`) describes itself as a
    /// ``CollectionWrite`` and comes here. It checks the names once, checks the write against the stored
    /// collection before the lock when a rejection found under it would come too late, lets the writable
    /// domain make it under its lock, and tells the result to observers.
    ///
    /// Over an ``OptimisticDomainStorage`` (etcd), the operation lock is released while the domain's `modify`
    /// runs (its round trips, its retries and the transform), and while the checks before it read the domain (a
    /// domain not known to exist yet, a `.prior` notification, a versioned class's schema), so that the
    /// instance's reads on other threads do not wait for them (SPEC §10); the write lock, held throughout, keeps
    /// the instance's writes and deliveries in order, each told before the next starts. Not when this thread held the operation lock
    /// before (a write from a handler, inside ``withoutNotifying(_:)``, or through the `values` accessor's
    /// read-modify-write): the enclosing operation promised to be one. A domain that locks for its transform
    /// (a file) keeps the operation lock held: its readers wait for the transform anyway, and a transform that
    /// misuses its instance must find the lock its own (so that it fails instead of waiting for a reader
    /// that waits for the domain's lock).
    /// - Returns: Whether the write succeeded; ``lastError`` says why not.
    @discardableResult
    func perform(_ write: CollectionWrite) -> Bool {
        let outermost = !operationLock.isHeldByCurrentThread
        return exclusively {
            // Before the write: who is told of it, and the collection before it.
            let notification = prepareNotification(of: write)
            var announced: Set<Int> = []
            let write = guardingTransform(of: write)
            // What is wrong with the administrators' files, found before the lock rather than after the write:
            // then the writer never waits for the watch thread to take in the events of its own rename.
            var problemsMet: [PrefsError]?
            let succeeded = operation(failure: false, warnings: { problemsMet }) { () throws(PrefsError) -> Bool in
                // One look-up of the class's registry for both the names and the constraints.
                let registry = EntryRegistry.registry(of: self)
                let allowed = registry.allowedNames(keys: keys)
                let constraints = registry.constraints
                try write.checkWithoutStore(allowed: allowed, constraints: constraints)
                let collection = try collection()
                enforceConstraints(constraints, in: collection.suite, storageKey: collection.storageKey)
                // No writable domain (a service with no preferences directory): refused before anything is
                // checked against forced entries or announced.
                try collection.suite.refuseWritesWithoutDomain()
                // What the managed domains force, and what the administrators supply, found by the checks below, are
                // not looked for again by the commit when nothing but those checks runs between them: no `.prior`
                // handler, which may take any time, and no schema migration. Either way they are found before the lock.
                let schemaVersion = type(of: self).schemaVersion
                let reusable = !notification.sendsPriors && schemaVersion == 0
                // Over an optimistic domain (etcd) the checks' reads are round trips too: made with the operation
                // lock released, as the commit is, so that the instance's reads on other threads never wait for them.
                let releasesForRoundTrips = outermost && collection.suite.persistentDomain is any OptimisticDomainStorage
                // The checks before the lock read the suite as one moment: the watch engine's pending events are
                // taken once for all of them, not once by each.
                let (forced, supplied, administrators) = try collection.suite.readingAsOne { () throws(PrefsError)
                    -> ((whole: String?, entries: [String: String]), [String: PropertyListValue]?, [UInt64]?) in
                    // A write naming an entry the administrator forces is refused as a whole (a whole replacement
                    // is checked against what it changes, under the lock).
                    let forced = if let replacement = write.replacement {
                        try collection.refuseForcedReplacement(replacement)
                    } else {
                        try collection.refuseForced(write.setting + write.removing)
                    }
                    problemsMet = collection.suite.warnings(forCollection: collection.storageKey)
                    // Checked first whenever a rejection found under the lock would come too late: incompatible
                    // values, a `.prior` notification about to be sent, or a domain file that may not exist yet
                    // (the lock would create its directory and lock file).
                    if !write.incompatible.isEmpty || notification.sendsPriors || !collection.suite.persistentDomain.isKnownToExist {
                        if releasesForRoundTrips {
                            try operationLock.whileReleased { () throws(PrefsError) in try collection.check(write, allowed: allowed) }
                        } else {
                            try collection.check(write, allowed: allowed)
                        }
                    }
                    guard reusable else { return (forced, nil, nil) }
                    // What the administrators supply, which a whole replacement does not copy: looked for here, with
                    // the rest, rather than by the commit on its own.
                    let supplied = write.replacement == nil ? nil : collection.suite.administratorEntries(forKey: collection.storageKey)
                    // What the administrators' domains held at this moment, the one their entries above were found
                    // at (the scope's pending events were taken once, at its first read): for the commit's reuse.
                    return (forced, supplied, collection.suite.administratorGenerations())
                }
                // An unversioned class's write needs no read of its own first (a round trip, for a domain on
                // another machine): the commit refuses a collection from a newer version under the lock. Only a
                // `.prior` notification, which must not announce a write that will be refused, needs it before.
                if schemaVersion > 0 || notification.sendsPriors {
                    try prepareSchema(of: collection, writing: true, repair: write.repair, releasingLock: releasesForRoundTrips)
                }
                announced = announce(write, notification)
                // Reused only if no administrator's domain changed since (another process may have changed one: their
                // generations, with the engine's pending events, are asked again, in a read of its own).
                var checkedJustNow = reusable && administrators != nil
                if checkedJustNow {
                    checkedJustNow = try collection.suite.readingAsOne { collection.suite.administratorGenerations() } == administrators
                }
                let forcedNow = checkedJustNow ? forced : nil
                let suppliedNow = checkedJustNow ? supplied : nil
                if releasesForRoundTrips {
                    // Nothing the operation lock guards is touched until it is taken again: the commit uses the
                    // collection, the write and their checks, all this call's own.
                    try operationLock.whileReleased { () throws(PrefsError) in
                        try collection.commit(write, allowed: allowed, constraints: constraints, schemaVersion: schemaVersion,
                                              forced: forcedNow, supplied: suppliedNow)
                    }
                } else {
                    try collection.commit(write, allowed: allowed, constraints: constraints, schemaVersion: schemaVersion,
                                          forced: forcedNow, supplied: suppliedNow)
                }
                return true
            }
            // After a successful write: tell it.
            if succeeded { tellWrite(write, notification, announced: announced) }
            return succeeded
        }
    }
}

/// `object` as an unretained reference, for a check made while something else holds it (see
/// ``RVS_PersistentPrefs/keptReadStands(_:by:)``).
@inline(__always)
func unretained<Object: AnyObject>(_ object: Object?) -> Unmanaged<Object>? {
    guard let object else { return nil }
    return Unmanaged.passUnretained(object)
}
