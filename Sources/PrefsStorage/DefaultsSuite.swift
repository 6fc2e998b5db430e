import Foundation
import PrefsPropertyList

/// The domains a read looks through, in this order; the first that holds a key supplies its whole
/// value.
///
/// ## Topics
///
/// ### The Search List, in Order
/// - ``arguments``
/// - ``persistent``
/// - ``global``
/// - ``registration``
public enum SearchDomain: Sendable, CaseIterable {
    /// `-<key> <value>` pairs among the process's arguments.
    case arguments
    /// The writable persistent domain: the application domain or a group suite.
    case persistent
    /// The global domain shared by all of the user's programs (read-only here).
    case global
    /// Defaults registered in memory by the process; never persisted.
    case registration
}

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
/// it also speaks the `UserDefaults` API (``object(forKey:)``, ``set(_:forKey:)``, …; see
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
/// - ``set(_:forKey:)``
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
public final class DefaultsSuite: Sendable {
    /// The writable domain: every write and removal goes here and nowhere else.
    public let persistentDomain: any DomainStorage
    /// The global domain, read after the persistent one; `nil` for none.
    public let globalDomain: (any DomainStorage)?
    /// The argument domain, parsed once from the arguments given at creation.
    public let argumentDomain: [String: PropertyListValue]
    private let registered = Locked<[String: PropertyListValue]>([:])
    /// What the `UserDefaults` API keeps (see DefaultsSuite+UserDefaults.swift).
    let userDefaultsState = Locked(UserDefaultsState())

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
    public init(
        persistentDomain: any DomainStorage,
        globalDomain: (any DomainStorage)? = nil,
        arguments: [String] = CommandLine.arguments
    ) {
        self.persistentDomain = persistentDomain
        self.globalDomain = globalDomain
        self.argumentDomain = Self.parseArgumentDomain(arguments)
    }

    /// The argument domain of this process, parsed once.
    static let processArgumentDomain: [String: PropertyListValue] = parseArgumentDomain(CommandLine.arguments)

    private init(persistentDomain: any DomainStorage, globalDomain: (any DomainStorage)?, argumentDomain: [String: PropertyListValue]) {
        self.persistentDomain = persistentDomain
        self.globalDomain = globalDomain
        self.argumentDomain = argumentDomain
    }

    private static let registry = Locked<[[ObjectIdentifier?]: DefaultsSuite]>([:])

    /// The process-wide suite over these domains, with this process's arguments, made on first use.
    ///
    /// Everyone in the process who asks for the same domain objects gets the same suite, and so sees the
    /// same registration domain. Suites are told apart by the identity of their domain objects, not by
    /// their paths: ``FileDomainStorage/shared(directory:name:durable:)`` returns one object per file and
    /// durability, so asking for the same file gives the same suite, while a durable and an ordinary
    /// domain over one file are different objects with different suites.
    public static func shared(persistentDomain: any DomainStorage, globalDomain: (any DomainStorage)?) -> DefaultsSuite {
        // The registry keeps the domains alive, so an identity is never reused.
        let registryKey = [ObjectIdentifier(persistentDomain), globalDomain.map { ObjectIdentifier($0) }]
        return registry.withLock { suites in
            if let existing = suites[registryKey] { return existing }
            let suite = DefaultsSuite(persistentDomain: persistentDomain, globalDomain: globalDomain, argumentDomain: processArgumentDomain)
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
        registered.withLock { $0.merge(defaults) { _, new in new } }
    }

    /// The registration domain as it is now.
    public var registrationDomain: [String: PropertyListValue] { registered.withLock { $0 } }

    // MARK: Reading

    /// The value of `key` from the first domain in the search list that holds it, or `nil`.
    ///
    /// - Throws: The persistent or global domain's read errors (an unreadable file is reported, not
    ///   skipped) when the search reaches that domain.
    public func value(forKey key: String) throws(PrefsError) -> PropertyListValue? {
        try lookup(key)?.value
    }

    /// The value of `key` and the domain it came from, or `nil` when no domain holds it.
    ///
    /// - Throws: The persistent or global domain's read errors when the search reaches that domain.
    public func lookup(_ key: String) throws(PrefsError) -> (value: PropertyListValue, domain: SearchDomain)? {
        try find(key).map { ($0.value, $0.domain) }
    }

    /// A value found by the search list, with the snapshot it came from (for the file domains), so
    /// that a caller can cache what it derives from the value by the snapshot's identity.
    package struct Found {
        package let value: PropertyListValue
        package let domain: SearchDomain
        package let snapshot: DomainSnapshot?
    }

    /// The search list in order, made once (`allCases` would build an array at every read).
    private static let searchList = SearchDomain.allCases

    /// Searches the domains in search-list order, beginning with `first`.
    package func find(_ key: String, from first: SearchDomain = .arguments) throws(PrefsError) -> Found? {
        for domain in Self.searchList.drop(while: { $0 != first }) {
            switch domain {
            case .arguments:
                if let value = argumentDomain[key] { return Found(value: value, domain: domain, snapshot: nil) }
            case .persistent:
                let snapshot = try persistentDomain.snapshot()
                if let value = snapshot.contents[key] { return Found(value: value, domain: domain, snapshot: snapshot) }
            case .global:
                // Skipped when it is the writable domain (an application domain named `.GlobalPreferences`):
                // searched already, and reading it again while it is being modified would wait on itself.
                guard let globalDomain, globalDomain !== persistentDomain else { continue }
                let snapshot = try globalDomain.snapshot()
                if let value = snapshot.contents[key] { return Found(value: value, domain: domain, snapshot: snapshot) }
            case .registration:
                if let value = registered.withLock({ $0[key] }) { return Found(value: value, domain: domain, snapshot: nil) }
            }
        }
        return nil
    }

    /// Every key visible through the search list with the value a read of it would return.
    ///
    /// Values are whole: a dictionary under a key comes from one domain, never merged across domains.
    /// - Throws: The persistent or global domain's read errors.
    public func propertyListRepresentation() throws(PrefsError) -> [String: PropertyListValue] {
        let persistent = try persistentDomain.snapshot().contents  // first: an unavailable suite shows nothing
        var merged = registrationDomain
        if let globalDomain, globalDomain !== persistentDomain {
            merged.merge(try globalDomain.snapshot().contents) { _, new in new }
        }
        merged.merge(persistent) { _, new in new }
        merged.merge(argumentDomain) { _, new in new }
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
    ///   such as ``PrefsError/writeFailed(path:step:errno:)``. The domain is
    ///   then unchanged.
    public func modifyValue(
        forKey key: String,
        repairing policy: RepairPolicy = .failIfUnreadable,
        _ transform: (inout PropertyListValue?) throws(PrefsError) -> Void
    ) throws(PrefsError) {
        try persistentDomain.modify(repairing: policy) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
            var value = contents[key]
            try transform(&value)
            contents[key] = value
        }
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
