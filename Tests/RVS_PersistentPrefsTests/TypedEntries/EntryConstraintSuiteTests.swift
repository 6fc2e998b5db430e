import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The `UserDefaults` face of a constrained instance (`prefs.userDefaults`, a ``DefaultsSuite``): its writes of
/// the instance's collection are refused as the instance's own are (SPEC §14, "through every path").
@Suite("Constraints through the UserDefaults face of an instance's suite")
struct EntryConstraintSuiteTests {
    let fixture: TypedFixture
    let settings: ConstrainedSettings

    init() throws {
        fixture = try TypedFixture()
        settings = ConstrainedSettings(suite: fixture.suite)
    }

    /// The entry `error` refuses as not allowed; the file's bytes stayed as they were.
    private func expectRefused(_ error: PrefsError?, _ entry: String, bytesBefore: [UInt8]?, _ comment: Comment) {
        guard case .valueNotAllowed(let refused, let reason)? = error else {
            Issue.record("\(comment): the error is \(String(describing: error))")
            return
        }
        #expect(refused == entry, comment)
        #expect(reason.contains("1 to 65535") || reason.contains("one of"), comment)
        #expect(fileBytes(fixture.path) == bytesBefore, "\(comment): the file changed")
    }

    @Test("A write through the instance's suite that breaks a constraint is refused, writing nothing, on each of its write calls")
    func suiteWritesAreChecked() throws {
        let suite = try #require(settings.userDefaults)
        settings.port = 7777
        let before = fileBytes(fixture.path)
        suite.set(["port": 70000], forKey: settings.key)
        expectRefused(suite.lastError, "port", bytesBefore: before, "set(_:forKey:)")
        var thrown: PrefsError?
        do { try suite.setValue(.dictionary(["port": .integer(0)]), forKey: settings.key) } catch { thrown = error }
        expectRefused(thrown, "port", bytesBefore: before, "setValue(_:forKey:)")
        thrown = nil
        do {
            try suite.modifyValue(forKey: settings.key) { value throws(PrefsError) in
                var entries = value?.dictionaryValue ?? [:]
                entries["level"] = .string("loud")
                value = .dictionary(entries)
            }
        } catch { thrown = error }
        expectRefused(thrown, "level", bytesBefore: before, "modifyValue(forKey:)")
        suite.setPersistentDomain([settings.key: ["port": 7777, "level": "verbose"]], forName: suite.persistentDomainName)
        expectRefused(suite.lastError, "level", bytesBefore: before, "setPersistentDomain(_:forName:)")
        #expect(try fixture.stored()["port"] == .integer(7777))
        // Allowed values are written; only the entries a write sets are judged, as the instance judges them:
        // a value another tool stored, left as it is, does not refuse a write of other entries.
        try fixture.seed(["port": .integer(99999)])
        var entries = try #require(suite.dictionary(forKey: settings.key))
        entries["level"] = "debug"
        suite.set(entries, forKey: settings.key)
        #expect(suite.lastError == nil)
        #expect(try fixture.stored() == ["port": .integer(99999), "level": .string("debug")])
        suite.set(["port": 443, "level": "error"], forKey: settings.key)
        #expect(suite.lastError == nil && settings.port == 443 && settings.level == "error")
    }

    @Test("A fresh instance's suite refuses a bad write before the instance has written anything")
    func loadingTheInstanceIsEnough() throws {
        let fresh = try TypedFixture()
        let instance = ConstrainedSettings(suite: fresh.suite, key: "other")
        let suite = try #require(instance.userDefaults)
        suite.set(["volume": 2.0], forKey: "other")
        guard case .valueNotAllowed(let entry, _)? = suite.lastError else {
            Issue.record("lastError is \(String(describing: suite.lastError))")
            return
        }
        #expect(entry == "volume")
        #expect(try fresh.stored(key: "other").isEmpty)
        // Another storage key of the same suite is another collection, which the class does not describe.
        suite.set(["volume": 2.0], forKey: "unrelated")
        #expect(suite.lastError == nil)
    }
}
