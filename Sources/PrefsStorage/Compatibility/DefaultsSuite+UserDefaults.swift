import Foundation
import PrefsPropertyList

// The `UserDefaults` API of a suite, so that code written for the Apple-platform library, which calls
// `prefs.userDefaults?.register(defaults:)`, `object(forKey:)`, `set(_:forKey:)` and so on, compiles and
// behaves the same over this library's domains.
//
// Why a type of our own rather than a `UserDefaults` subclass (tried on Linux with Swift 6.3):
// - a subclass inherits Foundation's storage for every method it does not override: `register(defaults:)`,
//   `dictionaryRepresentation()` and `removeObject(forKey:)` of a subclass that overrides only
//   `object(forKey:)` and `set(_:forKey:)` bypass the overrides and open Foundation's own
//   `~/.config/<suite>.plist`, outside this library's locking, validation and freshness;
// - Foundation on Linux marks `UserDefaults` as not `Sendable` (the conformance is explicitly unavailable,
//   and a subclass cannot restate it), while a suite is shared process-wide between threads;
// - `UserDefaults.set(_:forKey:)` stops the process (a fatal error) for an `NSNull`, where a suite must
//   refuse the value and report it.

/// The state the `UserDefaults` API keeps in a suite.
struct UserDefaultsState {
    /// The outcome of the most recent `UserDefaults`-API call.
    var lastError: PrefsError?
    /// Named domains of a suite whose persistent domain is not a file: they live as long as the suite.
    var inMemoryDomains: [String: InMemoryDomainStorage] = [:]
    /// The volatile domains set with `setVolatileDomain(_:forName:)`, by name.
    var volatileDomains: [String: [String: PropertyListValue]] = [:]
    /// The version of a collection the last notification of a change made elsewhere was posted for (see
    /// ``DefaultsSuite/postDidChange(afterChangeFoundIn:)``): the instances that hear the same change post once.
    weak var lastChangeMadeElsewhere: DomainSnapshot?
}

extension DefaultsSuite {
    // MARK: Outcome

    /// The outcome of the most recent call of the `UserDefaults` API on this suite: `nil` after a
    /// success, else why the call did nothing (a value that is not a property-list value, an
    /// unreadable or unavailable domain, a failed write).
    ///
    /// `UserDefaults` methods report nothing, so check this right after a call whose failure matters:
    ///
    /// ```swift
    /// suite.set(NSNull(), forKey: "k")   // refused: nothing is written
    /// if let error = suite.lastError { print(error) }   // valuesNotPlistCompatible(["k"])
    /// ```
    ///
    /// Every call of that API sets it, reads included, except ``synchronize()``, which leaves it as it
    /// is. The suite may be shared by the whole process (see ``shared(persistentDomain:globalDomain:)``),
    /// so with several threads the most recent call may be another thread's; the value itself is
    /// always read and written under a lock. The throwing API (``value(forKey:)``,
    /// ``setValue(_:forKey:repairing:)``, …) reports each call's own error instead, and leaves this
    /// property alone.
    public var lastError: PrefsError? {
        userDefaultsState.withLock { $0.lastError }
    }

    /// Runs one `UserDefaults`-API call: records its outcome in ``lastError`` and returns `failure`
    /// when it throws.
    private func call<Result>(failure: Result, _ body: () throws(PrefsError) -> Result) -> Result {
        do {
            let result = try body()
            userDefaultsState.withLock { $0.lastError = nil }
            return result
        } catch {
            userDefaultsState.withLock { $0.lastError = error }
            return failure
        }
    }

    /// Converts values given as `Any`, naming every key whose value is not a property-list value.
    ///
    /// A ``PropertyListValue`` is taken as it is, so that a `[String: PropertyListValue]` passed where
    /// `[String: Any]` is expected keeps its meaning.
    private static func propertyListValues(_ values: [String: Any]) throws(PrefsError) -> [String: PropertyListValue] {
        var converted: [String: PropertyListValue] = [:]
        var incompatible: [String] = []
        for (key, value) in values {
            if let plist = propertyListValue(value) { converted[key] = plist } else { incompatible.append(key) }
        }
        if !incompatible.isEmpty { throw .valuesNotPlistCompatible(invalidElements: incompatible.sorted()) }
        return converted
    }

