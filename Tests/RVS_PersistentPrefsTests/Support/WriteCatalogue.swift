import Foundation
import Testing
@testable import PrefsPropertyList
@testable import RVS_PersistentPrefs

/// A subclass the write catalogue can work on: it needs the typed property that `typedProperty` sets.
/// The base-class fixtures, the observation fixtures and the default-suite subclasses all conform,
/// so that one catalogue serves every test of the module.
protocol BaseClassWriteTarget: RVS_PersistentPrefs {
    var appearance: String { get set }
}

/// Every kind of write the base class offers (SPEC §3 table), once. A test takes the kinds its rule
/// is about as a filter of `allCases` by the properties below, so that a kind added here reaches
/// every test whose rule covers it.
///
/// Each write has its own arguments, chosen so that it changes `before`; the writes that take
/// entries (`takesEntries`) can be given others instead, for the validation tests.
enum BaseClassWriteKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A new instance made with `init(key:values:)`, merging its entries into the stored collection.
    case initializerMerge = "init(key:values:)"
    /// `prefs.values = entries`: the whole collection replaced.
    case assignValues = "prefs.values = [...]"
    /// `prefs[name] = value` for each entry.
    case subscriptSet = "prefs[name] = value"
    /// A typed property of the subclass, a setter over the subscript.
    case typedProperty = "prefs.appearance = \"dark\""
    /// `prefs.values[name] = value` for each entry: an in-place mutation.
    case inPlaceMutation = "prefs.values[name] = value"
    /// `prefs[name] = nil`.
    case subscriptRemove = "prefs[name] = nil"
    /// `prefs.values.removeAll()`: an in-place mutation that empties the collection.
    case inPlaceRemoval = "prefs.values.removeAll()"
    /// `prefs.values = [:]`.
    case assignEmpty = "prefs.values = [:]"
    case clear = "prefs.clear()"
    case deleteAll = "prefs.deleteAll()"

    var testDescription: String { rawValue }

    /// The stored collection the catalogue's `after` starts from. Every write changes it.
    static let before: [String: PropertyListValue] = ["launchCount": .integer(1), "appearance": .string("light")]

    /// The stored collection after the write succeeds over `before`. For a repair it is the same
    /// whatever was stored, readable or not.
    var after: [String: PropertyListValue] {
        switch self {
        case .initializerMerge, .typedProperty: return ["launchCount": .integer(1), "appearance": .string("dark")]
        case .assignValues: return ["launchCount": .integer(7)]
        case .subscriptSet: return ["launchCount": .integer(5), "appearance": .string("light")]
        case .inPlaceMutation: return ["launchCount": .integer(8), "appearance": .string("light")]
        case .subscriptRemove: return ["launchCount": .integer(1)]
        case .inPlaceRemoval, .assignEmpty, .clear, .deleteAll: return [:]
        }
    }

    /// Made by `init(key:values:)`, so it makes its own instance: it cannot be performed on one that
    /// exists, and no observer registered from outside can exist yet to hear it.
    var isInitializer: Bool { self == .initializerMerge }

    /// Whether the write reads the stored collection first, to change part of it: a read that fails
    /// (an unreadable file, a stored value that is not a dictionary) aborts it, and it writes nothing.
    var readsStoredCollection: Bool {
        switch self {
        case .initializerMerge, .subscriptSet, .typedProperty, .inPlaceMutation, .subscriptRemove, .inPlaceRemoval: return true
        case .assignValues, .assignEmpty, .clear, .deleteAll: return false
        }
    }

    /// A deliberate whole replacement, made without reading what is stored: it repairs an unreadable
    /// file or a stored value that is not a dictionary.
    var isRepair: Bool { !readsStoredCollection }

    /// Whether the write leaves no collection stored under the key.
    var removesCollection: Bool { after.isEmpty }

    /// Whether the write can be given any entries to write (`perform(_:on:)`), for the rules about
    /// which entries are accepted.
    var takesEntries: Bool { defaultEntries != nil }

    /// Whether all the entries are validated in one operation, so that the error names every
    /// offending entry; the others write one entry per operation, and each reports only its own.
    var validatesEntriesTogether: Bool { self == .assignValues || self == .initializerMerge }

    /// The entries the write writes when the test gives none; nil for the writes that take none.
    var defaultEntries: [String: Any]? {
        switch self {
        case .initializerMerge: return ["appearance": "dark"]
        case .assignValues: return ["launchCount": 7]
        case .subscriptSet: return ["launchCount": 5]
        case .inPlaceMutation: return ["launchCount": 8]
        case .typedProperty, .subscriptRemove, .inPlaceRemoval, .assignEmpty, .clear, .deleteAll: return nil
        }
    }

    /// Performs the write through `prefs`, with `entries` instead of its own if given. Not for the
    /// initializer, which makes its own instance: use `perform(_:making:)`.
    func perform(_ entries: [String: Any]? = nil, on prefs: some BaseClassWriteTarget) {
        precondition(entries == nil || takesEntries, "\(rawValue) takes no entries")
        let entries = entries ?? defaultEntries ?? [:]
        switch self {
        case .initializerMerge: preconditionFailure("init(key:values:) makes its own instance: use perform(_:making:)")
        case .assignValues: prefs.values = entries
        case .subscriptSet: for (name, value) in entries { prefs[name] = value }
        case .typedProperty: prefs.appearance = "dark"
        case .inPlaceMutation: for (name, value) in entries { prefs.values[name] = value }
        case .subscriptRemove: prefs["appearance"] = nil
        case .inPlaceRemoval: prefs.values.removeAll()
        case .assignEmpty: prefs.values = [:]
        case .clear: prefs.clear()
        case .deleteAll: prefs.deleteAll()
        }
    }

    /// Performs the write as a user would from nothing: the initializer's merge passes its entries to
    /// `make`; every other write is performed on an instance that `make([:])` returns.
    /// - Returns: the instance whose `lastError` tells the outcome.
    @discardableResult
    func perform<Prefs: BaseClassWriteTarget>(_ entries: [String: Any]? = nil, making make: (_ values: [String: Any]) -> Prefs) -> Prefs {
        if isInitializer { return make(entries ?? defaultEntries ?? [:]) }
        let prefs = make([:])
        perform(entries, on: prefs)
        return prefs
    }
}
