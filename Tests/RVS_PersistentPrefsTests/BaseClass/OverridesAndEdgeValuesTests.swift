import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("BaseClass: subclass overrides and edge values")
struct BaseClassOverridesAndEdgeValuesTests {
    /// Overrides `key` and `lastError` the way Apple-platform subclasses may: the library must go
    /// through them, not around them.
    final class Overriding: RVS_PersistentPrefs {
        let suite: DefaultsSuite
        var reported: [String] = []
        init(suite: DefaultsSuite) {
            self.suite = suite
            super.init()
        }
        override var keys: [String] { ["a"] }
        override var userDefaults: DefaultsSuite? { suite }
        override var key: String {
            get { "custom" }
            set { _ = newValue }
        }
        override var lastError: PrefsError? {
            didSet { if let lastError { reported.append("\(lastError)") } }
        }
    }

    @Test("A subclass's override of key names the stored collection, and its override of lastError hears every outcome")
    func overridesOfKeyAndLastErrorAreHonoured() throws {
        let persistent = InMemoryDomainStorage()
        let prefs = Overriding(suite: DefaultsSuite(persistentDomain: persistent, arguments: []))
        prefs["a"] = 1
        #expect(try persistent.snapshot().contents["custom"] == .dictionary(["a": .integer(1)]))
        prefs["undeclared"] = 1
        #expect(prefs.reported.count == 1)
        #expect(prefs.reported.first?.contains("undeclared") == true)
    }

    @Test("Every floating-point type is a property-list real: CGFloat and Double of 8 bytes, Float of 4 as CoreFoundation stores it")
    func everyFloatingPointTypeIsAReal() {
        #expect(PropertyListValue(CGFloat(1.5)) == .real(1.5))
        #expect(PropertyListValue(Float(0.25)) == .float(0.25))
        #expect(PropertyListValue([CGFloat(2)] as [Any]) == .array([.real(2)]))
    }

    @Test("A write rejected for an obsolete name in a registered collection creates nothing on disk")
    func rejectionAgainstARegisteredCollectionCreatesNothing() throws {
        let directory = TemporaryDirectory()
        let domain = try FileDomainStorage(directory: directory.appending("prefs"), name: "app")
        let suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        suite.register(propertyListDefaults: ["BaseClassTestPrefs": .dictionary(["legacy": .string("x")])])
        let prefs = BaseClassTestPrefs(suite: suite)
        prefs["appearance"] = "dark"
        guard case .incorrectKeys(let names)? = prefs.lastError else { Issue.record("not rejected: \(String(describing: prefs.lastError))"); return }
        #expect(names == ["legacy"])
        #expect(directory.contents().isEmpty)
    }

    @Test("The change stream carries a collection whose values nest as deep as a value may")
    func changeStreamCarriesDeepValues() async throws {
        let persistent = InMemoryDomainStorage()
        let prefs = BaseClassTestPrefs(suite: DefaultsSuite(persistentDomain: persistent, arguments: []))
        var deep: Any = 1
        for _ in 0..<PropertyListValue.maximumValueDepth { deep = [deep] }
        let stream = prefs.changes
        prefs["list"] = deep
        #expect(prefs.lastError == nil)
        var iterator = stream.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(change.collection["list"] != nil)
    }
}
