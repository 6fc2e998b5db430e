import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import Synchronization

/// A suite keeps a read only on evidence taken before it (Invariant F5): a domain that reports its latest
/// version must not have a change made while it was read kept as if it were what the read found.
@Suite("Reads a suite keeps by the domains' generations")
struct KeptReadGenerationTests {
    /// A domain that reports its version, and that another writer changes once, armed, just after a read took its
    /// snapshot: as a write on another thread would, between the read and the generation taken after it.
    final class ChangedWhileRead: DomainStorage {
        let domain = InMemoryDomainStorage(contents: ["k": .integer(1)])
        let armed = Mutex(false)
        var location: String { "a domain changed while it is read" }
        var generation: UInt64? { domain.generation }

        func snapshot() throws(PrefsError) -> DomainSnapshot {
            let read = try domain.snapshot()
            if armed.withLock({ let was = $0; $0 = false; return was }) {
                try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
            }
            return read
        }

        func modify(repairing policy: RepairPolicy,
                    _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
            try domain.modify(repairing: policy, transform)
        }
    }

    @Test("A change made while a read searched is not kept as that read's finding: the next read returns it")
    func changeDuringTheReadIsNotKept() throws {
        let domain = ChangedWhileRead()
        let suite = DefaultsSuite(persistentDomain: domain, globalDomain: nil, argumentDomain: [:])
        for _ in 0..<4 { #expect(try suite.value(forKey: "k") == .integer(1)) }
        #expect(try suite.find("k").map { $0.keptAt != nil } == true, "an unchanged domain that reports a generation is not kept")
        // A change, then a read during which another change lands.
        _ = try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(0) }
        domain.armed.withLock { $0 = true }
        #expect(try suite.value(forKey: "k") == .integer(0), "the read missed the change before it")
        #expect(try suite.value(forKey: "k") == .integer(2), "a change made while the read searched was kept as what it found")
        #expect(try suite.value(forKey: "k") == .integer(2))
    }
}