    /// A value given to the `UserDefaults` API as a property-list value; a `URL` (or `NSURL`) is stored as
    /// swift-corelibs-foundation stores it, a file URL as its path and any other as its absolute string.
    private static func propertyListValue(_ value: Any) -> PropertyListValue? {
        if let plist = value as? PropertyListValue { return plist }
        if let url = value as? URL { return storedForm(of: url) }
        if let url = value as? NSURL, let swiftURL = url.absoluteURL { return storedForm(of: swiftURL) }
        return PropertyListValue(value)
    }

    private static func storedForm(of url: URL) -> PropertyListValue {
        .string(url.isFileURL ? url.path : url.absoluteString)
    }

    // MARK: Registering defaults

    /// Adds `registrationDictionary` to the registration domain, as `UserDefaults.register(defaults:)`
    /// does: the values a read returns when no other domain holds the key. They are never written.
    ///
    /// A value registered for a collection's storage key is that collection, so this supplies the
    /// defaults of an ``RVS_PersistentPrefs`` instance:
    ///
    /// ```swift
    /// prefs.userDefaults?.register(defaults: ["com.example.app.preferences": ["appearance": "light"]])
    /// ```
    ///
    /// Every value must be a property-list value (see ``PropertyListValue/init(_:)``); otherwise nothing
    /// is registered and ``lastError`` is
    /// ``RVS_PersistentPrefs/PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the keys.
    /// - Parameter registrationDictionary: Key → value; a key registered before is replaced.
    public func register(defaults registrationDictionary: [String: Any]) {
        call(failure: ()) { () throws(PrefsError) in
            register(propertyListDefaults: try Self.propertyListValues(registrationDictionary))
        }
    }

    // MARK: Reading

    /// The value of `key` through the search list, or `nil` recording why in ``lastError``.
    private func storedValue(forKey key: String) -> PropertyListValue? {
        call(failure: nil) { () throws(PrefsError) -> PropertyListValue? in try value(forKey: key) }
    }

    /// The value of `defaultName` from the first domain of the search list that holds it, as
    /// `UserDefaults.object(forKey:)` returns it; `nil` when no domain holds it.
    ///
    /// The value comes back as the same native value ``RVS_PersistentPrefs/values`` gives (see
    /// ``PropertyListValue/nativeValue``): cast it with `as?`. A domain that cannot be read gives `nil`,
    /// with the reason in ``lastError``.
    public func object(forKey defaultName: String) -> Any? {
        storedValue(forKey: defaultName)?.nativeValue
    }

    /// The string stored under `defaultName`; a number is given as its decimal text, as
    /// `UserDefaults.string(forKey:)` does. `nil` for any other value, or none.
    ///
    /// An integer reads as `"3"`, a Boolean as `"1"` or `"0"`, and a real number as Swift writes it
    /// (`"1.5"`, `"1.0"`; Apple platforms write `"1"` for the latter).
    public func string(forKey defaultName: String) -> String? {
        guard let value = storedValue(forKey: defaultName) else { return nil }
        switch value {
        case .string(let string): return string
        case .integer(let integer): return String(integer)
        case .unsignedInteger(let integer): return String(integer)
        case .real(let real): return String(real)
        case .float(let float): return NSNumber(value: float).stringValue
        case .bool(let bool): return bool ? "1" : "0"
        case .date, .data, .array, .dictionary: return nil
        }
    }

    /// The array stored under `defaultName`, its elements native values; `nil` when the value is
    /// not an array, or absent. As `UserDefaults.array(forKey:)`.
    public func array(forKey defaultName: String) -> [Any]? {
        guard let value = storedValue(forKey: defaultName), case .array = value else { return nil }
        return value.nativeValue as? [Any]
    }

    /// The dictionary stored under `defaultName`, its values native values; `nil` when the value is
    /// not a dictionary, or absent. As `UserDefaults.dictionary(forKey:)`.
    public func dictionary(forKey defaultName: String) -> [String: Any]? {
        guard case .dictionary(let dictionary)? = storedValue(forKey: defaultName) else { return nil }
        return dictionary.nativeValues
    }

