import Foundation

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
    ///   themselves, a `RawRepresentable` as its raw value, `URL` as its absolute string, `UUID` as its
    ///   string, and any other `Codable` value as its structure (a struct is a dictionary).
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
    /// path, `\.$launchCount`, to ``PrefsObserving/value(of:)``, ``PrefsObserving/updates(of:)`` and
    /// ``PrefsObserving/modify(_:_:)``.
    @propertyWrapper
    public struct Entry<Value> {
        /// What the entry is, and its cache: one reference, so that the accessors copy the entry cheaply.
        @usableFromInline let definition: EntryDefinition<Value>

        /// The entry name: the key of this entry in the collection.
        public var name: String { definition.name }
        /// The value an absent (or undecodable) entry reads as; never written by reading.
        public var defaultValue: Value { definition.defaultValue }
        var coding: EntryCoding<Value> { definition.coding }

        /// Declares an entry stored as its `Codable` property-list structure (or as itself, for the types
        /// a property list holds).
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        public init(wrappedValue: Value, _ name: String) where Value: Codable & SendableMetatype {
            self.init(name: name, defaultValue: wrappedValue, coding: .codable())
        }

        /// Declares an entry stored as the raw value of its `RawRepresentable` value.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        public init(wrappedValue: Value, _ name: String) where Value: RawRepresentable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name: name, defaultValue: wrappedValue, coding: .rawRepresentable())
        }

        /// Declares an entry of a `Codable` `RawRepresentable` type (an enum with a raw type), stored as its raw value.
        /// - Parameters:
        ///   - wrappedValue: The default, given as the property's initial value.
        ///   - name: The entry name.
        public init(wrappedValue: Value, _ name: String) where Value: RawRepresentable & Codable & SendableMetatype, Value.RawValue: Codable & SendableMetatype {
            self.init(name: name, defaultValue: wrappedValue, coding: .rawRepresentable())
        }

        private init(name: String, defaultValue: Value, coding: EntryCoding<Value>) {
            definition = EntryDefinition(name: name, defaultValue: defaultValue, coding: coding)
        }

        /// Not available: an `@Entry` property reads and writes its instance's collection, so it exists
        /// only in subclasses of ``RVS_PersistentPrefs``.
        @available(*, unavailable, message: "@Entry is only available on properties of RVS_PersistentPrefs subclasses")
        public var wrappedValue: Value {
            get { fatalError("@Entry is only available on properties of RVS_PersistentPrefs subclasses") }
            set { fatalError("@Entry is only available on properties of RVS_PersistentPrefs subclasses") }
        }

        /// The entry itself, as `$name`: its key path (`\.$launchCount`) names the entry for
        /// ``PrefsObserving/value(of:)``, ``PrefsObserving/updates(of:)`` and
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
    let defaultValue: Value
    let coding: EntryCoding<Value>

    init(name: String, defaultValue: Value, coding: EntryCoding<Value>) {
        self.name = name
        self.defaultValue = defaultValue
        self.coding = coding
    }

    // The cache, kept as separate fields so that checking it copies no value.
    /// Whether the fields below hold a decoded outcome.
    var isCached = false
    /// The snapshot the stored form was found in: while the domain is unchanged, the same object.
    var snapshot: DomainSnapshot?
    var storageKey = ""
    /// The stored form decoded (`nil`: the entry was absent).
    var stored: PropertyListValue?
    /// What it decoded to, or why it did not.
    var value: Value?
    var failure: PrefsError?

    /// The cached outcome: the value, or the decoding error.
    func cachedValue() throws(PrefsError) -> Value {
        if let failure { throw failure }
        return value!
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
        case .success(let value): (self.value, failure) = (value, nil)
        case .failure(let error): (value, failure) = (nil, error)
        }
    }
}
