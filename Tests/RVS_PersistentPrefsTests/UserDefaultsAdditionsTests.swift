import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// SPEC §3, the UserDefaults API as swift-corelibs-foundation has it: URLs, volatile domains, and
// UserDefaults.didChangeNotification for the suite, its instances, and changes a watching instance hears.

/// Counts `UserDefaults.didChangeNotification`s whose object is one suite.
private final class DidChangeCounter {
    private let count = Locked(0)
    private var observer: (any NSObjectProtocol)?

    init(_ suite: DefaultsSuite) {
        observer = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: suite, queue: nil) { [count] note in
            #expect(note.object as AnyObject? === suite)
            count.withLock { $0 += 1 }
        }
    }

    var value: Int { count.withLock { $0 } }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }
}

final class AdditionsPreferences: RVS_PersistentPrefs {
    override var keys: [String] { ["appearance"] }
}

@Suite("The UserDefaults API as swift-corelibs-foundation has it (SPEC §3)")
struct UserDefaultsAdditionsTests {
    let directory = TemporaryDirectory()

    func suite() throws -> DefaultsSuite { try directory.fileSuite("app") }

    @Test("set(URL) stores a file URL as its path and another URL as its absolute string, readable by any tool")
    func urlStoredForms() throws {
        let suite = try suite()
        suite.set(URL(fileURLWithPath: "/var/log/app.log"), forKey: "file")
        suite.set(URL(string: "https://example.com/a?b=c")!, forKey: "web")
        #expect(suite.lastError == nil)
        #expect(try suite.value(forKey: "file") == .string("/var/log/app.log"))
        #expect(try suite.value(forKey: "web") == .string("https://example.com/a?b=c"))
        #expect(suite.url(forKey: "file") == URL(fileURLWithPath: "/var/log/app.log"))
        #expect(suite.url(forKey: "web") == URL(string: "https://example.com/a?b=c"))
        suite.set(nil as URL?, forKey: "web")
        #expect(try suite.value(forKey: "web") == nil)
    }

    @Test("url(forKey:) expands a leading ~ to the home directory and reads a string with a scheme as that URL")
    func urlReadsPathsAndSchemes() throws {
        let suite = try suite()
        try suite.setValue(.string("~/notes.txt"), forKey: "tilde")
        try suite.setValue(.string("file:///tmp/x"), forKey: "fileScheme")
        try suite.setValue(.integer(3), forKey: "number")
        let home = NSString(string: "~").expandingTildeInPath
        #expect(suite.url(forKey: "tilde") == URL(fileURLWithPath: home + "/notes.txt"))
        #expect(suite.url(forKey: "fileScheme") == URL(fileURLWithPath: "/tmp/x"))
        #expect(suite.url(forKey: "number") == nil)
    }

    @Test("Volatile domains live in memory, per suite, outside the search list, and can be removed")
    func volatileDomainsArePerSuite() throws {
        let suite = try suite()
        let other = try self.suite()
        #expect(suite.volatileDomainNames == ["NSRegistrationDomain", "NSArgumentDomain"])
        suite.setVolatileDomain(["k": "v"], forName: "Scratch")
        #expect(suite.volatileDomainNames.contains("Scratch"))
        #expect(other.volatileDomain(forName: "Scratch").isEmpty)
        #expect(suite.object(forKey: "k") == nil)
        suite.removeVolatileDomain(forName: "Scratch")
        #expect(suite.volatileDomain(forName: "Scratch").isEmpty)
        #expect(!suite.volatileDomainNames.contains("Scratch"))
        suite.setVolatileDomain(["k": NSNull()], forName: "Scratch")
        guard case .valuesNotPlistCompatible(["k"])? = suite.lastError else {
            Issue.record("expected valuesNotPlistCompatible, got \(String(describing: suite.lastError))")
            return
        }
        suite.setVolatileDomain([:], forName: "NSRegistrationDomain")
        guard case .userDefaultsUnavailable? = suite.lastError else {
            Issue.record("expected userDefaultsUnavailable, got \(String(describing: suite.lastError))")
            return
        }
    }

    @Test("didChangeNotification is posted with the suite after each successful change through it, not for a refused one")
    func suiteChangesPost() throws {
        let suite = try suite()
        let counter = DidChangeCounter(suite)
        suite.set("dark", forKey: "appearance")
        suite.removeObject(forKey: "appearance")
        try suite.setValue(.integer(1), forKey: "n")
        #expect(counter.value == 3)
        suite.set(NSNull(), forKey: "bad")
        #expect(counter.value == 3)
    }

    @Test("An instance's writes post didChangeNotification with the suite it uses")
    func instanceWritesPost() throws {
        let suite = try suite()
        let prefs = AdditionsPreferences(key: "settings", suite: suite)
        let counter = DidChangeCounter(suite)
        prefs["appearance"] = "dark"
        prefs.values = ["appearance": "light"]
        prefs["unknown"] = 1  // refused
        #expect(counter.value == 2)
    }

    @Test("A change made elsewhere, heard by a watching instance, posts didChangeNotification with its suite")
    func externalChangesPost() throws {
        let watchedSuite = try suite()
        let watching = AdditionsPreferences(key: "settings", suite: watchedSuite)
        let writer = AdditionsPreferences(key: "settings", suite: try suite())
        watching.watchesExternalChanges = true
        let counter = DidChangeCounter(watchedSuite)
        let before = watching.externalChanges.deliveriesCompleted
        writer["appearance"] = "dark"
        #expect(watching.externalChanges.waitForDeliveries(atLeast: before + 1))
        #expect(counter.value == 1)
        watching.watchesExternalChanges = false
    }

    @Test("A change made elsewhere heard by several watching instances of one suite posts didChangeNotification once")
    func oneChangeHeardByManyPostsOnce() throws {
        let watchedSuite = try suite()
        let watching = (0..<3).map { _ in AdditionsPreferences(key: "settings", suite: watchedSuite) }
        let writer = AdditionsPreferences(key: "settings", suite: try suite())
        for instance in watching { instance.watchesExternalChanges = true }
        let counter = DidChangeCounter(watchedSuite)
        for (round, value) in ["dark", "light"].enumerated() {
            let before = watching.map { $0.externalChanges.deliveriesCompleted }
            writer["appearance"] = value
            for (instance, count) in zip(watching, before) {
                #expect(instance.externalChanges.waitForDeliveries(atLeast: count + 1))
                #expect(instance["appearance"] as? String == value)
            }
            // Each instance told its observers; the suite's observers heard of the change once.
            #expect(counter.value == round + 1)
        }
        for instance in watching { instance.watchesExternalChanges = false }
    }
}
