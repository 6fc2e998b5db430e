import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A backend that keeps its domain in another backend but cannot tell of changes: the protocol's default.
private final class SilentDomain: DomainStorage {
    let inner = InMemoryDomainStorage()
    var location: String { "silent" }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try inner.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try inner.modify(repairing: policy, transform)
    }
}

@Suite("Watching through the backend contract (DomainStorage.watchChanges)")
struct BackendWatchTests {
    final class Settings: RVS_PersistentPrefs {
        @Entry("appearance") var appearance = "system"
    }

    @Test("Two instances sharing one InMemoryDomainStorage hear each other with watchesExternalChanges")
    func inMemoryInstancesHearEachOther() {
        let domain = InMemoryDomainStorage()
        let writer = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
        let watcher = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
        let heard = WaitableValue<[String]>([])
        watcher.watchesExternalChanges = true
        let token = watcher.observe(\.appearance, options: [.new]) { _, change in
            if let value = change.newValue { heard.update { $0.append(value) } }
        }
        writer.appearance = "dark"
        #expect(heard.wait { $0.contains("dark") })
        writer.appearance = "light"
        #expect(heard.wait { $0.last == "light" })
        token.invalidate()
    }

    @Test("An in-memory watch is told of each change and of nothing once cancelled; an unchanged write tells nobody")
    func inMemoryWatchLifecycle() throws {
        let domain = InMemoryDomainStorage()
        let calls = WaitableValue(0)
        let watch = try #require(domain.watchChanges { calls.update { $0 += 1 } })
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        #expect(calls.current == 1)
        watch.cancel()
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
        #expect(calls.current == 1)
    }

    @Test("A backend that cannot tell of changes (watchChanges returns nil) still lets watching be turned on, and hears nothing")
    func silentBackend() {
        let domain = SilentDomain()
        #expect(domain.watchChanges {} == nil)
        let prefs = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
        prefs.watchesExternalChanges = true
        #expect(prefs.watchesExternalChanges)
        prefs.appearance = "dark"
        #expect(prefs.appearance == "dark")
        prefs.watchesExternalChanges = false
        #expect(!prefs.watchesExternalChanges)
    }
}