    /// The data stored under `defaultName`; `nil` when the value is not data, or absent. As
    /// `UserDefaults.data(forKey:)`.
    public func data(forKey defaultName: String) -> Data? {
        guard case .data(let data)? = storedValue(forKey: defaultName) else { return nil }
        return data
    }

    /// The array of strings stored under `defaultName`; `nil` when the value is not an array, or
    /// holds anything but strings, or is absent. As `UserDefaults.stringArray(forKey:)`.
    public func stringArray(forKey defaultName: String) -> [String]? {
        guard case .array(let elements)? = storedValue(forKey: defaultName) else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// The integer value of `defaultName`, converted as `UserDefaults.integer(forKey:)` converts it;
    /// `0` when absent or not convertible.
    ///
    /// A real number is truncated toward zero (saturating at `Int.min`/`Int.max`; `0` for NaN), an
    /// unsigned integer above `Int.max` gives `Int.max` (read it with `object(forKey:) as? UInt64`), a
    /// Boolean is `1` or `0`, and a string gives the integer it begins with, after leading white space
    /// (`"3"` and `" 42 apples"` give 3 and 42, `"3.7"` gives 3, `"YES"` gives 0), as
    /// `NSString.integerValue` reads it.
    public func integer(forKey defaultName: String) -> Int {
        guard let value = storedValue(forKey: defaultName) else { return 0 }
        switch value {
        case .integer(let integer): return integer
        case .unsignedInteger: return .max
        case .real(let real): return Self.truncated(real)
        case .bool(let bool): return bool ? 1 : 0
        case .float(let float): return Self.truncated(Double(float))
        case .string(let string): return NSString(string: string).integerValue
        case .date, .data, .array, .dictionary: return 0
        }
    }

    /// The floating-point value of `defaultName`, converted as `UserDefaults.double(forKey:)` converts
    /// it; `0` when absent or not convertible.
    ///
    /// An integer converts to the nearest `Double`, a Boolean is `1` or `0`, and a string gives the
    /// number it begins with, after leading white space (`"2.5"` gives 2.5, `"1e3"` gives 1000), as
    /// `NSString.doubleValue` reads it.
    public func double(forKey defaultName: String) -> Double {
        guard let value = storedValue(forKey: defaultName) else { return 0 }
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        case .unsignedInteger(let integer): return Double(integer)
        case .bool(let bool): return bool ? 1 : 0
        case .float(let float): return Double(float)
        case .string(let string): return NSString(string: string).doubleValue
        case .date, .data, .array, .dictionary: return 0
        }
    }

    /// The value of `defaultName` as a `Float`, converted as ``double(forKey:)`` converts it, then
    /// rounded to the nearest `Float`. As `UserDefaults.float(forKey:)`.
    public func float(forKey defaultName: String) -> Float {
        Float(double(forKey: defaultName))
    }

    /// The Boolean value of `defaultName`, converted as `UserDefaults.bool(forKey:)` converts it;
    /// `false` when absent or not convertible.
    ///
    /// A number is `true` unless it is zero. A string is read as `NSString.boolValue` reads it: `true`
    /// when, after leading white space, it begins with `Y`, `y`, `T` or `t` (`"YES"`, `"true"`) or with
    /// an optionally signed number other than zero (`"1"`, `"-5"`); `false` otherwise (`"NO"`, `"0"`,
    /// `"false"`, `""`).
    public func bool(forKey defaultName: String) -> Bool {
        guard let value = storedValue(forKey: defaultName) else { return false }
        switch value {
        case .bool(let bool): return bool
        case .integer(let integer): return integer != 0
        case .unsignedInteger: return true
        case .real(let real): return real != 0
        case .float(let float): return float != 0
        case .string(let string): return NSString(string: string).boolValue
        case .date, .data, .array, .dictionary: return false
        }
    }

