import Foundation
import PrefsPropertyList

extension RVS_PersistentPrefs {
    /// A typed entry of the collection, declared once with its name, type and default.
    ///
    /// Reach for it when you would otherwise write a computed property over the subscript:
    ///
    /// ```swift
    /// final class Settings: RVS_PersistentPrefs {
    ///     @Entry("launchCount") var launchCount = 0
    ///     @Entry("appearance") var appearance = Appearance.system
    ///     @Entry("window") var window = WindowFrame()
    ///     @Entry("lastOpened") var lastOpened: Date? = nil
    /// }
    /// ```
    ///
    /// - The entry name is allowed automatically: ``RVS_PersistentPrefs/keys`` lists every `@Entry` name.
    ///   Two properties with one entry name stop the program with a message naming both.
    /// - Reading an absent entry returns the default and writes nothing. Assigning the default stores it;
    ///   assigning `nil` to an `Optional` entry removes it.
    /// - A value is stored as a readable property list: `String`, `Bool`, numbers, `Date` and `Data` as
    ///   themselves, a `RawRepresentable` as its raw value (also inside an `Optional`, an array, a `Set` or a
    ///   `[String: …]` dictionary, without being `Codable`), `URL` as its absolute string, `UUID` as its
    ///   string, any other `Codable` value as its structure (a struct is a dictionary), and any other type
    ///   as the ``PropertyListBridge`` given with `bridge:` stores it.
    /// - `formerly:` lists names the entry was stored under before, and `upgrading:` converts a value stored
    ///   as an earlier type (see <doc:SchemaEvolution>). Neither writes by reading.
    /// - A stored value that does not decode reads as the default, with
    ///   ``PrefsError/invalidStoredEntry(entry:reason:)`` in ``RVS_PersistentPrefs/lastError``; it is kept
    ///   until the entry is written. ``PrefsObserving/value(of:)`` throws that error instead.
    /// - Every write is a locked single-entry update, validated like a subscript write. An in-place change
    ///   (`settings.window.width = 1024`, `settings.launchCount += 1`) reads and writes the entry as one
    ///   operation of the instance; to change it atomically across processes, use
    ///   ``PrefsObserving/modify(_:_:)``.
    ///
    /// `Entry` is nested in the class, so that inside a subclass `@Entry` never means another module's
    /// `Entry` (SwiftUI has one). Its projected value (`$launchCount`) is the entry itself: pass its key
    /// path, `\.$launchCount`, to ``PrefsObserving/value(of:)``, ``PrefsObserving/updates(of:initial:)`` and
    /// ``PrefsObserving/modify(_:_:)``.
    @propertyWrapper
    public struct Entry<Value> {
        /// What the entry is, and its cache: one reference, so that the accessors copy the entry cheaply.
        @usableFromInline let definition: EntryDefinition<Value>

        /// The entry name: the key of this entry in the collection.
        public var name: String { definition.name }
        /// The value an absent (or undecodable) entry reads as; never written by reading.
        public var defaultValue: Value { definition.defaultValue }
        /// The names the entry was stored under before, read when ``name`` is absent (see
        /// <doc:SchemaEvolution>).
        public var formerNames: [String] { definition.formerNames }
        var coding: EntryCoding<Value> { definition.coding }
        /// The values the entry allows and its description, as declared.
        var constraint: EntryConstraint? { definition.constraint }
        /// The stored form of the default; `nil` when the default is stored as nothing (an `Optional`'s `nil`)
        /// or cannot be stored.
        var storedDefault: PropertyListValue? { (try? definition.coding.encode(definition.defaultValue)) ?? nil }

