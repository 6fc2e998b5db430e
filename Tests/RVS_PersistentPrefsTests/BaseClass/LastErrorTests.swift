import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Every operation of the base class on an existing instance.
enum BaseClassOperation: String, CaseIterable, Sendable {
    case readValues = "values (get)"
    case assignValues = "values = [...]"
    case assignEmpty = "values = [:]"
    case inPlaceMutation = "values[name] = value"
    case subscriptGet = "prefs[name] (get)"
    case subscriptSet = "prefs[name] = value"
    case subscriptRemove = "prefs[name] = nil"
    case count = "count"
    case clear = "clear()"
    case deleteAll = "deleteAll()"
    case flush = "flush()"

    /// Performs the operation with valid arguments.
    func perform(on prefs: BaseClassTestPrefs) {
        switch self {
        case .readValues: _ = prefs.values
        case .assignValues: prefs.values = ["appearance": "assigned", "launchCount": 9]
        case .assignEmpty: prefs.values = [:]
        case .inPlaceMutation: prefs.values["appearance"] = "mutated"
        case .subscriptGet: _ = prefs["appearance"]
        case .subscriptSet: prefs["appearance"] = "set"
        case .subscriptRemove: prefs["launchCount"] = nil
        case .count: _ = prefs.count
        case .clear: prefs.clear()
        case .deleteAll: prefs.deleteAll()
        case .flush: prefs.flush()
        }
    }

    var isWrite: Bool {
        switch self {
        case .readValues, .subscriptGet, .count, .flush: return false
        default: return true
        }
    }
}

/// An instance whose suite is missing altogether.
final class BaseClassNoSuitePrefs: BaseClassTestPrefs {
    init() { super.init(suite: nil, key: "settings", values: nil) }
}

@Suite("lastError: the outcome of each operation, nil after a success, with the four named cases and the storage cases")
struct BaseClassLastErrorTests {
    @Test("Every operation that succeeds sets lastError to nil, clearing the error of the operation before",
          arguments: BaseClassOperation.allCases)
    func successClearsThePreviousError(operation: BaseClassOperation) throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(values: ["appearance": "dark", "launchCount": 1])
        prefs["bogus"] = 1
        #expect(prefs.baseClassOutcome == .incorrectKeys(["bogus"]))
        operation.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .success)
    }

    @Test("A read starts a new operation: after a failed read is repaired from outside, the next read clears the error",
          arguments: BaseClassOperation.allCases.filter { !$0.isWrite })
    func readClearsAnEarlierStorageError(operation: BaseClassOperation) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .string("not a dictionary")])
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "settings"))
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")])])
        operation.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .success)
    }

    @Test("A failing operation replaces the outcome of a successful one, and the next success clears it again")
    func errorsComeAndGoWithOperations() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        prefs.appearance = "dark"
        #expect(prefs.baseClassOutcome == .success)
        prefs.values = ["appearance": NSNull()]
        #expect(prefs.baseClassOutcome == .valuesNotPlistCompatible(["appearance"]))
        prefs["nope"] = 1
        #expect(prefs.baseClassOutcome == .incorrectKeys(["nope"]), "each failure replaces the one before")
        prefs.appearance = "light"
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.appearance == "light")
    }

    @Test("lastError belongs to the instance: another instance's failure does not show in it")
    func lastErrorIsPerInstance() throws {
        let fixture = try BaseClassFixture()
        let first = fixture.prefs()
        let second = fixture.prefs()
        second["bogus"] = 1
        #expect(second.baseClassOutcome == .incorrectKeys(["bogus"]))
        #expect(first.baseClassOutcome == .success)
        first.appearance = "dark"
        #expect(second.baseClassOutcome == .incorrectKeys(["bogus"]), "a success of another instance must not clear it")
    }

    @Test("With no suite (userDefaults nil) every operation reports userDefaultsUnavailable", arguments: BaseClassOperation.allCases)
    func missingSuiteIsUnavailable(operation: BaseClassOperation) {
        let prefs = BaseClassNoSuitePrefs()
        #expect(prefs.baseClassOutcome == .userDefaultsUnavailable)
        prefs.lastError = nil
        operation.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .userDefaultsUnavailable)
        #expect(prefs.values.isEmpty && prefs.count == 0)
    }

    @Test("The stored value under the key not being a dictionary is invalidStoredValue naming the storage key")
    func invalidStoredValueNamesTheKey() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["com.example.settings": .array([.integer(1)])])
        let prefs = fixture.prefs(key: "com.example.settings")
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "com.example.settings"))
        #expect(prefs.values.isEmpty)
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "com.example.settings"))
        #expect(prefs.count == 0)
    }

    @Test("Each case's description says what happened and where, and never carries a stored value")
    func descriptionsSayWhatAndWhere() throws {
        let fixture = try BaseClassFixture()
        let unknown = fixture.prefs()
        unknown["bogus"] = "secret-value"
        let unknownText = try #require(unknown.lastError).description
        #expect(unknownText.contains("bogus") && !unknownText.contains("secret-value"))

        let incompatible = fixture.prefs()
        incompatible.values = ["map": NSNull(), "name": "secret-value"]
        let incompatibleText = try #require(incompatible.lastError).description
        #expect(incompatibleText.contains("map") && !incompatibleText.contains("secret-value"))

        try fixture.seed(["settings": .string("secret-value")])
        let invalid = fixture.prefs()
        let invalidText = try #require(invalid.lastError).description
        #expect(invalidText.contains("'settings'") && !invalidText.contains("secret-value"))

        fixture.writeDomainFile(Array("secret-value".utf8))
        let unreadable = fixture.prefs()
        let unreadableText = try #require(unreadable.lastError).description
        #expect(unreadableText.contains(fixture.path) && !unreadableText.contains("secret-value"))

        try FileManager.default.removeItem(atPath: fixture.path)
        try fixture.seed(["settings": .dictionary(["appearance": .string("secret-value")])])
        let failing = fixture.prefs()
        fixture.faults.fail(.write, with: .noSpace)
        failing.appearance = "another-secret"
        let failedText = try #require(failing.lastError).description
        #expect(failedText.contains(fixture.path) && failedText.contains(PrefsErrno.noSpace.description))
        #expect(!failedText.contains("secret"))

        let unavailableText = try #require(BaseClassNoSuitePrefs().lastError).description
        #expect(unavailableText.contains("userDefaults"))
    }
}
