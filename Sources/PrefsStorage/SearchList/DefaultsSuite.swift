import Foundation
import PrefsPropertyList
import Synchronization

/// A suite of defaults domains read through one search list: the Linux counterpart of a
/// `UserDefaults` suite.
///
/// A read takes the value of a key from the first domain that holds it — the argument domain, the
/// writable persistent domain, the global domain, the registration domain — with no merging across
/// domains. Writes and removals touch only the persistent domain, so removing a value can expose one
/// from another domain again.
///
/// ```swift
/// let suite = DefaultsSuite(persistentDomain: DefaultsLocations.current().applicationDomain())
/// try suite.setValue(.string("dark"), forKey: "appearance")
/// let appearance = try suite.value(forKey: "appearance")   // .string("dark")
/// ```
///
/// A suite may be used from any thread. Its own API works on ``PropertyListValue`` values and throws;
/// it also speaks the `UserDefaults` API (``object(forKey:)``, ``set(_:forKey:)-(Any?,_)``, …; see
/// <doc:UserDefaultsAPI>), which takes and returns native values and reports failures in
/// ``lastError``. It validates no entry names: that is the job of ``RVS_PersistentPrefs``, whose
/// ``RVS_PersistentPrefs/userDefaults`` is the suite an instance uses.
///
/// ## Topics
///
/// ### Creating a Suite
/// - ``init(persistentDomain:globalDomain:arguments:)``
/// - ``shared(persistentDomain:globalDomain:)``
///
/// ### The Domains
/// - ``persistentDomain``
/// - ``globalDomain``
/// - ``argumentDomain``
///
/// ### Registered Defaults
/// - ``register(propertyListDefaults:)``
/// - ``registrationDomain``
///
/// ### Reading
/// - ``value(forKey:)``
/// - ``lookup(_:)``
/// - ``propertyListRepresentation()``
///
/// ### Writing
/// - ``modifyValue(forKey:repairing:_:)``
/// - ``setValue(_:forKey:repairing:)``
/// - ``removeValue(forKey:)``
///
/// ### The UserDefaults API
/// - <doc:UserDefaultsAPI>
/// - ``lastError``
/// - ``register(defaults:)``
/// - ``object(forKey:)``
/// - ``set(_:forKey:)-(Any?,_)``
/// - ``set(_:forKey:)-(URL?,_)``
/// - ``removeObject(forKey:)``
/// - ``dictionaryRepresentation()``
/// - ``synchronize()``
///
/// ### Typed Getters of the UserDefaults API
/// - ``bool(forKey:)``
/// - ``integer(forKey:)``
/// - ``double(forKey:)``
/// - ``float(forKey:)``
/// - ``string(forKey:)``
/// - ``stringArray(forKey:)``
/// - ``array(forKey:)``
/// - ``dictionary(forKey:)``
/// - ``data(forKey:)``
/// - ``url(forKey:)``
///
/// ### Domains by Name, as UserDefaults Names Them
/// - ``persistentDomain(forName:)``
/// - ``setPersistentDomain(_:forName:)``
/// - ``removePersistentDomain(forName:)``
/// - ``persistentDomainName``
/// - ``volatileDomain(forName:)``
/// - ``volatileDomainNames``
/// - ``setVolatileDomain(_:forName:)``
/// - ``removeVolatileDomain(forName:)``
///
/// ### Change Notification
/// `UserDefaults.didChangeNotification` is posted on `NotificationCenter.default`, with the suite as its
/// object, after each successful change made through the suite or an ``RVS_PersistentPrefs`` instance
/// using it, and when a watching instance hears of a change made elsewhere.
///
/// ### Settings an Administrator Forces
/// - ``objectIsForced(forKey:)``
/// - ``objectIsForced(forKey:inDomain:)``
public final class DefaultsSuite: Sendable {
    /// The writable domain: every write and removal goes here and nowhere else.
    public let persistentDomain: any DomainStorage
    /// The global domain, read after the persistent one; `nil` for none.
    public let globalDomain: (any DomainStorage)?
    /// The search list: every domain of the suite with its role, in the order a read consults them.
    package let sources: [SearchSource]
    /// What every successful operation over the suite reports although it succeeded: that the suite has no
    /// writable domain (``PrefsError/userDefaultsUnavailable(reason:)``: a service with no preferences
    /// directory reads its administrator's settings, and cannot keep its own). Empty for most suites.
    package let standingWarnings: [PrefsError]
    /// Whether ``standingWarnings`` is not empty: what every read looks at, without retaining the array.
    package let hasStandingWarnings: Bool
    private let arguments: FixedDomainStorage
    private let registered: ProcessDomainStorage
    /// What the `UserDefaults` API keeps (see DefaultsSuite+UserDefaults.swift).
    let userDefaultsState = PrefsMutex(UserDefaultsState())
    /// The rules classes declare for their collections, by storage key and class (see CollectionRules.swift).
    let collectionRules = PrefsMutex<[String: [ObjectIdentifier: CollectionRule]]>([:])

    /// Makes a suite over `persistentDomain`, with a registration domain of its own.
    ///
    /// Unlike ``shared(persistentDomain:globalDomain:)``, every call makes a new suite. Tests usually
    /// pass `arguments: []`, so that the test runner's own arguments do not become an argument domain.
    /// - Parameters:
    ///   - persistentDomain: The writable domain.
    ///   - globalDomain: The read-only global domain, or `nil` for none.
    ///   - arguments: The arguments to parse into the argument domain, by default the process's (the
    ///     first, the program's name, is skipped): every `-<key> <value>` pair, the value parsed as
    ///     property-list text (XML, or OpenStep such as `'{appearance = dark;}'`), else taken as a string.
    public convenience init(
        persistentDomain: any DomainStorage,
        globalDomain: (any DomainStorage)? = nil,
        arguments: [String] = CommandLine.arguments
    ) {
        self.init(persistentDomain: persistentDomain, globalDomain: globalDomain,
                  argumentDomain: Self.parseArgumentDomain(arguments))
    }