        /// Declares an entry stored as its `Codable` property-list structure (or as itself, for the types
        /// a property list holds).
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before (see <doc:SchemaEvolution>): read when
        ///     `name` is absent, and removed by the entry's next write.
        public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = []) where Value: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(CodableBridge<Value>()))
        }

        /// Declares an entry stored as the raw value of its `RawRepresentable` value.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before: read when `name` is absent, and
        ///     removed by the entry's next write.
        public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value: RawRepresentable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(RawValueBridge<Value>()))
        }

        /// Declares an entry of a `Codable` `RawRepresentable` type (an enum with a raw type), stored as its raw value.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before: read when `name` is absent, and
        ///     removed by the entry's next write.
        public init(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value: RawRepresentable & Codable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(RawValueBridge<Value>()))
        }

        /// Declares an entry stored in the form `bridge` gives its values: for a type that is neither
        /// `Codable` nor `RawRepresentable`, or one that wants another stored form.
        ///
        /// ```swift
        /// @Entry("accent", bridge: HexColorBridge()) var accent = RGB(red: 0, green: 122, blue: 255)
        /// ```
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - bridge: Converts values to and from their stored form (see ``PropertyListBridge``).
        ///   - formerNames: Names the entry was stored under before: read when `name` is absent, and
        ///     removed by the entry's next write.
        public init<Bridge: PropertyListBridge>(wrappedValue: Value, _ name: String, bridge: Bridge, formerly formerNames: [String] = [])
        where Bridge.Value == Value {
            self.init(name, wrappedValue, formerNames, EntryCoding(bridge))
        }

        // MARK: Changed types

        /// Declares a `Codable` entry whose stored value may still be of an earlier type, `Old`: a stored
        /// value that does not decode as `Value` is decoded as `Old` and converted by `upgrade`.
        ///
        /// ```swift
        /// @Entry("appearance", upgrading: { (old: String) in Appearance(rawValue: old.lowercased()) ?? .system })
        /// var appearance = Appearance.system
        /// ```
        ///
        /// Nothing is written by reading: the converted value is stored only when the app writes the entry.
        /// A stored value that is neither reads as the default, with `lastError` naming the entry.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        ///   - upgrade: Converts a value of the earlier type; if it throws, the entry reads as its default.
        public init<Old: Decodable & SendableMetatype>(
            wrappedValue: Value, _ name: String, formerly formerNames: [String] = [],
            upgrading upgrade: @escaping @Sendable (Old) throws -> Value
        ) where Value: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(CodableBridge<Value>()).upgrading(upgrade))
        }

        /// Declares a `RawRepresentable` entry whose stored value may still be of an earlier type, `Old`
        /// that it converts with `upgrade`, as the `Codable` form of this initializer does.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        ///   - upgrade: Converts a value of the earlier type; if it throws, the entry reads as its default.
        public init<Old: Decodable & SendableMetatype>(
            wrappedValue: Value, _ name: String, formerly formerNames: [String] = [],
            upgrading upgrade: @escaping @Sendable (Old) throws -> Value
        ) where Value: RawRepresentable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(RawValueBridge<Value>()).upgrading(upgrade))
        }

        /// Declares a `Codable` `RawRepresentable` entry whose stored value may still be of an earlier
        /// type, `Old`, stored as its raw value.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        ///   - upgrade: Converts a value of the earlier type; if it throws, the entry reads as its default.
        public init<Old: Decodable & SendableMetatype>(
            wrappedValue: Value, _ name: String, formerly formerNames: [String] = [],
            upgrading upgrade: @escaping @Sendable (Old) throws -> Value
        ) where Value: RawRepresentable & Codable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(RawValueBridge<Value>()).upgrading(upgrade))
        }

        // MARK: Raw-representable elements

        /// Declares an `Optional` entry of a `RawRepresentable` type that need not be `Codable`, stored as
        /// its raw value; `nil` removes the entry.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        public init<Element>(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value == Element?, Element: RawRepresentable & SendableMetatype, Element.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(OptionalBridge(wrapped: RawValueBridge<Element>())))
        }

        /// Declares an entry holding an array of a `RawRepresentable` type that need not be `Codable`,
        /// stored as an array of raw values: `enum Level: String { case low, high }` in
        /// `@Entry("levels") var levels: [Level] = []`.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        public init<Element>(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value == [Element], Element: RawRepresentable & SendableMetatype, Element.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(ArrayBridge(element: RawValueBridge<Element>())))
        }

        /// Declares an entry holding a set of a `RawRepresentable` type that need not be `Codable`,
        /// stored as an array of raw values.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        public init<Element>(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value == Set<Element>, Element: RawRepresentable & Hashable & SendableMetatype, Element.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(SetBridge(element: RawValueBridge<Element>())))
        }

        /// Declares an entry holding a string-keyed dictionary of a `RawRepresentable` type that need not
        /// be `Codable`, stored as a dictionary of raw values.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        ///   - formerNames: Names the entry was stored under before.
        public init<Element>(wrappedValue: Value, _ name: String, formerly formerNames: [String] = [])
        where Value == [String: Element], Element: RawRepresentable & SendableMetatype, Element.RawValue: Codable & SendableMetatype {
            self.init(name, wrappedValue, formerNames, EntryCoding(DictionaryBridge(element: RawValueBridge<Element>())))
        }

        private init(_ name: String, _ defaultValue: Value, _ formerNames: [String], _ coding: EntryCoding<Value>) {
            definition = EntryDefinition(name: name, formerNames: formerNames, defaultValue: defaultValue, coding: coding)
        }

        /// Not available: an `@Entry` property reads and writes its instance's collection, so it exists
        /// only in subclasses of ``RVS_PersistentPrefs``.
        @available(*, unavailable, message: "@Entry is only available on properties of RVS_PersistentPrefs subclasses")
        public var wrappedValue: Value {
            get { fatalError("@Entry is only available on properties of RVS_PersistentPrefs subclasses") }
            set { fatalError("@Entry is only available on properties of RVS_PersistentPrefs subclasses") }
        }

        /// The entry itself, as `$name`: its key path (`\.$launchCount`) names the entry for
        /// ``PrefsObserving/value(of:)``, ``PrefsObserving/updates(of:initial:)`` and
        /// ``PrefsObserving/modify(_:_:)``.
        public var projectedValue: Entry<Value> { self }

        /// The property's value, read from and written to the instance's collection.
        ///
        /// The compiler calls this for every access to an `@Entry` property; you do not call it yourself.
        // Inlinable, so that in the subclass's module the storage key path is a constant the optimizer turns
        // into a plain field access (a key-path projection through the runtime costs about a tenth of a read).
        @inlinable
        public static subscript<Instance: RVS_PersistentPrefs>(
            _enclosingInstance instance: Instance,
            wrapped wrappedKeyPath: ReferenceWritableKeyPath<Instance, Value>,
            storage storageKeyPath: ReferenceWritableKeyPath<Instance, Self>
        ) -> Value {
            get {
                instance.readEntry(instance[keyPath: storageKeyPath])
            }
            set {
                instance.writeEntry(instance[keyPath: storageKeyPath], newValue)
            }
            _modify {
                // One operation of the instance: its lock is held from the read, across the caller's change,
                // to the write, so no other thread's operation on it comes between.
                let entry = instance[keyPath: storageKeyPath]
                instance.beginEntryChange()
                defer { instance.endEntryChange() }
                var (value, readSucceeded) = instance.readEntryForChange(entry)
                yield &value
                if readSucceeded { instance.writeEntry(entry, value) }
            }
        }
    }
}

