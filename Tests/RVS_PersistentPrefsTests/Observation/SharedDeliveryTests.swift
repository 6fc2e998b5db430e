import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A backend over an in-memory domain whose watches are counted: how many were started, and how many are running.
private final class CountedWatchDomain: DomainStorage, @unchecked Sendable {
    let inner = InMemoryDomainStorage()
    let started = WaitableValue(0)
    let running = WaitableValue(0)
    var location: String { "counted" }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try inner.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try inner.modify(repairing: policy, transform)
    }
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        guard let watch = inner.watchChanges(onChange) else { return nil }
        started.update { $0 += 1 }
        running.update { $0 += 1 }
        return CountedWatch(watch, running: running)
    }

    private final class CountedWatch: DomainChangeWatch {
        let watch: any DomainChangeWatch
        let running: WaitableValue<Int>
        init(_ watch: any DomainChangeWatch, running: WaitableValue<Int>) { (self.watch, self.running) = (watch, running) }
        func cancel() {
            watch.cancel()
            running.update { $0 -= 1 }
        }
    }
}

/// Many instances of one suite and storage key hearing one change made elsewhere: what is derived from the
/// same stored contents is derived once for all of them (issue 27, "watchers scale linearly"), and each is
/// still told exactly its own change.
@Suite("Changes made elsewhere: instances of one suite and storage key share the work of one change", .timeLimit(.minutes(2)))
struct SharedDeliveryTests {
    let directory = TemporaryDirectory()

    private func conversions(_ instances: [WatchedPrefs]) -> Int {
        instances.reduce(0) { $0 + $1.deliveryConversions.load(ordering: .relaxed) }
    }