    /// The argument domain of this process, parsed once.
    static let processArgumentDomain: [String: PropertyListValue] = parseArgumentDomain(CommandLine.arguments)

    /// Makes a suite whose search list holds the given domains in their places.
    package init(persistentDomain: any DomainStorage, globalDomain: (any DomainStorage)?,
                 systemDomains: [any DomainStorage] = [], managedDomains: [any DomainStorage] = [],
                 argumentDomain: [String: PropertyListValue]) {
        self.persistentDomain = persistentDomain
        self.globalDomain = globalDomain
        standingWarnings = (persistentDomain as? NoDirectoryDomainStorage).map { [.userDefaultsUnavailable(reason: $0.reason)] } ?? []
        hasStandingWarnings = !standingWarnings.isEmpty
        arguments = FixedDomainStorage(contents: argumentDomain, location: "the argument domain")
        registered = ProcessDomainStorage(location: "the registration domain")
        var sources = managedDomains.map { SearchSource(.managed, $0) }
        sources.append(SearchSource(.arguments, arguments))
        sources.append(SearchSource(.persistent, persistentDomain))
        // Skipped when it is the writable domain (an application domain named `.GlobalPreferences`):
        // searched already, and reading it again while it is being modified would wait on itself.
        if let globalDomain, globalDomain !== persistentDomain { sources.append(SearchSource(.global, globalDomain)) }
        sources += systemDomains.map { SearchSource(.system, $0) }
        sources.append(SearchSource(.registration, registered))
        self.sources = sources
        combinations = sources.map(\.role.combination)
        entryByEntry = sources.contains { $0.role.combination != .wholeValue }
        storages = sources.map(\.storage)
        // (A bit per source records which a search consulted.)
        keepsReads = sources.count <= 64
        watchable = sources.compactMap { $0.storage as? any VouchingStorage }
        let engines = watchable.compactMap(\.watchEngine)
        let engine = engines.allSatisfy { $0 === engines.first } ? engines.first : nil
        self.engine = engine
        unretainedEngine = engine.map { Unmanaged.passUnretained($0) }
        // Invariant F6: whether a source's generation is its engine's (then the engine's count covers it), or a
        // constant (the arguments: never compared), or its own.
        let registration = registered
        sourceKinds = sources.map { source in
            if let engine, let vouching = source.storage as? any VouchingStorage, vouching.watchEngine === engine { return .engine }
            if source.storage is FixedDomainStorage || source.storage is NoDirectoryDomainStorage { return .constant }
            if source.storage === registration { return .registration }
            return .own
        }
    }

    /// How a kept read checks a source's generation.
    private enum SourceKind { case engine, constant, registration, own }
    private let sourceKinds: [SourceKind]
    /// The watch engine of every domain that has one, when they share one (as all do, but in tests): its count of
    /// changes is compared before the generations of its domains.
    private let engine: WatchEngine?
    /// The same engine, for the unchanged read's check, which asks it without retaining it (``engine`` holds it).
    private let unretainedEngine: Unmanaged<WatchEngine>?

    /// The domains of the search list, in order, for the generations a kept read compares.
    private let storages: [any DomainStorage]
    /// Whether reads may be kept at all (a search list of at most 64 domains).
    private let keepsReads: Bool
    /// The domains that start a watch before they can report a generation.
    private let watchable: [any VouchingStorage]
    /// The reads of the suite so far, counted up to ``readsBeforeWatchingLimit``, when the domains are asked to
    /// start vouching (see ``startWatchingAtThirdRead()``).
    private let readsBeforeWatching = Atomic<Int>(0)
    /// The read at which the watches start: the third.
    private static let readsBeforeWatchingLimit = 3

    /// What a read of one key found, kept while every domain the search consulted reports the generation
    /// it reported before and after the read (Invariant F7). A class: a read takes it out of the lock as one
    /// reference, and callers that derive something from what it found hold it to ask
    /// ``DefaultsSuite/isUnchanged(since:)``.
    package final class KeptRead: Sendable {
        let key: String
        let collection: Bool
        /// The index of each domain consulted whose generation is not a constant, and its generation: first the
        /// ``ownCount`` whose generation is neither their engine's nor the registration domain's, then the others.
        let generations: [(index: Int, generation: UInt64)]
        /// How many of ``generations``, from the first, are domains' own (asked even while the engine's count
        /// stands): an in-memory domain, etcd, a backend of one's own.
        let ownCount: Int
        /// The registration domain's version, when the search consulted it.
        let registration: UInt64?
        /// The suite's engine's count of changes at which every generation was last found as kept, when a domain
        /// consulted has the engine's generations: while it stands, only the first `ownCount` generations (and the
        /// registration domain's version) need be compared.
        let engineCount: Atomic<UInt64>
        /// Whether a domain consulted has the engine's generations (else `engineCount` means nothing).
        let usesEngine: Bool
        let found: Found?
        let problems: [PrefsError]

        init(key: String, collection: Bool, generations: [(index: Int, generation: UInt64)], ownCount: Int,
             registration: UInt64?, engineCount: UInt64?, found: Found?, problems: [PrefsError]) {
            (self.key, self.collection, self.generations, self.found, self.problems) = (key, collection, generations, found, problems)
            (self.ownCount, self.registration) = (ownCount, registration)
            self.engineCount = Atomic(engineCount ?? 0)
            usesEngine = engineCount != nil
        }
    }

    /// The reads kept, the most recent first; a few, for the few storage keys a process reads.
    private let keptReads = PrefsMutex<[KeptRead]>([])
    private static let keptReadLimit = 8

    /// How each source combines, by index: read on every read without copying the source's role.
    private let combinations: [SearchDomain.Combination]

    /// Whether some domain of the search list works entry by entry (a managed or system domain).
    private let entryByEntry: Bool