/// One entry of one instance: its name, default and coding, and its decoded value, kept while what it
/// was decoded from is unchanged, so that reading an unchanged domain decodes nothing. The cache is
/// guarded by the instance's operation lock.
@usableFromInline
final class EntryDefinition<Value> {
    let name: String
    let formerNames: [String]
    let defaultValue: Value
    let coding: EntryCoding<Value>
    /// The values the entry allows and its description (SPEC §14); set once, by the declaration.
    var constraint: EntryConstraint?

    init(name: String, formerNames: [String], defaultValue: Value, coding: EntryCoding<Value>) {
        self.name = name
        self.formerNames = formerNames.filter { $0 != name }
        self.defaultValue = defaultValue
        self.coding = coding
    }

    /// The entry's stored form in `entries`: under its name, else under the first former name that holds one.
    func storedForm(in entries: [String: PropertyListValue]?) -> PropertyListValue? {
        guard let entries else { return nil }
        if let current = entries[name] { return current }
        for former in formerNames {
            if let stored = entries[former] { return stored }
        }
        return nil
    }

    /// Stores `encoded` (`nil`: removes the entry) under the entry's name, removing its former names, as
    /// every write of the entry does in the same locked update.
    func store(_ encoded: PropertyListValue?, in entries: inout [String: PropertyListValue]) {
        entries[name] = encoded
        for former in formerNames { entries[former] = nil }
    }

    // The cache, kept as separate fields so that checking it copies no value.
    /// Whether the fields below hold a decoded outcome.
    var isCached = false
    /// The snapshot the stored form was found in: while the domain is unchanged, the same object.
    var snapshot: DomainSnapshot?
    var storageKey = ""
    /// The stored form decoded (`nil`: the entry was absent).
    var stored: PropertyListValue?
    /// What it decoded to (boxed: an optional of a class needs no metadata of `Value`'s own to be read in
    /// unspecialized code), or why it did not.
    var decoded: DecodedValue<Value>?
    var failure: PrefsError?
    /// The suite whose kept read (`keptAt`, see `DefaultsSuite.Found.keptAt`) the cached
    /// outcome came from: while the suite says nothing changed since, a read returns it without a search.
    private(set) var suite: DefaultsSuite?
    private(set) var keptAt: DefaultsSuite.KeptRead?

    /// Records the kept read the cached outcome now stands for.
    func keep(_ keptAt: DefaultsSuite.KeptRead?, by suite: DefaultsSuite) {
        self.keptAt = keptAt
        if self.suite !== suite { self.suite = suite }
    }

    /// The key path that stands for this entry in Swift Observation, made on the first read.
    private var observationKeyPath: (any KeyPath<RVS_PersistentPrefs, Void> & Sendable)?

    /// The cached outcome: the value, or the decoding error.
    func cachedValue() throws(PrefsError) -> Value {
        if let failure { throw failure }
        return decoded!.value
    }

    /// The key path of this entry in `support`, looked up once.
    func observedKeyPath(in support: SwiftObservationSupport) -> any KeyPath<RVS_PersistentPrefs, Void> & Sendable {
        if let observationKeyPath { return observationKeyPath }
        let made = support.keyPath(forEntry: name)
        observationKeyPath = made
        return made
    }

    /// Whether decoded values may be kept: not for a class, whose one cached object every reader would
    /// share, so that changing a read value in place (`settings.profile.name = "x"`, which only calls
    /// the getter for a class) would change what later reads return without anything being written.
    private static var isCacheable: Bool { !(Value.self is AnyClass) }

    func cache(snapshot: DomainSnapshot?, storageKey: String, stored: PropertyListValue?, outcome: Result<Value, PrefsError>) {
        guard Self.isCacheable else { return }
        isCached = true
        self.snapshot = snapshot
        self.storageKey = storageKey
        self.stored = stored
        switch outcome {
        case .success(let value): (decoded, failure) = (DecodedValue(value), nil)
        case .failure(let error): (decoded, failure) = (nil, error)
        }
    }
}

/// A decoded value, kept by an ``EntryDefinition``.
final class DecodedValue<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}