    @Test("Five watching instances of one suite and storage key convert one change to native values once between them, and each is told it once")
    func oneConversionForEveryInstance() throws {
        let suite = try directory.fileSuite("shared", in: "prefs")
        // Another suite object over the same file: a writer elsewhere, as another window or process would be.
        let writer = WatchedPrefs(suite: try directory.fileSuite("shared", in: "prefs"))
        writer.counter = 1
        let instances = (0..<5).map { _ in WatchedPrefs(suite: suite) }
        let logs = instances.map { _ in CountLog() }
        let converted = conversions(instances)
        var tokens: [PrefsObservation] = []
        for (prefs, log) in zip(instances, logs) {
            prefs.watchesExternalChanges = true
            // A key path read through the subscript: its values are read over the native collection.
            tokens.append(prefs.observe(\.counter, options: [.old, .new]) { _, change in
                log.append(old: change.oldValue, new: change.newValue)
            })
        }
        writer.counter = 2
        for log in logs { #expect(log.waitForNew(2)) }
        // The version they started from (one snapshot) and the version they were told (another): two
        // conversions for all five. Each instance converting its own made 15 (its observer's classification,
        // .old and .new).
        #expect(conversions(instances) - converted == 2)
        for log in logs {
            #expect(log.all.count == 1)
            #expect(log.all.first?.old == 1)
            #expect(log.all.first?.new == 2)
        }
        for token in tokens { token.invalidate() }
    }

    @Test("The watching instances of one suite are given one delivery lane; instances of other suites spread over the lanes")
    func instancesOfOneSuiteShareTheirLane() throws {
        let suite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), globalDomain: nil, argumentDomain: [:])
        let instances = (0..<8).map { _ in WatchedPrefs(suite: suite) }
        for prefs in instances { prefs.watchesExternalChanges = true }
        let lanes = Set(instances.compactMap { $0.externalChanges.deliveryLane?.label })
        #expect(lanes.count == 1, "lanes of one suite's instances: \(lanes)")
        // Sixteen suites all on one lane of four would happen about once in a billion runs.
        let others = (0..<16).map { _ in
            WatchedPrefs(suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), globalDomain: nil, argumentDomain: [:]))
        }
        for prefs in others { prefs.watchesExternalChanges = true }
        #expect(Set(others.compactMap { $0.externalChanges.deliveryLane?.label }).count > 1)
        for prefs in instances + others { prefs.watchesExternalChanges = false }
        #expect(instances.allSatisfy { $0.externalChanges.deliveryLane == nil })
    }

    @Test("Five watching instances of one file domain place one subscription of it between them, all hear a change made elsewhere, and the last to stop removes it")
    func oneWatchOfAFileDomainForEveryInstance() throws {
        let directory = TemporaryDirectory()
        let engine = WatchEngine()
        let domain = try FileDomainStorage(directory: directory.path, name: "shared", durable: false, system: .live, freshness: engine)
        let suite = DefaultsSuite(persistentDomain: domain, globalDomain: nil, argumentDomain: [:])
        let instances = (0..<5).map { _ in WatchedPrefs(suite: suite) }
        let logs = instances.map { _ in CountLog() }
        var tokens: [PrefsObservation] = []
        var placed: [Int] = []
        for (prefs, log) in zip(instances, logs) {
            prefs.watchesExternalChanges = true
            tokens.append(prefs.observe(\.counter, options: [.new]) { _, change in log.append(old: nil, new: change.newValue) })
            placed.append(engine.subscriptionCount)
        }
        // The first placed the watch; the other four joined it (each placed its own before).
        #expect(Set(placed.dropFirst()) == [placed[0]], "subscriptions after each instance started watching: \(placed)")
        // A write elsewhere (another domain object over the file, with an engine of its own): all five hear it.
        let elsewhere = try FileDomainStorage(directory: directory.path, name: "shared", durable: false, system: .live,
                                              freshness: WatchEngine())
        WatchedPrefs(suite: DefaultsSuite(persistentDomain: elsewhere, globalDomain: nil, argumentDomain: [:])).counter = 3
        for log in logs { #expect(log.waitForNew(3)) }
        // The watch runs until the last instance stops watching.
        for prefs in instances.dropLast() { prefs.watchesExternalChanges = false }
        #expect(engine.subscriptionCount == placed[0])
        instances.last?.watchesExternalChanges = false
        #expect(engine.subscriptionCount == placed[0] - 1)
        for token in tokens { token.invalidate() }
    }

    @Test("Watching instances over a backend of one's own keep a watch each (its start may wait for a network), and each stops its own")
    func aBackendOfOnesOwnIsWatchedPerInstance() throws {
        let domain = CountedWatchDomain()
        let suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        let instances = (0..<5).map { _ in WatchedPrefs(suite: suite) }
        let logs = instances.map { _ in CountLog() }
        var tokens: [PrefsObservation] = []
        for (prefs, log) in zip(instances, logs) {
            prefs.watchesExternalChanges = true
            tokens.append(prefs.observe(\.counter, options: [.new]) { _, change in log.append(old: nil, new: change.newValue) })
        }
        // Shared, a watch whose start waited (an etcd domain reads its revision first, up to its timeout) would
        // keep every other instance's switch of watching, and its reads, waiting meanwhile.
        #expect(domain.started.current == 5)
        WatchedPrefs(suite: DefaultsSuite(persistentDomain: domain, arguments: [])).counter = 3
        for log in logs { #expect(log.waitForNew(3)) }
        for prefs in instances { prefs.watchesExternalChanges = false }
        #expect(domain.running.current == 0)
        for token in tokens { token.invalidate() }
    }

    @Test("Instances of one suite under different storage keys do not share a version: each is told its own collection")
    func differentStorageKeysAreNotShared() throws {
        let suite = try directory.fileSuite("shared", in: "prefs")
        let first = WatchedPrefs(key: "first", suite: suite)
        let second = WatchedPrefs(key: "second", suite: suite)
        let firstLog = CountLog(), secondLog = CountLog()
        first.watchesExternalChanges = true
        second.watchesExternalChanges = true
        let tokens = [
            first.observe(\.counter, options: [.new]) { _, change in firstLog.append(old: nil, new: change.newValue) },
            second.observe(\.counter, options: [.new]) { _, change in secondLog.append(old: nil, new: change.newValue) },
        ]
        // One write of both collections, made elsewhere: both instances find the change in one snapshot.
        let elsewhere = try directory.fileSuite("shared", in: "prefs")
        try elsewhere.persistentDomain.modify(repairing: .failIfUnreadable) { contents in
            contents["first"] = .dictionary(["count": .integer(7)])
            contents["second"] = .dictionary(["count": .integer(8)])
        }
        #expect(firstLog.waitForNew(7))
        #expect(secondLog.waitForNew(8))
        #expect(firstLog.all.map(\.new) == [7])
        #expect(secondLog.all.map(\.new) == [8])
        for token in tokens { token.invalidate() }
    }
}