    /// The argument domain, parsed once from the arguments given at creation.
    public var argumentDomain: [String: PropertyListValue] { arguments.contents }

    private static let registry = PrefsMutex<[[ObjectIdentifier?]: DefaultsSuite]>([:])

    /// The process-wide suite over these domains, with this process's arguments, made on first use.
    ///
    /// Everyone in the process who asks for the same domain objects gets the same suite, and so sees the
    /// same registration domain. Suites are told apart by the identity of their domain objects, not by
    /// their paths: ``FileDomainStorage/shared(directory:name:durable:)`` returns one object per file and
    /// durability, so asking for the same file gives the same suite, while a durable and an ordinary
    /// domain over one file are different objects with different suites.
    public static func shared(persistentDomain: any DomainStorage, globalDomain: (any DomainStorage)?) -> DefaultsSuite {
        shared(persistentDomain: persistentDomain, globalDomain: globalDomain, systemDomains: [], managedDomains: [])
    }

    /// The process-wide suite over these domains, as ``shared(persistentDomain:globalDomain:)``.
    package static func shared(persistentDomain: any DomainStorage, globalDomain: (any DomainStorage)?,
                               systemDomains: [any DomainStorage], managedDomains: [any DomainStorage]) -> DefaultsSuite {
        // The registry keeps the domains alive, so an identity is never reused.
        let registryKey = ([persistentDomain, globalDomain] + systemDomains + [nil] + managedDomains)
            .map { $0.map { ObjectIdentifier($0) } }
        return registry.withLock { suites in
            if let existing = suites[registryKey] { return existing }
            let suite = DefaultsSuite(persistentDomain: persistentDomain, globalDomain: globalDomain,
                                      systemDomains: systemDomains, managedDomains: managedDomains,
                                      argumentDomain: processArgumentDomain)
            suites[registryKey] = suite
            return suite
        }
    }

    /// The argument domain of `arguments`: every `-<key> <value>` pair after the program's name.
    ///
    /// A value is parsed as a property list (XML, or OpenStep text such as `'{appearance = dark;}'`);
    /// anything else is taken as a string. A `-<key>` with no value after it is ignored, and so is an
    /// argument that does not begin with `-` where a key is expected.
    /// - Parameter arguments: Command-line arguments, the program's name first.
    /// - Returns: Key → value, a later pair winning over an earlier one with the same key.
    package static func parseArgumentDomain(_ arguments: [String]) -> [String: PropertyListValue] {
        var domain: [String: PropertyListValue] = [:]
        var index = 1
        while index + 1 < arguments.count {
            let argument = arguments[index]
            guard argument.count > 1, argument.hasPrefix("-") else {
                index += 1
                continue
            }
            domain[String(argument.dropFirst())] = parseArgumentValue(arguments[index + 1])
            index += 2
        }
        return domain
    }

    /// A value as the argument domain and the inspector take it: property-list text, else a string.
    ///
    /// OpenStep text has no numbers, Booleans or dates, so `3` and `{count = 3;}` give strings; use XML
    /// for typed values. Never fails: text that is not a property list becomes ``PropertyListValue/string(_:)``.
    package static func parseArgumentValue(_ text: String) -> PropertyListValue {
        (try? PropertyListText.decode(Data(text.utf8))) ?? .string(text)
    }

    // MARK: Registration domain

    /// Adds `defaults` to the registration domain, replacing earlier registrations of the same keys.
    ///
    /// Registered values are consulted last and are never written to disk by the suite. A value
    /// registered for a collection's storage key is the whole collection, as a
    /// ``PropertyListValue/dictionary(_:)``. (An ``RVS_PersistentPrefs`` subscript write to a
    /// collection the persistent domain does not hold yet starts from the collection a read returns, so
    /// registered entries are then written along with the new one.)
    public func register(propertyListDefaults defaults: [String: PropertyListValue]) {
        _ = try? registered.modify(repairing: .failIfUnreadable) { $0.merge(defaults) { _, new in new } }
    }

    /// The registration domain as it is now: what ``register(defaults:)`` and ``register(propertyListDefaults:)``
    /// gave this suite, in this process only (never written to any file), searched last.
    public var registrationDomain: [String: PropertyListValue] { registered.contents }

    // MARK: Reading

    /// The value of `key` as the search list supplies it, or `nil`.
    ///
    /// - Throws: The read errors of a domain the search reaches (an unreadable file is reported, not
    ///   skipped).
    public func value(forKey key: String) throws(PrefsError) -> PropertyListValue? {
        try find(key)?.value
    }

    /// The value of `key` and the domain that supplied it, or `nil` when no domain holds it.
    ///
    /// For a dictionary built entry by entry (with a managed or system domain), the domain is the one
    /// that supplied the dictionary itself, or, when only those domains hold the key, that domain.
    /// - Throws: The read errors of a domain the search reaches.
    public func lookup(_ key: String) throws(PrefsError) -> (value: PropertyListValue, domain: SearchDomain)? {
        try find(key).map { ($0.value, $0.domain) }
    }

    /// A value found by the search list, with the snapshot it came from, so that a caller can cache what
    /// it derives from the value by the snapshot's identity.
    package struct Found: Sendable {
        package let value: PropertyListValue
        package let domain: SearchDomain
        /// The snapshot of the domain that supplied the value, when one domain did; `nil` for a value
        /// built entry by entry from several (which callers then do not cache).
        package let snapshot: DomainSnapshot?
        /// The read the suite keeps this value in, when it keeps it and it came with no problem: a caller
        /// that derived something from it may use that again while ``DefaultsSuite/isUnchanged(since:)``.
        /// (Set on the copy returned, never on the one the kept read holds, which would make a cycle.)
        package var keptAt: KeptRead? = nil

        package init(value: PropertyListValue, domain: SearchDomain, snapshot: DomainSnapshot?) {
            (self.value, self.domain, self.snapshot) = (value, domain, snapshot)
        }
    }

