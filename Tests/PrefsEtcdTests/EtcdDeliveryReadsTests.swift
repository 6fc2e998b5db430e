import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import Testing
import TestSupport

/// An in-memory domain that counts its reads, and tells of changes as the in-memory domain does.
final class ReadCountingDomain: DomainStorage {
    private let inner: InMemoryDomainStorage
    private let reads = Locked(0)

    init(_ location: String, contents: [String: PropertyListValue] = [:]) throws {
        inner = InMemoryDomainStorage(location: location)
        if !contents.isEmpty { try inner.modify(repairing: .failIfUnreadable) { $0 = contents } }
    }

    var readsMade: Int { reads.withLock { $0 } }
    var location: String { inner.location }

    func snapshot() throws(PrefsError) -> DomainSnapshot {
        reads.withLock { $0 += 1 }
        return try inner.snapshot()
    }

    @discardableResult
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try inner.modify(repairing: policy, transform)
    }

    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { inner.watchChanges(onChange) }
}

// SPEC §10, "A delivery reads what changed".
@Suite("PrefsEtcd: a delivery reads what changed", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdDeliveryReadsTests {
    @Test("The delivery of a change an etcd watch reported makes no round trip and reads none of the suite's other sources, while the instance's own reads still read them")
    func deliveryReadsOnlyTheSourceThatChanged() throws {
        let (watched, writer) = try EtcdCluster.shared().storages(of: "delivery-reads", attachedTo: 2, 0)
        // Sources above and below the etcd domain, each consulted by every search (entry by entry).
        let managed = try ReadCountingDomain("managed", contents: ["settings": .dictionary(["locked": .integer(1)])])
        let system = try ReadCountingDomain("system", contents: ["settings": .dictionary(["default": .integer(2)])])
        let suite = DefaultsSuite(persistentDomain: watched, globalDomain: nil, systemDomains: [system],
                                  managedDomains: [managed], argumentDomain: [:])
        let prefs = SuitePreferences(key: "settings", allowed: ["v", "locked", "default"], suite: suite)
        prefs["v"] = 0
        try #require(prefs.lastError == nil, "\(String(describing: prefs.lastError))")
        let told = WaitableValue<[[String: Int]]>([])
        prefs.watchesExternalChanges = true
        let observation = prefs.observe(\.values, options: [.new]) { _, change in
            let values = (change.newValue ?? [:]).compactMapValues { $0 as? Int }
            told.update { $0.append(values) }
        }
        defer {
            observation.invalidate()
            prefs.watchesExternalChanges = false
        }
        for value in 1...5 {
            let (calls, managedReads, systemReads) = (watched.client.callsMade, managed.readsMade, system.readsMade)
            try writer.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["v": .integer(value)]) }
            #expect(told.wait(timeout: 20, until: { $0.last?["v"] == value }), "change \(value) was not told")
            #expect(told.current.last == ["v": value, "locked": 1, "default": 2])
            #expect(watched.client.callsMade == calls, "the delivery of change \(value) asked the cluster")
            #expect(managed.readsMade == managedReads, "the delivery of change \(value) read the managed domain")
            #expect(system.readsMade == systemReads, "the delivery of change \(value) read the system domain")
        }
        // A change of another source is told too, reading that source.
        let systemReads = system.readsMade
        try system.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["default": .integer(3)]) }
        #expect(told.wait(timeout: 20, until: { $0.last?["default"] == 3 }), "the system domain's change was not told")
        #expect(system.readsMade > systemReads)
        // The instance's own reads read every source, as ever.
        let (calls, managedReads) = (watched.client.callsMade, managed.readsMade)
        #expect(prefs["v"] as? Int == 5)
        #expect(watched.client.callsMade == calls + 1)
        #expect(managed.readsMade > managedReads)
    }
}

/// An instance over a suite given whole, allowing every name a test writes.
final class SuitePreferences: RVS_PersistentPrefs {
    let allowed: [String]
    let suite: DefaultsSuite

    init(key: String, allowed: [String], suite: DefaultsSuite) {
        (self.allowed, self.suite) = (allowed, suite)
        super.init(key: key)
    }

    required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }

    override var keys: [String] { allowed }
    override var userDefaults: DefaultsSuite? { suite }
}
