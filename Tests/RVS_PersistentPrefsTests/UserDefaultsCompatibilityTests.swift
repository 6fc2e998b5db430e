import Foundation
import Testing
import RVS_PersistentPrefs  // not @testable: only what an app sees
import TestSupport

// Code written for the Apple-platform library touches `prefs.userDefaults` with the `UserDefaults` API
// and overrides `userDefaults` to inject a suite. These tests are written the way such code is, so
// that they compile only while that API does.

/// A subclass as an app writes it, with `userDefaults` overridden to hand it another suite.
final class InjectedSuitePrefs: RVS_PersistentPrefs {
    private let injected: DefaultsSuite

    init(suite: DefaultsSuite, key: String) {
        injected = suite
        super.init(key: key, values: [:])
    }

    override var keys: [String] { ["appearance", "launchCount", "volume"] }

    override var userDefaults: DefaultsSuite? { injected }

    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }

    var launchCount: Int {
        get { self["launchCount"] as? Int ?? 0 }
        set { self["launchCount"] = newValue }
    }
}

/// A subclass whose override computes its suite on every call, from the process-wide shared suites.
final class SharedGroupSuitePrefs: RVS_PersistentPrefs {
    nonisolated(unsafe) static var directory = ""

    override var keys: [String] { ["appearance"] }

    override var userDefaults: DefaultsSuite? {
        try? DefaultsLocations(preferencesDirectory: Self.directory, applicationDomainName: "app").groupSuite("com.example.group")
    }
}

@Suite("prefs.userDefaults as code for Apple platforms uses it")
struct UserDefaultsCompatibilityTests {
    let directory = TemporaryDirectory()