    /// Whether a read of this suite now would find what `kept` found (see ``Found/keptAt``): every domain its
    /// search consulted reports the generation it reported then. One `ioctl` at most (the first file domain's
    /// generation takes its watch engine's pending events, so that every write completed before this call has
    /// moved its generation; the others' are then atomic loads).
    package func isUnchanged(since kept: KeptRead) -> Bool {
        // The engine's count first, as dconf's engine does: while no path of the engine changed generation,
        // its domains' generations are the ones kept (their own writes move their paths' too), and only
        // the other domains are asked. When it moved (anything changed, even elsewhere), every domain is.
        guard kept.usesEngine, let engine else { return generationsStand(kept) }
        // Invariant F1: pending events first (one ppoll; no read scope needed for a check that reads nothing).
        engine.takePendingEventsNow()
        return standsAtEngineCount(kept, engine) ?? generationsStandAnew(kept, engine)
    }

    /// ``isUnchanged(since:)`` for a caller that holds `kept` itself, and keeps holding it throughout (an
    /// instance, under its operation lock, in what it cached): the unchanged read's check, with no retain or
    /// release of `kept`. Only what runs no domain's code is done on the unretained reference (the engine's
    /// pending events and count, the registration domain's version); a kept read with domains of their own to
    /// ask, or an engine's count that moved, is checked with `kept` retained, as ``isUnchanged(since:)`` does.
    package func isUnchanged(since kept: Unmanaged<KeptRead>) -> Bool {
        if let unretainedEngine {
            let quick = kept._withUnsafeGuaranteedRef { kept in
                unretainedEngine._withUnsafeGuaranteedRef { engine in standsQuickly(kept, engine) }
            }
            switch quick {
            case .stands: return true
            case .changed: return false
            case .countMoved: if let engine { return generationsStandAnew(kept.takeUnretainedValue(), engine) }
            case .undecided: break
            }
        }
        return isUnchanged(since: kept.takeUnretainedValue())
    }

    /// What the unchanged read's check found without asking any domain of its own.
    private enum QuickCheck { case stands, changed, countMoved, undecided }

    /// The check of the unretained `isUnchanged(since:)` that runs no domain's code: the engine's
    /// pending events and count, the registration domain's version. `undecided` when `kept` has domains of their
    /// own to ask, or does not use the engine (nothing taken then); `countMoved` once the events are taken.
    @inline(__always)
    private func standsQuickly(_ kept: KeptRead, _ engine: WatchEngine) -> QuickCheck {
        guard kept.usesEngine, kept.ownCount == 0 else { return .undecided }
        // Invariant F1: pending events first (one ppoll).
        engine.takePendingEventsNow()
        guard let standing = standsAtEngineCount(kept, engine) else { return .countMoved }
        return standing ? .stands : .changed
    }

    /// Whether `kept` stands while the engine's count is the one kept (its engine's pending events taken): then
    /// the domains with the engine's generations report the ones kept (Invariant F6), and only the registration
    /// domain and the domains' own are asked. `nil` when the count moved: every domain must be asked.
    @inline(__always)
    private func standsAtEngineCount(_ kept: KeptRead, _ engine: WatchEngine) -> Bool? {
        guard engine.changeCount == kept.engineCount.load(ordering: .acquiring) else { return nil }
        if let version = kept.registration, registered.version != version { return false }
        for (index, generation) in kept.generations.prefix(kept.ownCount) where storages[index].generation != generation {
            return false
        }
        return true
    }

    /// Whether `kept` stands once the engine's count moved (its pending events taken): every domain it consulted
    /// is asked, and if each reports the generation kept, the count is kept anew.
    @inline(never)
    private func generationsStandAnew(_ kept: KeptRead, _ engine: WatchEngine) -> Bool {
        // Taken before the generations are compared: a change since moves it past this.
        let count = engine.changeCount
        guard generationsStand(kept) else { return false }
        kept.engineCount.store(count, ordering: .releasing)
        return true
    }

    /// Whether every domain `kept` consulted (but the constant ones) reports the generation it kept, in one read
    /// scope: the first file domain's takes its engine's pending events, the others' are then atomic loads.
    private func generationsStand(_ kept: KeptRead) -> Bool {
        ReadScope.checking {
            for (index, generation) in kept.generations where storages[index].generation != generation { return false }
            return true
        }
    }

    /// Searches the domains in search-list order (see ``find(_:collection:problems:)``), ignoring
    /// what is wrong with an administrator's files.
    package func find(_ key: String) throws(PrefsError) -> Found? {
        var ignored: [PrefsError] = []
        return try find(key, collection: false, problems: &ignored)
    }

    /// Searches the domains in search-list order.
    ///
    /// Without entry-by-entry domains, the first whole-value domain holding `key` supplies it. With them,
    /// a dictionary is built entry by entry: the forced entries of the managed domains, else the entries
    /// of the dictionary the whole-value domains supply, else the system domains' entries. A value that
    /// is not a dictionary is never merged: a forced one wins whole, a system one only where no other
    /// domain holds the key.
    /// - Parameters:
    ///   - collection: Whether the key holds a collection, so that a managed or system value that is not
    ///     a dictionary is ignored (and reported) rather than replacing it.
    ///   - problems: Receives what is wrong with a managed or system domain, which is then skipped: an
    ///     administrator's broken file never hides the user's own values.
    /// - Throws: The read errors of a whole-value domain the search reaches.
    package func find(_ key: String, collection: Bool, problems: inout [PrefsError]) throws(PrefsError) -> Found? {
        // Every domain's freshness is checked against one moment, the read's start (see ReadScope).
        startWatchingAtThirdRead()
        return try ReadScope.reading { () throws(PrefsError) -> Found? in
            var consulted: UInt64 = 0
            guard keepsReads else { return try search(key, collection: collection, problems: &problems, consulted: &consulted) }
            return try keptOrSearched(key, collection: collection, problems: &problems)
        }
    }

