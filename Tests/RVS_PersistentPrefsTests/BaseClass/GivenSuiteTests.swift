import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An app's class as apps write it: `final`, no initializers or overrides of its own.
final class GivenSuiteAppPreferences: RVS_PersistentPrefs {
    override var keys: [String] { ["launchCount", "appearance"] }
    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }
}

@Suite("BaseClass: a suite handed to the initializer")
struct GivenSuiteTests {
    @Test("A final class reads and writes an in-memory suite given to init(key:values:suite:), touching no file")
    func finalClassUsesTheGivenSuite() throws {
        let domain = InMemoryDomainStorage()
        let suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        let prefs = GivenSuiteAppPreferences(key: "test", values: ["launchCount": 1], suite: suite)
        #expect(prefs.lastError == nil)
        #expect(prefs.userDefaults === suite)
        prefs.appearance = "dark"
        #expect(try domain.snapshot().contents == ["test": .dictionary(["launchCount": .integer(1), "appearance": .string("dark")])])
        let second = GivenSuiteAppPreferences(key: "test", suite: suite)
        #expect(second.appearance == "dark")
        prefs["undeclared"] = 1
        #expect(prefs.lastError != nil, "validation applies as with any suite")
    }

    @Test("Registered defaults of the given suite are the fallback of a read")
    func registeredDefaultsOfTheGivenSuite() {
        let suite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])
        suite.register(defaults: ["test": ["appearance": "light"]])
        let prefs = GivenSuiteAppPreferences(key: "test", suite: suite)
        #expect(prefs.appearance == "light")
    }
}