    /// The URL stored under `defaultName`, read as swift-corelibs-foundation reads it; `nil` for a value
    /// that is not a string, or none.
    ///
    /// A string with a URL scheme (`https://example.com/`, `file:///tmp/x`) is that URL. Any other string
    /// is a path, with a leading `~` expanded to the home directory, and gives a file URL (a relative path
    /// is taken relative to the current directory). ``set(_:forKey:)-(URL?,_)`` stores a URL in these
    /// forms. Unlike Apple platforms, data is never read as an archived `URL`.
    public func url(forKey defaultName: String) -> URL? {
        guard case .string(let text)? = storedValue(forKey: defaultName) else { return nil }
        if !text.hasPrefix("/"), !text.hasPrefix("~"), let url = URL(string: text), url.scheme != nil { return url }
        return URL(fileURLWithPath: NSString(string: text).expandingTildeInPath)
    }

    /// Every key visible through the search list with the value ``object(forKey:)`` returns for it,
    /// as `UserDefaults.dictionaryRepresentation()`; `[:]` when a domain cannot be read, with the
    /// reason in ``lastError``.
    ///
    /// Values are whole: a dictionary under a key comes from one domain, never merged across domains.
    /// ``propertyListRepresentation()`` is the same as ``PropertyListValue`` values, throwing instead.
    public func dictionaryRepresentation() -> [String: Any] {
        call(failure: [:]) { () throws(PrefsError) -> [String: Any] in try propertyListRepresentation().nativeValues }
    }

    /// `real` truncated toward zero, saturating at the bounds of `Int`; `0` for NaN.
    private static func truncated(_ real: Double) -> Int {
        if real.isNaN { return 0 }
        if real >= Double(Int.max) { return .max }
        if real <= Double(Int.min) { return .min }
        return Int(real)
    }

    // MARK: Writing

    /// Stores `value` under `defaultName` in the persistent domain, as `UserDefaults.set(_:forKey:)`
    /// does; `nil` removes the key, as ``removeObject(forKey:)`` does.
    ///
    /// The write is on disk (for a file domain) when the call returns, and a read in any process then
    /// sees it; other keys of the domain, written meanwhile by other processes, are kept.
    ///
    /// A value that is not a property-list value (`NSNull`, `URL`, `UUID`, a struct, a dictionary with
    /// non-string keys, …; see ``PropertyListValue/init(_:)``) is refused, where Foundation's
    /// `UserDefaults` stops the process: nothing is written, and ``lastError`` is
    /// ``RVS_PersistentPrefs/PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the key.
    /// A domain file that cannot be read is left as it is, and the write fails (see ``lastError``).
    /// A collection whose class declares constraints (`@Entry(…, range:)`, `allowed:`) is judged as the
    /// class's instances judge their writes: a value an entry does not allow is refused with
    /// ``RVS_PersistentPrefs/PrefsError/valueNotAllowed(entry:reason:)``, and nothing is written.
    public func set(_ value: Any?, forKey defaultName: String) {
        call(failure: ()) { () throws(PrefsError) in
            guard let value else { return try removeStoredValue(forKey: defaultName) }
            guard let plist = Self.propertyListValue(value) else {
                throw .valuesNotPlistCompatible(invalidElements: [defaultName])
            }
            try setValue(plist, forKey: defaultName)
        }
    }

    /// Stores `url` under `defaultName` as swift-corelibs-foundation stores it, as
    /// `UserDefaults.set(_:forKey:)` with a URL does: a file URL as its path, any other URL as its
    /// absolute string, so that any tool reads it; `nil` removes the key. ``url(forKey:)`` reads it back.
    ///
    /// ```swift
    /// suite.set(URL(fileURLWithPath: "/var/log/app.log"), forKey: "logFile")   // stored as "/var/log/app.log"
    /// suite.url(forKey: "logFile")   // file:///var/log/app.log
    /// ```
    public func set(_ url: URL?, forKey defaultName: String) {
        set(url.map(Self.storedForm(of:)) as Any?, forKey: defaultName)
    }

    /// Removes `defaultName` from the persistent domain, as `UserDefaults.removeObject(forKey:)` does;
    /// another domain of the search list may then supply a value for it again.
    ///
    /// Removing a key that is not there writes nothing. A failure is reported in ``lastError``.
    public func removeObject(forKey defaultName: String) {
        call(failure: ()) { () throws(PrefsError) in try removeStoredValue(forKey: defaultName) }
    }