    /// Searches as ``find(_:collection:problems:)`` does, with the snapshot of each source (by its index in
    /// ``sources``) taken from `read` instead of from the source: what the delivery of a change made elsewhere
    /// does, reading again only the source whose watch fired (or using the snapshot its watch handed over) and
    /// what it read of the others before. Keeps nothing and starts no watch.
    package func find(_ key: String, collection: Bool, problems: inout [PrefsError],
                      reading read: @escaping (Int) throws(PrefsError) -> DomainSnapshot) throws(PrefsError) -> Found? {
        try ReadScope.reading { () throws(PrefsError) -> Found? in
            var consulted: UInt64 = 0
            return try search(key, collection: collection, problems: &problems, consulted: &consulted, reading: read)
        }
    }

    /// Starts the watches of the domains that can vouch, at the suite's third read: a process that reads once
    /// (a command-line tool: an instance's creation reads, then its one read) pays for no watch, and no
    /// inotify instance, it would never use. The reads before validate every domain by its file (nothing
    /// vouches for them yet, so nothing is kept: Invariant F7).
    @inline(__always)
    private func startWatchingAtThirdRead() {
        guard readsBeforeWatching.load(ordering: .acquiring) < Self.readsBeforeWatchingLimit else { return }
        // Only the read that makes the count reach the limit starts them; a read racing with it validates
        // by the files, as the first ones did.
        if readsBeforeWatching.add(1, ordering: .acquiringAndReleasing).newValue == Self.readsBeforeWatchingLimit {
            for domain in watchable { domain.startVouching() }
        }
    }

    /// A read served from what an earlier read of the key found, while every domain it consulted reports the
    /// generation it reported then: one `ioctl` (the watch engine's pending events, taken first, so that every
    /// write completed before this read has moved a generation) and a comparison per domain consulted.
    /// Otherwise the search list is searched, and what it found kept when every domain consulted reports the
    /// same generation before and after the search.
    private func keptOrSearched(_ key: String, collection: Bool, problems: inout [PrefsError]) throws(PrefsError) -> Found? {
        let kept = keptReads.withLock { reads -> KeptRead? in
            for read in reads where read.collection == collection && read.key == key { return read }
            return nil
        }
        if let kept, isUnchanged(since: kept) {
            guard kept.problems.isEmpty else {
                problems += kept.problems
                return kept.found
            }
            var found = kept.found
            found?.keptAt = kept
            return found
        }
        // Invariant F5: evidence before the read. The engine's count, then each domain's generation, compared
        // after the search, so that a change made while it read (a domain that reports its latest version) keeps
        // nothing.
        let engineCount = engine.map { engine -> UInt64 in
            engine.takePendingEvents()
            return engine.changeCount
        }
        let before = storages.map(\.generation)
        var found: [PrefsError] = []
        var consulted: UInt64 = 0
        var result = try search(key, collection: collection, problems: &found, consulted: &consulted)
        problems += found
        // The domains the search did not reach (below the one that supplied a whole value) need not vouch:
        // they could change only what a domain above them hides.
        // Invariant F7: keep only what every consulted source vouches for, by the same generation before and after.
        var generations: [(index: Int, generation: UInt64)] = []
        // The domains' own first (see KeptRead.ownCount).
        var ownCount = 0
        var usesEngine = false
        for index in storages.indices where consulted & (1 << UInt64(index)) != 0 {
            guard let generation = storages[index].generation, generation == before[index] else { return result }
            switch sourceKinds[index] {
            case .constant: continue
            case .engine: usesEngine = true
            case .registration: break
            case .own:
                generations.insert((index, generation), at: ownCount)
                ownCount += 1
                continue
            }
            generations.append((index, generation))
        }
        // A value built entry by entry gets a snapshot of its own while kept, so that callers cache what
        // they derive from it by identity as they do for one domain's value.
        if let built = result, built.snapshot == nil {
            result = Found(value: built.value, domain: built.domain, snapshot: DomainSnapshot(contents: [:]))
        }
        let registration = generations.first { sourceKinds[$0.index] == .registration }?.generation
        let read = KeptRead(key: key, collection: collection, generations: generations, ownCount: ownCount, registration: registration,
                            engineCount: usesEngine ? engineCount : nil, found: result, problems: found)
        if found.isEmpty { result?.keptAt = read }
        keptReads.withLock { reads in
            reads.removeAll { $0.key == key && $0.collection == collection }
            reads.insert(read, at: 0)
            if reads.count > Self.keptReadLimit { reads.removeLast() }
        }
        return result
    }

    /// - Parameter consulted: Gets the bit of each source (by index) whose snapshot the search took.
    /// - Parameter read: Where the snapshot of a source (by index) comes from; `nil`: the source itself.
    private func search(_ key: String, collection: Bool, problems: inout [PrefsError], consulted: inout UInt64,
                        reading read: ((Int) throws(PrefsError) -> DomainSnapshot)? = nil) throws(PrefsError) -> Found? {
        guard entryByEntry else {
            for (index, source) in sources.enumerated() {
                consulted |= 1 << UInt64(index)
                let snapshot = try Self.snapshot(of: source, index, read)
                if let value = snapshot.contents[key] { return Found(value: value, domain: source.role, snapshot: snapshot) }
            }
            return nil
        }
        // Indexes and values, not copies of the sources' roles: every read of a suite with administrators'
        // domains comes here, and most find nothing in them.
        var forced: [PropertyListValue] = []
        var defaults: [PropertyListValue] = []
        var wholeIndex = -1
        var wholeValue: PropertyListValue?
        var wholeSnapshot: DomainSnapshot?
        for index in sources.indices {
            let combination = combinations[index]
            if combination == .wholeValue {
                guard wholeIndex < 0 else { continue }
                consulted |= 1 << UInt64(index)
                let snapshot = try Self.snapshot(of: sources[index], index, read)
                if let value = snapshot.contents[key] { (wholeIndex, wholeValue, wholeSnapshot) = (index, value, snapshot) }
                continue
            }
            consulted |= 1 << UInt64(index)
            guard let snapshot = Self.administratorSnapshot(sources[index], index, read, problems: &problems),
                  let value = snapshot.contents[key] else { continue }
            if collection, value.dictionaryValue == nil {
                problems.append(.administratorFileIgnored(
                    path: sources[index].storage.location, reason: "the value under '\(key)' is not a dictionary"))
                continue
            }
            if combination == .forcedEntries { forced.append(value) } else { defaults.append(value) }
        }
        if forced.isEmpty && defaults.isEmpty {
            // Nothing from an administrator: the value is one domain's, cached by its snapshot as usual.
            guard let wholeValue, let wholeSnapshot else { return nil }
            return Found(value: wholeValue, domain: sources[wholeIndex].role, snapshot: wholeSnapshot)
        }
        return Self.combine(forced: forced, whole: wholeValue.map { ($0, sources[wholeIndex].role) }, defaults: defaults)
    }