    /// A suite over an in-memory domain, the common test injection.
    func inMemoryPrefs(key: String = "com.example.app.preferences") -> InjectedSuitePrefs {
        InjectedSuitePrefs(suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []), key: key)
    }

    /// A suite over a private domain file.
    func filePrefs(key: String = "com.example.app.preferences") throws -> InjectedSuitePrefs {
        let domain = try FileDomainStorage(directory: directory.appending("prefs"), name: "app")
        return InjectedSuitePrefs(suite: DefaultsSuite(persistentDomain: domain, arguments: []), key: key)
    }

    @Test("Defaults registered with prefs.userDefaults?.register(defaults:) show through values and the typed properties")
    func registeredDefaultsShowThroughValues() throws {
        for prefs in [inMemoryPrefs(), try filePrefs()] {
            prefs.userDefaults?.register(defaults: [prefs.key: ["appearance": "light", "launchCount": 7]])
            #expect(prefs.userDefaults?.lastError == nil)
            #expect(prefs.values["appearance"] as? String == "light")
            #expect(prefs.values["launchCount"] as? Int == 7)
            #expect(prefs.appearance == "light")
            #expect(prefs.launchCount == 7)
            #expect(prefs.count == 2)
            #expect(prefs.lastError == nil)
        }
    }

    @Test("A typed setter after register(defaults:) stores the registered collection with the change, as on Apple platforms")
    func writeStartsFromRegisteredDefaults() throws {
        let prefs = try filePrefs()
        prefs.userDefaults?.register(defaults: [prefs.key: ["appearance": "light"]])
        prefs.launchCount = 1
        #expect(prefs.lastError == nil)
        let stored = try #require(prefs.userDefaults?.persistentDomain(forName: "app")?[prefs.key] as? [String: Any])
        #expect(stored["appearance"] as? String == "light")
        #expect(stored["launchCount"] as? Int == 1)
    }

    @Test("set(_:forKey:), object(forKey:), dictionary(forKey:) and removeObject(forKey:) on the storage key act on the collection")
    func collectionThroughTheUserDefaultsAPI() throws {
        let prefs = try filePrefs()
        prefs.userDefaults?.register(defaults: [prefs.key: ["appearance": "light"]])
        prefs.userDefaults?.set(["appearance": "dark", "launchCount": 2], forKey: prefs.key)
        #expect(prefs.userDefaults?.lastError == nil)
        #expect(prefs.appearance == "dark")
        #expect(prefs.launchCount == 2)
        let object = try #require(prefs.userDefaults?.object(forKey: prefs.key) as? [String: Any])
        #expect(object["appearance"] as? String == "dark")
        #expect(prefs.userDefaults?.dictionary(forKey: prefs.key)?["launchCount"] as? Int == 2)
        #expect((prefs.userDefaults?.dictionaryRepresentation()[prefs.key] as? [String: Any])?["appearance"] as? String == "dark")

        prefs.userDefaults?.removeObject(forKey: prefs.key)
        #expect(prefs.userDefaults?.lastError == nil)
        #expect(prefs.appearance == "light", "the registered collection shows again")
        #expect(prefs.launchCount == 0)
    }

    @Test("Values kept beside the collection use the typed getters and setters, and synchronize() compiles unused")
    func standaloneValuesBesideTheCollection() throws {
        let prefs = try filePrefs()
        prefs.userDefaults?.register(defaults: ["didShowWelcome": false, "volume": 0.5, "visits": 0, "name": "guest"])
        #expect(prefs.userDefaults?.bool(forKey: "didShowWelcome") == false)
        #expect(prefs.userDefaults?.double(forKey: "volume") == 0.5)
        prefs.userDefaults?.set(true, forKey: "didShowWelcome")
        prefs.userDefaults?.set(3, forKey: "visits")
        prefs.userDefaults?.set("Ada", forKey: "name")
        prefs.userDefaults?.set(Data([7]), forKey: "token")
        prefs.userDefaults?.set(["a", "b"], forKey: "recent")
        prefs.userDefaults?.synchronize()
        #expect(prefs.userDefaults?.bool(forKey: "didShowWelcome") == true)
        #expect(prefs.userDefaults?.integer(forKey: "visits") == 3)
        #expect(prefs.userDefaults?.string(forKey: "name") == "Ada")
        #expect(prefs.userDefaults?.data(forKey: "token") == Data([7]))
        #expect(prefs.userDefaults?.array(forKey: "recent") as? [String] == ["a", "b"])
        #expect(prefs.userDefaults?.stringArray(forKey: "recent") == ["a", "b"])
        #expect(prefs.userDefaults?.float(forKey: "volume") == 0.5)
        #expect(prefs.userDefaults?.synchronize() == true)
        #expect(prefs.values.isEmpty, "values beside the collection are not in it")
    }

    @Test("A value that is not a property-list value set through userDefaults is refused, observably, and the collection is kept")
    func refusedValueIsObservable() throws {
        let prefs = try filePrefs()
        prefs.appearance = "dark"
        for value: Any in [NSNull(), UUID(), ["appearance": NSNull()]] {
            prefs.userDefaults?.set(value, forKey: prefs.key)
            if case .valuesNotPlistCompatible(let names)? = prefs.userDefaults?.lastError {
                #expect(names == [prefs.key])
            } else {
                Issue.record("\(value) was not refused: \(String(describing: prefs.userDefaults?.lastError))")
            }
            #expect(prefs.appearance == "dark")
            #expect(prefs.lastError == nil)
        }
    }

    @Test("removePersistentDomain(forName:) of the suite's own domain removes every collection, as resetting an app's defaults does")
    func removePersistentDomainResetsTheApp() throws {
        let prefs = try filePrefs()
        let other = InjectedSuitePrefs(suite: try #require(prefs.userDefaults), key: "other")
        prefs.appearance = "dark"
        other.appearance = "blue"
        let name = try #require(prefs.userDefaults?.persistentDomainName as String?)
        #expect(name == "app")
        prefs.userDefaults?.removePersistentDomain(forName: name)
        #expect(prefs.userDefaults?.lastError == nil)
        #expect(prefs.values.isEmpty)
        #expect(other.values.isEmpty)
        #expect(prefs.userDefaults?.persistentDomain(forName: name) == nil)

        prefs.userDefaults?.setPersistentDomain([prefs.key: ["appearance": "light"]], forName: name)
        #expect(prefs.appearance == "light")
    }

    @Test("An override that computes a shared suite on every call keeps defaults registered through it")
    func overrideReturningSharedSuiteKeepsRegistrations() throws {
        SharedGroupSuitePrefs.directory = directory.path
        let prefs = SharedGroupSuitePrefs(key: "settings")
        #expect(prefs.userDefaults === prefs.userDefaults, "one suite per domain, shared by the process")
        prefs.userDefaults?.register(defaults: ["settings": ["appearance": "light"]])
        #expect(prefs.values["appearance"] as? String == "light")
        prefs["appearance"] = "dark"
        #expect(prefs.lastError == nil)
        #expect(prefs.userDefaults?.persistentDomainName == "com.example.group")
        #expect((prefs.userDefaults?.persistentDomain(forName: "com.example.group")?["settings"] as? [String: Any])?["appearance"] as? String == "dark")
        #expect(FileManager.default.fileExists(atPath: directory.appending("com.example.group.plist")))
    }
}