    /// Removes `key`, but first looks without the domain's lock when the domain may not exist yet:
    /// taking the lock would create its directory and lock file only to remove nothing.
    private func removeStoredValue(forKey key: String) throws(PrefsError) {
        if !persistentDomain.isKnownToExist, try persistentDomain.snapshot().contents[key] == nil { return postDidChange() }
        try removeValue(forKey: key)
    }

    /// Returns `true` and does nothing else: every write of a suite is already on disk when it
    /// returns, so there is nothing to wait for. Kept so that code calling
    /// `UserDefaults.synchronize()` compiles; it leaves ``lastError`` as it is.
    @discardableResult
    public func synchronize() -> Bool {
        true
    }

    // MARK: Persistent and volatile domains

    /// The name of the suite's persistent domain, which the persistent-domain calls take for it: for a
    /// ``FileDomainStorage``, its file's name without `.plist` (the application domain's name, or the
    /// group ID); for another kind of domain, such as an ``InMemoryDomainStorage``, its
    /// ``DomainStorage/location``.
    public var persistentDomainName: String {
        switch persistentDomain {
        case let file as FileDomainStorage: return file.name
        default: return persistentDomain.location
        }
    }

    /// The domain that the persistent-domain calls mean by `name`, and whether they may write it.
    private func namedDomain(_ name: String) throws(PrefsError) -> (domain: (any DomainStorage)?, writable: Bool) {
        if DomainName.globalDomainNames.contains(name) { return (globalDomain, false) }
        if name == persistentDomainName { return (persistentDomain, true) }
        // No preferences directory: no domain of any name can be kept (reads find nothing, writes are refused).
        if persistentDomain is NoDirectoryDomainStorage { return (persistentDomain, true) }
        if let file = persistentDomain as? FileDomainStorage {
            return (try FileDomainStorage.shared(directory: file.directory, name: name, durable: file.durable), true)
        }
        let domain = userDefaultsState.withLock { state in
            if let existing = state.inMemoryDomains[name] { return existing }
            let created = InMemoryDomainStorage(location: "in-memory domain '\(name)'")
            state.inMemoryDomains[name] = created
            return created
        }
        return (domain, true)
    }

    private func writableDomain(_ name: String) throws(PrefsError) -> any DomainStorage {
        let (domain, writable) = try namedDomain(name)
        guard writable, let domain else {
            throw .userDefaultsUnavailable(reason: "the global domain '\(name)' is read-only through a suite")
        }
        return domain
    }

