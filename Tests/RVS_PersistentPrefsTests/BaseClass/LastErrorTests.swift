import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An instance whose suite is missing altogether.
final class BaseClassNoSuitePrefs: BaseClassTestPrefs {
    init() { super.init(suite: nil, key: "settings", values: nil) }
}

/// Handed a suite, but with a `userDefaults` that returns nil.
final class DetachedPrefs: RVS_PersistentPrefs {
    override var keys: [String] { ["appearance"] }
    override var userDefaults: DefaultsSuite? { nil }
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
          arguments: BaseClassRead.allCases)
    func readClearsAnEarlierStorageError(read: BaseClassRead) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .string("not a dictionary")])
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "settings"))
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")])])
        read.perform(on: prefs)
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

        // Given a suite, so that the process-wide settings, which another suite's tests change meanwhile,
        // play no part in the error.
        let detached = DetachedPrefs(key: "settings", values: nil, suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []))
        let unavailableText = try #require(detached.lastError).description
        #expect(unavailableText.contains("userDefaults"))
    }
}