    /// The snapshot of a managed or system domain, or `nil` (with the reason in `problems`) when it
    /// cannot be used.
    private static func administratorSnapshot(_ source: SearchSource, problems: inout [PrefsError]) -> DomainSnapshot? {
        administratorSnapshot(source, 0, nil, problems: &problems)
    }

    /// ``administratorSnapshot(_:problems:)``, taken from `read` (by the source's `index`) when given.
    private static func administratorSnapshot(_ source: SearchSource, _ index: Int, _ read: ((Int) throws(PrefsError) -> DomainSnapshot)?,
                                              problems: inout [PrefsError]) -> DomainSnapshot? {
        do {
            return try snapshot(of: source, index, read)
        } catch {
            problems.append(error)
            return nil
        }
    }

    /// The snapshot of `source`, the search's `index`th: from `read` when given, else from the source.
    @inline(__always)
    private static func snapshot(of source: SearchSource, _ index: Int,
                                 _ read: ((Int) throws(PrefsError) -> DomainSnapshot)?) throws(PrefsError) -> DomainSnapshot {
        if let read { return try read(index) }
        return try source.storage.snapshot()
    }

    /// Runs `body`, reads of this suite's domains made one after another (a write's checks before its lock), as
    /// one read: the watch engine's pending events are taken once, by the first domain that asks (see
    /// `ReadScope`), rather than once by each check. Never around a domain's lock: a read made under it must see
    /// what completed while the lock was waited for.
    package func readingAsOne<Result>(_ body: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
        try ReadScope.reading(body)
    }

    /// The generations of the administrators' domains (managed, then system), for a write that reuses what it
    /// found in them before its lock: the same again just before its commit, and nothing in them changed meanwhile
    /// (each takes its engine's pending events). `nil` when one cannot vouch for what it read: the commit then
    /// looks again.
    package func administratorGenerations() -> [UInt64]? {
        var generations: [UInt64] = []
        for source in sources where source.role == .managed || source.role == .system {
            guard let generation = source.storage.generation else { return nil }
            generations.append(generation)
        }
        return generations
    }

    /// Refuses a write when the suite has no writable domain (see ``NoDirectoryDomainStorage``), before
    /// anything else about the write is looked at.
    package func refuseWritesWithoutDomain() throws(PrefsError) {
        if let unavailable = persistentDomain as? NoDirectoryDomainStorage {
            throw .userDefaultsUnavailable(reason: unavailable.reason)
        }
    }

    /// What an operation on the collection under `key` reports although it succeeded: the suite's
    /// ``standingWarnings``, then what is wrong with its managed and system domains now; empty when nothing is.
    ///
    /// Only the administrators' domains are looked at, as a read of the collection looks at them (every one,
    /// in search-list order, as one moment for the watch engine), since only they can give a problem that
    /// does not fail the operation: after a write, the writable domain's file, just replaced, is not read
    /// again for nothing.
    package func warnings(forCollection key: String) -> [PrefsError] {
        guard entryByEntry else { return standingWarnings }
        // Counted as the read it replaces, so that the watches start at the same read as before.
        startWatchingAtThirdRead()
        var problems: [PrefsError] = []
        // (Nothing in it throws: an administrator's problem is noted, never thrown.)
        _ = try? ReadScope.reading { () throws(PrefsError) -> Void in
            for index in sources.indices where combinations[index] != .wholeValue {
                guard let value = Self.administratorSnapshot(sources[index], problems: &problems)?.contents[key] else { continue }
                // What `search` reports of a collection: a value that is not a dictionary is ignored.
                if value.dictionaryValue == nil {
                    problems.append(.administratorFileIgnored(
                        path: sources[index].storage.location, reason: "the value under '\(key)' is not a dictionary"))
                }
            }
        }
        return standingWarnings + problems
    }

    /// Builds the value of one key from what each kind of domain holds (see ``find(_:collection:problems:)``).
    private static func combine(forced: [PropertyListValue], whole: (value: PropertyListValue, domain: SearchDomain)?,
                                defaults: [PropertyListValue]) -> Found? {
        // Lowest precedence first: system defaults (the first directory wins), the whole value, then forced entries.
        var result: PropertyListValue?
        var domain: SearchDomain?
        for value in defaults.reversed() {
            result = layer(value, over: result)
            domain = .system
        }
        if let whole {
            result = layer(whole.value, over: result)
            domain = whole.domain
        }
        for value in forced.reversed() {
            result = layer(value, over: result)
            if whole == nil { domain = .managed }
        }
        guard let result, let domain else { return nil }
        return Found(value: result, domain: domain, snapshot: nil)
    }

    /// `upper` over `lower`: the entries of two dictionaries, `upper`'s winning; any other value whole.
    private static func layer(_ upper: PropertyListValue, over lower: PropertyListValue?) -> PropertyListValue {
        guard case .dictionary(let upperEntries) = upper, case .dictionary(let lowerEntries)? = lower else { return upper }
        return .dictionary(lowerEntries.merging(upperEntries) { _, new in new })
    }

