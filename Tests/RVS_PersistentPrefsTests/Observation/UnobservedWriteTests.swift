import Foundation
import Synchronization
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An in-memory domain that counts its reads (`snapshot()`).
private final class ReadCountingDomain: DomainStorage {
    let inner = InMemoryDomainStorage()
    let reads = Atomic<Int>(0)
    var location: String { "read-counting" }
    func snapshot() throws(PrefsError) -> DomainSnapshot {
        reads.add(1, ordering: .relaxed)
        return try inner.snapshot()
    }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try inner.modify(repairing: policy, transform)
    }
}

/// A write reads the collection before and after it only for those who need it: observers (`.old`, and
/// whether they hear it), a handler's nested write (told to the observers registered when the handler returns),
/// and for a whole replacement Swift Observation once a single entry was read (which entries differ). An
/// instance nobody observes, whose entries are read only through `values`, pays for no such read (issue 27,
/// "write").
@Suite("Writes: the collection before and after a write is read when someone needs it, and only then")
struct UnobservedWriteTests {
    /// The reads of the domain that one `values = …` makes, on an instance prepared by `prepare`.
    private func readsOfOneReplacement(_ prepare: (TrackedPrefs) -> Void = { _ in }) -> (reads: Int, prefs: TrackedPrefs, domain: ReadCountingDomain) {
        let domain = ReadCountingDomain()
        let prefs = TrackedPrefs(suite: DefaultsSuite(persistentDomain: domain, arguments: []))
        prefs.values = ["volume": 1, "userName": "ada"]
        prepare(prefs)
        let before = domain.reads.load(ordering: .relaxed)
        prefs.values = ["volume": 2, "userName": "ada"]
        #expect(prefs.lastError == nil)
        return (domain.reads.load(ordering: .relaxed) - before, prefs, domain)
    }

    @Test("A whole replacement nobody observes, on an instance whose entries are read only through values, reads nothing from the domain")
    func unobservedReplacementSkipsTheReadBefore() throws {
        let unobserved = readsOfOneReplacement { prefs in _ = prefs.values["volume"] }
        #expect(unobserved.reads == 0)
        #expect(unobserved.prefs.values as NSDictionary == ["volume": 2, "userName": "ada"] as NSDictionary)
        // An observer needs the collection before the write (its `.old`): the same write then reads it.
        let heard = Locked<[Int?]>([])
        var token: PrefsObservation?
        let observed = readsOfOneReplacement { prefs in
            token = prefs.observe(\.volume, options: [.old, .new]) { _, change in heard.withLock { $0.append(change.oldValue) } }
        }
        #expect(observed.reads > 0)
        #expect(heard.withLock { $0 } == [1])
        token?.invalidate()
    }

    @Test("A write made in a handler, which then registers an observer, tells that observer the value before and after it", arguments: [true, false])
    func nestedWriteTellsAnObserverRegisteredAfterIt(replacingTheWhole: Bool) throws {
        let prefs = TrackedPrefs(suite: DefaultsSuite(persistentDomain: ReadCountingDomain(), arguments: []))
        prefs.values = ["volume": 1]
        let heard = Locked<[String]>([])
        // Written and read on this thread only (the handlers run here, inside the write).
        nonisolated(unsafe) var first: PrefsObservation?
        nonisolated(unsafe) var second: PrefsObservation?
        first = prefs.observe(\.values) { prefs, _ in
            first?.invalidate()
            if replacingTheWhole { prefs.values = ["volume": 3] } else { prefs["volume"] = 3 }
            second = prefs.observe(\.volume, options: [.old, .new]) { _, change in
                heard.withLock { $0.append("\(change.oldValue.map(String.init) ?? "nil")→\(change.newValue.map(String.init) ?? "nil")") }
            }
        }
        prefs.values = ["volume": 2]
        #expect(heard.withLock { $0 } == ["2→3"])
        second?.invalidate()
    }

    @Test("Once a read tracks a single entry with Swift Observation, a whole replacement reads the collection before it again, and tells only the entries that differ")
    func trackedEntryNeedsTheReadBefore() throws {
        var volumeRead: ChangeFlag?
        var nameRead: ChangeFlag?
        let unobserved = readsOfOneReplacement()
        let tracked = readsOfOneReplacement { prefs in
            volumeRead = track(prefs) { _ = $0.volume }
            nameRead = track(prefs) { _ = $0.userName }
        }
        #expect(tracked.reads > unobserved.reads)
        #expect(volumeRead?.count == 1)
        #expect(nameRead?.count == 0)
    }
}
