import Foundation
import PrefsPropertyList
@testable import PrefsStorage
import PrefsStorageTesting
import Synchronization
import Testing
import TestSupport

/// The conformance kit on every backend the package ships over files and memory (etcd's run is in the PrefsEtcd
/// tests), and on two broken backends, which it must catch.
@Suite("DomainStorageConformance on the package's backends")
struct DomainStorageConformanceTests {
    let directory = TemporaryDirectory()

    /// A new domain file for each check, in a directory that does not exist yet (the first write makes it).
    func newFile() -> (directory: String, name: String) {
        (directory.appending("domains-\(UUID().uuidString)"), "conformance")
    }

    @Test("FileDomainStorage keeps the DomainStorage contract, with a second object over the same file as the other writer")
    func fileDomainConforms() async throws {
        try await onOwnThread {
            try DomainStorageConformance {
                let (directory, name) = newFile()
                return .init(storage: try FileDomainStorage(directory: directory, name: name),
                             otherWriter: try FileDomainStorage(directory: directory, name: name))
            }.check()
        }
    }

    @Test("FileDomainStorage keeps the DomainStorage contract where its watch can only poll (inotify unavailable, or events incomplete)",
          arguments: [DomainWatching.Fallback.inotifyUnavailable, .eventsIncomplete])
    func fileDomainConformsWhenPolling(_ fallback: DomainWatching.Fallback) async throws {
        try await onOwnThread {
            try DomainStorageConformance {
                let (directory, name) = newFile()
                let storage = try FileDomainStorage(directory: directory, name: name)
                storage.watchSettings = (fallback, .milliseconds(20))
                return .init(storage: storage, otherWriter: try FileDomainStorage(directory: directory, name: name))
            }.check()
        }
    }

    @Test("InMemoryDomainStorage keeps the DomainStorage contract, its one object being both writers")
    func inMemoryDomainConforms() async throws {
        try await onOwnThread {
            try DomainStorageConformance {
                let domain = InMemoryDomainStorage()
                return .init(storage: domain, otherWriter: domain)
            }.check()
        }
    }

    @Test("An administrator's file (system defaults; managed, its ownership checked) keeps the read-only DomainStorage contract, written through a FileDomainStorage over the same path",
          arguments: [false, true])
    func administratorDomainConforms(verifiesOwnership managed: Bool) async throws {
        try await onOwnThread {
            try DomainStorageConformance(readOnly: true) {
                let (directory, name) = newFile()
                let file = try FileDomainStorage(directory: directory, name: name)
                return .init(storage: AdministratorDomainStorage.shared(file, verifiesOwnership: managed),
                             otherWriter: try FileDomainStorage(directory: directory, name: name))
            }.check()
        }
    }

    @Test("The kit reports a backend whose watchChanges never fires, and nothing else of it")
    func reportsAWatchThatNeverFires() async throws {
        try await onOwnThread {
            let failures = DomainStorageConformance(watchTimeout: .milliseconds(300)) {
                let domain = SilentlyWatchedDomain()
                return .init(storage: domain, otherWriter: domain)
            }.run()
            #expect(Set(failures.map(\.check)) == [.watchFiresAfterOtherWriter, .watchStopsAfterCancel, .watchStopsWhenReleased,
                                                    .handedOverSnapshotsAreCurrent],
                    "\(failures)")
            #expect(failures.first?.description.contains("no call within") == true, "\(failures)")
        }
    }

    @Test("The kit reports a backend whose snapshot does not move after another writer's change, and nothing else of it")
    func reportsASnapshotThatDoesNotMove() async throws {
        try await onOwnThread {
            let failures = DomainStorageConformance {
                let store = SharedStore()
                return .init(storage: StaleDomain(store), otherWriter: StaleDomain(store))
            }.run()
            #expect(failures.map(\.check) == [.generationMovesAfterOtherWriter], "\(failures)")
        }
    }

    @Test("The kit reports a backend whose generation does not move after another writer's change, and nothing else of it")
    func reportsAGenerationThatDoesNotMove() async throws {
        try await onOwnThread {
            let failures = DomainStorageConformance {
                let domain = InMemoryDomainStorage()
                return .init(storage: FrozenGenerationDomain(domain), otherWriter: domain)
            }.run()
            #expect(failures.map(\.check) == [.generationMovesAfterOtherWriter], "\(failures)")
            #expect(failures.first?.description.contains("generation") == true, "\(failures)")
        }
    }

    @Test("The kit reports a backend whose watch hands over the snapshot from before the change, and nothing else of it")
    func reportsAHandedOverSnapshotFromBeforeTheChange() async throws {
        try await onOwnThread {
            let failures = DomainStorageConformance(watchTimeout: .milliseconds(500)) {
                let domain = InMemoryDomainStorage()
                return .init(storage: BackdatingDomain(domain), otherWriter: domain)
            }.run()
            #expect(failures.map(\.check) == [.handedOverSnapshotsAreCurrent], "\(failures)")
            #expect(failures.first?.description.contains("no call handed over the other writer's change 1") == true, "\(failures)")
        }
    }

    @Test("check() throws every failure, each naming its rule, and run() of a conforming backend finds none")
    func checkThrowsWhatRunFinds() async throws {
        try await onOwnThread {
            let broken = DomainStorageConformance(watchTimeout: .milliseconds(300)) {
                let domain = SilentlyWatchedDomain()
                return .init(storage: domain, otherWriter: domain)
            }
            let thrown = #expect(throws: DomainStorageConformance.Failures.self) { try broken.check() }
            #expect(thrown?.failures.count == 4, "\(String(describing: thrown))")
            #expect(thrown.map { "\($0)".contains(DomainStorageConformance.Check.watchFiresAfterOtherWriter.rawValue) } == true)
            #expect(DomainStorageConformance(watches: false) { let d = SilentlyWatchedDomain(); return .init(storage: d, otherWriter: d) }.run().isEmpty)
        }
    }
}