    /// The value a collection not stored yet starts from: what the global or registration domain supplies
    /// (never a managed or system entry, which are not copied into the user's domain).
    package func startingPoint(forKey key: String) throws(PrefsError) -> PropertyListValue? {
        for source in sources where source.role.isStartingPoint {
            if let value = try source.storage.snapshot().contents[key] { return value }
        }
        return nil
    }

    /// The entries the managed and system domains supply under `key`, as a read shows them where the
    /// user has stored nothing: what a whole replacement need not (and must not) copy into the user's domain.
    package func administratorEntries(forKey key: String) -> [String: PropertyListValue] {
        var problems: [PrefsError] = []
        var entries: [String: PropertyListValue] = [:]
        // Lowest precedence first: the last system domain, …, the first system domain, then the managed
        // domains the same way (they come first in the search list).
        for source in sources.reversed() where source.role.combination != .wholeValue {
            guard case .dictionary(let supplied)? = Self.administratorSnapshot(source, problems: &problems)?.contents[key] else { continue }
            entries.merge(supplied) { _, new in new }
        }
        return entries
    }

    /// What the managed domains force under `key`: a whole value (when a managed domain holds one that is
    /// not a dictionary) or entries, each with the file that forces it. Managed files that cannot be used
    /// force nothing.
    ///
    /// For a collection (`collection`), a managed value that is not a dictionary forces nothing, as reads
    /// ignore it (and report it).
    package func forced(forKey key: String, collection: Bool = false) -> (whole: String?, entries: [String: String]) {
        guard entryByEntry else { return (nil, [:]) }
        // The managed domains as one read: the watch engine's pending events are taken once for all of them.
        let found = try? ReadScope.reading { () throws(PrefsError) -> (whole: String?, entries: [String: String]) in
            var entries: [String: String] = [:]
            var problems: [PrefsError] = []
            // Lowest precedence first, so that the first managed domain wins, as it does for reads.
            for source in sources.reversed() where source.role.combination == .forcedEntries {
                guard let value = Self.administratorSnapshot(source, problems: &problems)?.contents[key] else { continue }
                guard case .dictionary(let forcedEntries) = value else {
                    if collection { continue }
                    return (source.storage.location, [:])
                }
                for name in forcedEntries.keys { entries[name] = source.storage.location }
            }
            return (nil, entries)
        }
        return found ?? (nil, [:])
    }

    /// Where the value of `key` comes from, for a tool that shows it (`harness defaults read --sources`):
    /// for a dictionary, each entry with the domain that supplies it; for another value, the domain that
    /// supplies it whole. Managed and system files that cannot be used supply nothing.
    package func origins(ofKey key: String) throws(PrefsError)
        -> (whole: (value: PropertyListValue, role: SearchDomain, location: String)?,
            entries: [String: (value: PropertyListValue, role: SearchDomain, location: String)]) {
        var entries: [String: (value: PropertyListValue, role: SearchDomain, location: String)] = [:]
        var wholeFound = false
        var problems: [PrefsError] = []
        // In order of precedence, as a read combines them: forced entries, the whole value, system defaults
        // (which come before the registration domain in the search list, but only fill in).
        let byPrecedence = sources.filter { $0.role.combination == .forcedEntries }
            + sources.filter { $0.role.combination == .wholeValue } + sources.filter { $0.role.combination == .defaultEntries }
        for source in byPrecedence {
            let snapshot: DomainSnapshot
            if source.role.combination == .wholeValue {
                guard !wholeFound else { continue }
                snapshot = try source.storage.snapshot()
            } else {
                guard let usable = Self.administratorSnapshot(source, problems: &problems) else { continue }
                snapshot = usable
            }
            guard let value = snapshot.contents[key] else { continue }
            guard case .dictionary(let supplied) = value else {
                // A value that is not a dictionary is whole: a forced one wins, another only where nothing
                // above supplied anything.
                if source.role.combination == .wholeValue { wholeFound = true }
                if entries.isEmpty && source.role.combination != .defaultEntries {
                    return ((value, source.role, source.storage.location), [:])
                }
                continue
            }
            if source.role.combination == .wholeValue { wholeFound = true }
            for (name, entry) in supplied where entries[name] == nil {
                entries[name] = (entry, source.role, source.storage.location)
            }
        }
        return (nil, entries)
    }

    /// Refuses a change of whole domain contents, from `old` to `new`, that sets or removes what the
    /// managed domains force (as ``modifyValue(forKey:repairing:_:)`` refuses it): for a tool that
    /// rewrites a domain directly.
    package func refuseForcedChanges(from old: [String: PropertyListValue], to new: [String: PropertyListValue]) throws(PrefsError) {
        guard entryByEntry else { return }
        for key in Set(old.keys).union(new.keys).sorted() {
            let (before, after) = (old[key], new[key])
            if let before, let after, before.isIdentical(to: after) { continue }
            try Self.refuseForcedChanges(of: key, from: before, to: after, forced: forced(forKey: key))
        }
    }

    /// Every key visible through the search list with the value a read of it would return.
    ///
    /// Values are whole, except that managed and system domains combine entry by entry (see
    /// ``lookup(_:)``).
    /// An administrator's file that cannot be used is left out, as every read of a key leaves it out
    /// (an instance over the suite reports why in `lastWarnings`).
    /// - Throws: The read errors of the suite's other domains.
    public func propertyListRepresentation() throws(PrefsError) -> [String: PropertyListValue] {
        _ = try persistentDomain.snapshot()  // first: an unreadable domain file shows nothing
        var keys = Set<String>()
        var ignored: [PrefsError] = []
        for index in sources.indices {
            // The same rule as `search`: a whole-value domain's read error fails the read, an administrator's is skipped.
            if combinations[index] == .wholeValue {
                keys.formUnion(try sources[index].storage.snapshot().contents.keys)
            } else if let snapshot = Self.administratorSnapshot(sources[index], problems: &ignored) {
                keys.formUnion(snapshot.contents.keys)
            }
        }
        var merged: [String: PropertyListValue] = [:]
        for key in keys {
            if let found = try find(key) { merged[key] = found.value }
        }
        return merged
    }