    /// The contents of the persistent domain named `domainName`, as
    /// `UserDefaults.persistentDomain(forName:)`; `nil` when that domain does not exist or holds no
    /// keys, or cannot be read (then with the reason in ``lastError``).
    ///
    /// For a suite over a ``FileDomainStorage``, `domainName` names the file `<domainName>.plist` in the
    /// same directory as the suite's persistent domain, under the same rules as any domain name; ``persistentDomainName`` names the suite's own domain, and
    /// `.GlobalPreferences` or `NSGlobalDomain` the suite's global domain. A suite over another kind of
    /// domain, such as an ``InMemoryDomainStorage``, keeps the domains of other names in memory, empty
    /// at first, for as long as the suite lives.
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        call(failure: nil) { () throws(PrefsError) -> [String: Any]? in
            guard let domain = try namedDomain(domainName).domain else { return nil }
            let contents = try domain.snapshot().contents
            return contents.isEmpty ? nil : contents.nativeValues
        }
    }

    /// Replaces the whole persistent domain named `domainName` with `domain`, as
    /// `UserDefaults.setPersistentDomain(_:forName:)`; names are resolved as
    /// ``persistentDomain(forName:)`` resolves them.
    ///
    /// One locked write, excluding every other writer. Every value must be a property-list value,
    /// else nothing is written and ``lastError`` is
    /// ``RVS_PersistentPrefs/PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the keys.
    /// A domain file that cannot be read is first moved aside, never deleted, as a deliberate
    /// replacement of ``RVS_PersistentPrefs/values`` does. The global domain is read-only: writing it
    /// fails with ``RVS_PersistentPrefs/PrefsError/userDefaultsUnavailable(reason:)``.
    public func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        call(failure: ()) { () throws(PrefsError) in
            let contents = try Self.propertyListValues(domain)
            let storage = try writableDomain(domainName)
            let forcedRules = forcedRules(ofDomainNamed: domainName, stored: storage)
            // The collections' rules are this suite's domain's: another domain's collections are other classes'.
            let rules = storage === persistentDomain ? allCollectionRules() : [:]
            if !(contents.isEmpty && Self.isKnownToBeMissing(storage)) {
                try storage.modify(repairing: .moveUnreadableAside) { (stored: inout [String: PropertyListValue]) throws(PrefsError) in
                    // As every other write: one that sets or removes a forced entry is refused whole, under the lock.
                    try forcedRules.refuseForcedChanges(from: stored, to: contents)
                    for (key, keyRules) in rules.sorted(by: { $0.key < $1.key }) {
                        // A newer collection, or its version stamp, is not this app's to change (SPEC §9).
                        let stamp = keyRules.first?.schema.versionKey
                        if stored[key] != contents[key] || stamp.map({ stored[$0] != contents[$0] }) == true {
                            for rule in keyRules { try rule.refuseNewerCollection(in: stored) }
                        }
                        try Self.refuseBrokenRules(keyRules, from: stored[key], to: contents[key])
                    }
                    stored = contents
                }
            }
            postDidChange()
        }
    }

    /// The suite whose managed domains force entries in the domain named `name` (stored in `storage`): this
    /// suite for its own domain; for another domain of its directory, a suite over that domain's managed
    /// file in the same managed directory, as ``objectIsForced(forKey:inDomain:)`` finds it.
    private func forcedRules(ofDomainNamed name: String, stored storage: any DomainStorage) -> DefaultsSuite {
        guard storage !== persistentDomain else { return self }
        let managed: [any DomainStorage] = sources.compactMap { source in
            guard source.role == .managed, let file = source.storage as? AdministratorDomainStorage,
                  let sibling = try? FileDomainStorage.shared(directory: file.file.directory, name: name) else { return nil }
            return AdministratorDomainStorage.shared(sibling, verifiesOwnership: true)
        }
        return DefaultsSuite(persistentDomain: storage, globalDomain: nil, managedDomains: managed, argumentDomain: [:])
    }

    /// Removes every key of the persistent domain named `domainName`, as
    /// `UserDefaults.removePersistentDomain(forName:)`; names are resolved as
    /// ``persistentDomain(forName:)`` resolves them.
    ///
    /// The file stays, holding an empty dictionary (its lock file stays too). A domain file that cannot
    /// be read is moved aside, never deleted. The global domain is read-only: removing it fails with
    /// ``RVS_PersistentPrefs/PrefsError/userDefaultsUnavailable(reason:)``.
    public func removePersistentDomain(forName domainName: String) {
        call(failure: ()) { () throws(PrefsError) in
            let storage = try writableDomain(domainName)
            // A collection stored by a newer version of a class using this suite is not this app's to remove (SPEC §9).
            let rules = storage === persistentDomain ? allCollectionRules().values.flatMap { $0 } : []
            if !Self.isKnownToBeMissing(storage) {
                try storage.modify(repairing: .moveUnreadableAside) { (stored: inout [String: PropertyListValue]) throws(PrefsError) in
                    for rule in rules { try rule.refuseNewerCollection(in: stored) }
                    stored = [:]
                }
            }
            postDidChange()
        }
    }

    /// Whether `domain` has no file (or contents) at all: emptying it then needs no write, and taking
    /// its lock would create its directory and lock file for nothing. An unreadable file is not
    /// missing: its repair goes on.
    private static func isKnownToBeMissing(_ domain: any DomainStorage) -> Bool {
        !domain.isKnownToExist && (try? domain.snapshot())?.exists == false
    }

    /// The names of the two volatile domains every suite has, which `setVolatileDomain(_:forName:)`
    /// cannot replace.
    private static let argumentDomainName = "NSArgumentDomain"
    private static let registrationDomainName = "NSRegistrationDomain"

    /// The contents of the volatile domain named `domainName`, as `UserDefaults.volatileDomain(forName:)`:
    /// the argument domain (`NSArgumentDomain`), the registration domain (`NSRegistrationDomain`), or a
    /// domain set with ``setVolatileDomain(_:forName:)``; `[:]` for any other name.
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        switch domainName {
        case Self.argumentDomainName: return argumentDomain.nativeValues
        case Self.registrationDomainName: return registrationDomain.nativeValues
        default: return userDefaultsState.withLock { $0.volatileDomains[domainName] }?.nativeValues ?? [:]
        }
    }

    /// The names of the volatile domains: the argument and registration domains, and those set with
    /// ``setVolatileDomain(_:forName:)``, as `UserDefaults.volatileDomainNames`.
    public var volatileDomainNames: [String] {
        [Self.registrationDomainName, Self.argumentDomainName] + userDefaultsState.withLock { $0.volatileDomains.keys.sorted() }
    }

    /// Keeps `domain` in memory under `domainName`, for as long as the suite lives, as
    /// `UserDefaults.setVolatileDomain(_:forName:)`; a domain of that name set before is replaced.
    ///
    /// A volatile domain is not part of the search list: reads of the suite do not consult it, as on
    /// Apple platforms, and it is never written to disk. Each suite has its own. Every value must be a
    /// property-list value, else nothing is kept and ``lastError`` is
    /// ``RVS_PersistentPrefs/PrefsError/valuesNotPlistCompatible(invalidElements:)`` naming the keys. The
    /// argument and registration domains cannot be replaced this way (use ``register(defaults:)``):
    /// naming them fails with ``RVS_PersistentPrefs/PrefsError/userDefaultsUnavailable(reason:)``.
    public func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        call(failure: ()) { () throws(PrefsError) in
            try Self.refuseBuiltInVolatileDomain(domainName)
            let contents = try Self.propertyListValues(domain)
            userDefaultsState.withLock { $0.volatileDomains[domainName] = contents }
        }
    }

    /// Forgets the volatile domain named `domainName`, as `UserDefaults.removeVolatileDomain(forName:)`;
    /// nothing happens when there is none. The argument and registration domains cannot be removed.
    public func removeVolatileDomain(forName domainName: String) {
        call(failure: ()) { () throws(PrefsError) in
            try Self.refuseBuiltInVolatileDomain(domainName)
            _ = userDefaultsState.withLock { $0.volatileDomains.removeValue(forKey: domainName) }
        }
    }

    private static func refuseBuiltInVolatileDomain(_ name: String) throws(PrefsError) {
        if name == argumentDomainName || name == registrationDomainName {
            throw .userDefaultsUnavailable(reason: "the volatile domain '\(name)' belongs to the suite and cannot be set or removed by name")
        }
    }

    // MARK: Change notification

    /// Posts `UserDefaults.didChangeNotification` on `NotificationCenter.default`, with this suite as its
    /// object: after each successful change made through the suite (its `UserDefaults` API, its throwing
    /// writes, and so every write of an ``RVS_PersistentPrefs`` instance using it), and when a watching
    /// instance hears of a change made elsewhere.
    package func postDidChange() {
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }

    /// Posts `UserDefaults.didChangeNotification` for a change made elsewhere that a watching instance heard and
    /// found in `snapshot` (the version of the domain its read returned; `nil` for a value built from several),
    /// once per change: every other instance of the suite that hears the same change, and finds it in the same
    /// version, posts nothing more. The notification names the suite, not the instance, so 2,000 instances
    /// hearing one change told its observers the same thing 2,000 times. A version is one change (Invariant F9:
    /// a domain returns a new snapshot after each change, the same one while unchanged).
    package func postDidChange(afterChangeFoundIn snapshot: DomainSnapshot?) {
        if let snapshot {
            let isFirst = userDefaultsState.withLock { state -> Bool in
                if state.lastChangeMadeElsewhere === snapshot { return false }
                state.lastChangeMadeElsewhere = snapshot
                return true
            }
            guard isFirst else { return }
        }
        postDidChange()
    }
}