/// A correct domain kept in memory whose watch never fires: the first broken backend.
final class SilentlyWatchedDomain: DomainStorage {
    private let domain = InMemoryDomainStorage()
    var location: String { "a domain whose watch never fires" }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try domain.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try domain.modify(repairing: policy, transform)
    }
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { NeverFiring() }

    final class NeverFiring: DomainChangeWatch {
        func cancel() {}
    }
}

/// What several ``StaleDomain`` objects share: one domain's contents, and the watches of it.
final class SharedStore: Sendable {
    let domain = InMemoryDomainStorage()
}

/// The second broken backend: each object keeps the first snapshot it read (or its own last write) for good, so
/// another object's change never reaches its reads. Everything else is right, its watch included.
final class StaleDomain: DomainStorage {
    private let store: SharedStore
    private let kept = Mutex<DomainSnapshot?>(nil)
    init(_ store: SharedStore) { self.store = store }
    var location: String { "a domain whose snapshot never moves" }

    func snapshot() throws(PrefsError) -> DomainSnapshot {
        if let kept = kept.withLock({ $0 }) { return kept }
        let read = try store.domain.snapshot()
        kept.withLock { $0 = read }
        return read
    }

    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        let written = try store.domain.modify(repairing: policy, transform)
        kept.withLock { $0 = written }
        return written
    }

    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? {
        store.domain.watchChanges(onChange)
    }
}

/// The third broken backend: its reads are fresh and its watch fires, but the generation it reports never
/// moves, so a suite over it would keep a read for good after another writer's change.
final class FrozenGenerationDomain: DomainStorage {
    private let domain: InMemoryDomainStorage
    init(_ domain: InMemoryDomainStorage) { self.domain = domain }
    var location: String { "a domain whose generation never moves" }
    var generation: UInt64? { 7 }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try domain.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try domain.modify(repairing: policy, transform)
    }
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { domain.watchChanges(onChange) }
}

/// The fourth broken backend: its reads, generation and watch are right, but what its watch hands over is the
/// snapshot read when the watch started, so a caller that tells a change without reading would tell the old state.
final class BackdatingDomain: DomainStorage {
    private let domain: InMemoryDomainStorage
    init(_ domain: InMemoryDomainStorage) { self.domain = domain }
    var location: String { "a domain whose watch hands over the snapshot from before the change" }
    var generation: UInt64? { domain.generation }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try domain.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try domain.modify(repairing: policy, transform)
    }
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { domain.watchChanges(onChange) }
    func watchChanges(handingOver onChange: @escaping @Sendable (DomainSnapshot?) -> Void) -> (any DomainChangeWatch)? {
        let before = try? domain.snapshot()
        return domain.watchChanges { onChange(before) }
    }
}
