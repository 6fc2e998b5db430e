// A backend written outside the package (SPEC §7.1): a DomainStorage of the app's own, which tells of
// changes through watchChanges (handing over what the domain holds, so a delivery reads nothing), is watched
// like a file. Two instances over it hear each other's writes with
// watchesExternalChanges; so do two instances sharing one InMemoryDomainStorage. The backend first passes the
// conformance kit (PrefsStorageTesting's DomainStorageConformance, SPEC §10). Exits non-zero on failure.
import Foundation
import Synchronization
import RVS_PersistentPrefs
import PrefsStorageTesting

/// A domain kept in a dictionary, with a list of watchers told after every change: the smallest backend
/// that can watch.
final class DictionaryDomain: DomainStorage {
    private struct State {
        var snapshot = DomainSnapshot.missing
        var watchers: [UUID: @Sendable (DomainSnapshot?) -> Void] = [:]
        /// Moved by every change: the generation the backend reports (SPEC §10), so that a suite keeps its reads.
        var version: UInt64 = 1
        var reads = 0
        /// Those made off the main thread, where this program's own reads and writes are not: a delivery's.
        var deliveryReads = 0
    }
    private let state = Mutex(State())
    /// Held while watchers are told, so that two writers' calls cannot cross: each call hands over what the
    /// domain holds when it is made, so the snapshots handed over never go back (the contract's "never older").
    /// So a watcher must not write to this domain from its call (it would wait for `telling` forever): the
    /// library's watcher only queues a delivery, made later on another thread.
    private let telling = Mutex(())
    let location = "dictionary domain"

    func snapshot() throws(PrefsError) -> DomainSnapshot {
        state.withLock { state in
            state.reads += 1
            if !Thread.isMainThread { state.deliveryReads += 1 }
            return state.snapshot
        }
    }

    /// Its version: every change moves it, under the same lock as the change.
    var generation: UInt64? { state.withLock { $0.version } }

    /// How many times a suite read the domain.
    var reads: Int { state.withLock { $0.reads } }

    /// How many times a delivery read the domain.
    var deliveryReads: Int { state.withLock { $0.deliveryReads } }

    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        let (snapshot, watchers) = try state.withLock { (state: inout State) throws(PrefsError) in
            var contents = state.snapshot.contents
            try transform(&contents)
            // Unchanged: nothing written, and a missing domain left empty stays missing (the conformance kit
            // found that this backend once created it).
            if contents == state.snapshot.contents && (state.snapshot.exists || contents.isEmpty) {
                return (state.snapshot, [@Sendable (DomainSnapshot?) -> Void]())
            }
            state.snapshot = DomainSnapshot(contents: contents, exists: true)
            state.version += 1
            return (state.snapshot, Array(state.watchers.values))
        }
        if !watchers.isEmpty {
            telling.withLock { _ in
                let current = state.withLock { $0.snapshot }
                for watcher in watchers { watcher(current) }
            }
        }
        return snapshot
    }

    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        watchChanges(handingOver: { _ in onChange() })
    }

    /// Each watcher is handed the snapshot the change made: what `snapshot()` returns from then on.
    func watchChanges(handingOver onChange: @escaping @Sendable (DomainSnapshot?) -> Void) -> (any DomainChangeWatch)? {
        let id = UUID()
        state.withLock { $0.watchers[id] = onChange }
        return Watch { [weak self] in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
    }

    final class Watch: DomainChangeWatch {
        private let stop: Mutex<(@Sendable () -> Void)?>
        init(_ stop: @escaping @Sendable () -> Void) { self.stop = Mutex(stop) }
        func cancel() { stop.withLock { $0 }?(); stop.withLock { $0 = nil } }
        deinit { cancel() }
    }
}

final class Settings: RVS_PersistentPrefs {
    @Entry("appearance") var appearance = "system"
}

/// The values a watching instance was told, and a way to wait for one (never a sleep).
final class Heard: Sendable {
    private let values = Mutex<[String]>([])
    private let condition = NSCondition()
    func append(_ value: String) {
        condition.lock()
        values.withLock { $0.append(value) }
        condition.broadcast()
        condition.unlock()
    }
    func wait(for value: String) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        condition.lock()
        defer { condition.unlock() }
        while !values.withLock({ $0.contains(value) }) {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }
}

func hearEachOther(over domain: any DomainStorage, _ label: String) {
    let writer = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
    let watcher = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
    let heard = Heard()
    watcher.watchesExternalChanges = true
    let token = watcher.observe(\.appearance, options: [.new]) { _, change in
        if let value = change.newValue { heard.append(value) }
    }
    let readsBefore = (domain as? DictionaryDomain)?.deliveryReads
    writer.appearance = "dark"
    guard heard.wait(for: "dark") else {
        print("CustomBackend: \(label): the watching instance did not hear the other's write")
        exit(1)
    }
    // A backend that hands over the snapshot its change made is not read to tell the change.
    if let readsBefore, let domain = domain as? DictionaryDomain, domain.deliveryReads != readsBefore {
        print("CustomBackend: \(label): telling a change whose snapshot was handed over read the backend \(domain.deliveryReads - readsBefore) times")
        exit(1)
    }
    guard watcher.appearance == "dark" else {
        print("CustomBackend: \(label): the watching instance reads \(watcher.appearance) after hearing dark")
        exit(1)
    }
    token.invalidate()
    print("\(label): the watching instance heard appearance → dark\(readsBefore == nil ? "" : ", reading the backend 0 times to tell it")")
}

// The contract first, as the backend's own tests would check it: one object is the whole domain here, so it is
// also the other writer.
do {
    try DomainStorageConformance {
        let domain = DictionaryDomain()
        return .init(storage: domain, otherWriter: domain)
    }.check()
    print("a backend of one's own: keeps the DomainStorage contract")
} catch {
    print("CustomBackend: \(error)")
    exit(1)
}

// A backend that reports its generation reads an unchanged collection as a file domain does: with no read of
// the backend at all, while another instance's write is read at once.
do {
    let domain = DictionaryDomain()
    let reader = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
    let writer = Settings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
    writer.appearance = "light"
    for _ in 0..<5 { _ = reader.appearance }
    let before = domain.reads
    for _ in 0..<1_000 { _ = reader.appearance }
    guard domain.reads == before else {
        print("CustomBackend: 1,000 reads of an unchanged collection read the backend \(domain.reads - before) times")
        exit(1)
    }
    writer.appearance = "dark"
    guard reader.appearance == "dark" else {
        print("CustomBackend: a read after another instance's write returned \(reader.appearance)")
        exit(1)
    }
    print("a backend of one's own that reports its generation: 1,000 unchanged reads read it 0 times, and a change at once")
}

hearEachOther(over: DictionaryDomain(), "a backend of one's own")
hearEachOther(over: InMemoryDomainStorage(), "one InMemoryDomainStorage")