    // MARK: Writing

    /// Atomically reads the persistent domain's value for `key`, lets `transform` change it (`nil`
    /// means absent), and saves the result, excluding every other writer meanwhile.
    ///
    /// This is the primitive for single-entry updates of a collection: concurrent updates of
    /// different entries, from any process, all survive.
    /// - Parameters:
    ///   - key: The key in the persistent domain, for a collection its storage key.
    ///   - policy: Whether an unreadable domain file fails the update or is moved aside.
    ///   - transform: Changes the value; throwing from it cancels the update, and nothing is written.
    ///     It runs while the domain is locked against every other writer: keep it short.
    /// - Throws: What `transform` throws; the persistent domain's read errors (an unreadable file
    ///   fails the update unless `policy` is ``RepairPolicy/moveUnreadableAside``); its write errors,
    ///   such as ``PrefsError/writeFailed(path:step:errno:)``; ``PrefsError/valueNotAllowed(entry:reason:)``
    ///   when `key` is the collection of a class whose constraints an entry's new value breaks (an instance of
    ///   the class over this suite told it them). The domain is then unchanged.
    public func modifyValue(
        forKey key: String,
        repairing policy: RepairPolicy = .failIfUnreadable,
        _ transform: (inout PropertyListValue?) throws(PrefsError) -> Void
    ) throws(PrefsError) {
        // The rules of the class whose collection this is (SPEC §14): this public path is the `UserDefaults`
        // face's, and is refused as the instance's own writes are (which check them themselves).
        let rules = collectionRules(forKey: key)
        // A collection's version stamp is as much its newer version's as the collection (SPEC §9): removing or
        // lowering it would have an older class migrate the newer collection again.
        let stamped = allCollectionRules().values.joined().filter { $0.schema.versionKey == key }
        try modifyValue(forKey: key, repairing: policy, checkingDomain: { contents throws(PrefsError) in
            for rule in rules + stamped { try rule.refuseNewerCollection(in: contents) }
        }) { (value: inout PropertyListValue?) throws(PrefsError) in
            let before = value
            try transform(&value)
            try Self.refuseBrokenRules(rules, from: before, to: value)
        }
    }

    /// ``modifyValue(forKey:repairing:_:)``, with `check` first given the whole domain under the same lock:
    /// for a rule that depends on another key of the domain (a collection's schema version) and must hold
    /// at the instant of the write. Throwing from it writes nothing.
    /// With `collection`, `key` holds a collection, over which a managed value that is not a dictionary
    /// forces nothing (see ``forced(forKey:collection:)``). `known` is what ``forced(forKey:collection:)`` gave the
    /// caller for the same key a moment before, with nothing but its own checks in between: it is not looked for again.
    package func modifyValue(
        forKey key: String,
        repairing policy: RepairPolicy,
        collection: Bool = false,
        forced known: (whole: String?, entries: [String: String])? = nil,
        checkingDomain check: ([String: PropertyListValue]) throws(PrefsError) -> Void,
        _ transform: (inout PropertyListValue?) throws(PrefsError) -> Void
    ) throws(PrefsError) {
        let forced = known ?? (entryByEntry ? self.forced(forKey: key, collection: collection) : (whole: nil, entries: [:]))
        try persistentDomain.modify(repairing: policy) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
            try check(contents)
            let before = contents[key]
            var value = before
            try transform(&value)
            try Self.refuseForcedChanges(of: key, from: before, to: value, forced: forced)
            contents[key] = value
        }
        postDidChange()
    }

    /// Refuses a change that sets or removes what the managed domains force: a whole forced value, or a
    /// forced entry of a dictionary (compared by identity, so that writing the forced value is refused too
    /// wherever it changes what is stored).
    private static func refuseForcedChanges(of key: String, from before: PropertyListValue?, to after: PropertyListValue?,
                                            forced: (whole: String?, entries: [String: String])) throws(PrefsError) {
        if let path = forced.whole {
            let unchanged = before.map { old in after.map { old.isIdentical(to: $0) } ?? false } ?? (after == nil)
            if !unchanged { throw .forcedByAdministrator(entries: [key], path: path) }
            return
        }
        guard !forced.entries.isEmpty else { return }
        let old = before?.dictionaryValue ?? [:]
        let new = after?.dictionaryValue ?? [:]
        let touched = forced.entries.keys.filter { name in
            switch (old[name], new[name]) {
            case (nil, nil): return false
            case (let a?, let b?): return !a.isIdentical(to: b)
            default: return true
            }
        }
        guard let first = touched.min() else { return }
        throw .forcedByAdministrator(entries: touched.sorted(), path: forced.entries[first] ?? "")
    }

    /// Stores `value` under `key` in the persistent domain; `nil` removes it.
    /// - Parameters:
    ///   - value: The value to store, or `nil` to remove the key.
    ///   - key: The key in the persistent domain.
    ///   - policy: Whether an unreadable domain file fails the write or is moved aside.
    /// - Throws: The errors of ``modifyValue(forKey:repairing:_:)``.
    public func setValue(_ value: PropertyListValue?, forKey key: String, repairing policy: RepairPolicy = .failIfUnreadable) throws(PrefsError) {
        try modifyValue(forKey: key, repairing: policy) { (current: inout PropertyListValue?) throws(PrefsError) in current = value }
    }

    /// Removes `key` from the persistent domain; other domains may then supply a value again.
    ///
    /// Removing a key that is not there writes nothing and succeeds.
    /// - Throws: The errors of ``modifyValue(forKey:repairing:_:)``; an unreadable domain file fails.
    public func removeValue(forKey key: String) throws(PrefsError) {
        try setValue(nil, forKey: key)
    }
}
