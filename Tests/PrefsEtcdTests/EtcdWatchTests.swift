import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
@testable import RVS_PersistentPrefs
import Synchronization
import Testing
import TestSupport

/// Counts calls of a change handler, and lets a test wait for the next one.
final class ChangeCounter: Sendable {
    private let calls = Mutex(0)
    private let signal = DispatchSemaphore(value: 0)

    var handler: @Sendable () -> Void { { [self] in calls.withLock { $0 += 1 }; signal.signal() } }

    /// Waits for a call (at most `seconds`, so that a broken watch fails the test instead of hanging it).
    func waitForCall(seconds: Double = 20) -> Bool { signal.wait(timeout: .now() + seconds) == .success }
}

@Suite("PrefsEtcd watches resume without missing a change", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdWatchTests {
    @Test("A watch whose member is killed resumes through another member from the last revision it saw, missing no change")
    func watchResumesAfterItsMemberDies() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            let (watched, writer) = try cluster.storages(of: "resume", attachedTo: 2, 0)
            let counter = ChangeCounter()
            _ = try watched.snapshot()
            let watch = try #require(watched.watchChanges(counter.handler))
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
            #expect(counter.waitForCall())
            cluster.kill(2)
            // Written while the watch has no stream: heard once it resumes elsewhere.
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(2) }
            while try watched.cachedValue() != .integer(2) {
                #expect(counter.waitForCall(), "the watch did not resume")
            }
            watch.cancel()
        }
    }

    @Test("A watch whose member is stopped (SIGSTOP) moves on to another member while that one stays stopped, missing no change")
    func watchMovesOnFromAStoppedMember() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            // A follower: the others keep their leader and go on writing without it.
            let stopped = try #require(cluster.follower(), "no member reported a leader")
            let name = uniqueDomainName("stopped-watch")
            let watched = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: stopped), name: name, timeout: .seconds(2))
            let writer = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: (stopped + 1) % cluster.members.count), name: name)
            let counter = ChangeCounter()
            _ = try watched.snapshot()
            let watch = try #require(watched.watchChanges(counter.handler))
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
            #expect(counter.waitForCall())
            // Its kernel keeps the watch's connection open: the stream is silent, not broken.
            cluster.pause(stopped)
            defer { cluster.pause(stopped, false) }
            for value in 2...4 { try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(value) } }
            while try watched.cachedValue() != .integer(4) {
                guard counter.waitForCall() else {
                    Issue.record("the watch heard nothing in 20 s while its member stayed stopped")
                    break
                }
            }
            watch.cancel()
        }
    }

    @Test("A watch that must start from a compacted revision re-reads the domain and tells of the change")
    func watchFromACompactedRevisionRereads() throws {
        let cluster = try EtcdCluster()
        let (watched, writer) = try cluster.storages(of: "compacted", attachedTo: 1, 0)
        try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
        #expect(try watched.snapshot().contents["v"] == .integer(1))
        for value in 2...5 { try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(value) } }
        // Compact the history the watch would start from.
        let revision = EtcdJSON.revision(of: try writer.client.call("/v3/kv/range", ["key": EtcdJSON.base64("x")], by: .after(.seconds(5)), timeout: .seconds(5)).response)
        _ = try writer.client.call("/v3/kv/compaction", ["revision": String(revision), "physical": true], by: .after(.seconds(5)), timeout: .seconds(5))
        let counter = ChangeCounter()
        let watch = try #require(watched.watchChanges(counter.handler))
        #expect(counter.waitForCall())
        #expect(try watched.cachedValue() == .integer(5))
        watch.cancel()
    }

    @Test("In watched read mode, this process's writes are read at once and another's arrive through the watch, never going backwards")
    func watchedReadMode() async throws {
        try await onOwnThread {
            let pair = try WatchedReadPair("watched-mode")
            let (cluster, reader, other) = (pair.cluster, pair.reader, pair.writer)
            try reader.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
            #expect(try reader.snapshot().contents["v"] == .integer(1))
            let counter = ChangeCounter()
            let watch = try #require(reader.watchChanges(counter.handler))
            var last = 1
            for value in 2...20 {
                try other.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(value) }
                guard case .integer(let seen)? = try reader.snapshot().contents["v"] else { Issue.record("no value"); return }
                #expect(seen >= last, "a watched read went backwards from \(last) to \(seen)")
                last = seen
            }
            while try reader.snapshot().contents["v"] != .integer(20) {
                try #require(counter.waitForCall(), "the reader's watch told nothing within 20 s, and its read is not the last write")
            }
            let written = ContinuousClock.now
            try reader.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(21) }
            #expect(try reader.snapshot().contents["v"] == .integer(21))
            // Served from the watch's copy within the bound of the write that confirmed it: even with every member
            // hung, a read returns at once without error (unless the machine was too slow to read within the bound).
            for index in cluster.members.indices { cluster.pause(index) }
            defer { for index in cluster.members.indices { cluster.pause(index, false) } }
            let started = ContinuousClock.now
            let withinBound = try reader.snapshot().contents["v"]
            if ContinuousClock.now - written < EtcdDomainStorage.watchedReadBound {
                #expect(withinBound == .integer(21))
                #expect(ContinuousClock.now - started < .milliseconds(100), "a read within the bound asked the cluster")
            }
            // Past the bound, the hung cluster can no longer vouch for the copy: the read fails.
            Thread.sleep(forTimeInterval: 1.1)
            #expect(throws: PrefsError.self) { try reader.snapshot() }
            watch.cancel()
        }
    }

    @Test("In watched read mode on a member stopped with SIGSTOP while another member's writes continue, a read past the 1 s bound returns the new value or fails, never the old one without error")
    func watchedReadOnAStoppedMemberIsBounded() async throws {
        try await onOwnThread {
            let pair = try WatchedReadPair("watched-bound", readerMember: 2, readerTimeout: .seconds(3))
            let (cluster, reader, writer) = (pair.cluster, pair.reader, pair.writer)
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
            #expect(try reader.snapshot().contents["v"] == .integer(1))
            // The read watch is established on member 2, and delivers a change: without the bound, its copy would be
            // served as current for as long as the stream stays open.
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(2) }
            let giveUp = ContinuousClock.now + .seconds(20)
            while try reader.cachedValue() != .integer(2) || !reader.state.withLock({ $0.readWatchLive }) {
                try #require(ContinuousClock.now < giveUp, "the read watch delivered nothing")
                Thread.sleep(forTimeInterval: 0.01)
            }
            cluster.pause(2)
            defer { cluster.pause(2, false) }
            // The majority moves on while member 2 holds the reader's watch open and silent.
            try writer.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(3) }
            Thread.sleep(forTimeInterval: 1.1)
            do {
                let value = try reader.snapshot().contents["v"]
                #expect(value == .integer(3), "a watched read past the bound returned \(String(describing: value)) without error")
            } catch {
                // Failing is allowed: the read could not confirm its copy.
            }
        }
    }
}

extension EtcdDomainStorage {
    /// The value of `v` in what this object last saw, without asking the cluster.
    func cachedValue() throws -> PropertyListValue? {
        try state.withLock { $0.cached?.result }?.get().contents["v"]
    }
}

@Suite("PrefsEtcd change deliveries read what the watch delivered", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdChangeDeliveryTests {
    @Test("A watching instance is told each change made through another member without a request of its own, while its own reads still ask the cluster")
    func deliveriesMakeNoRequest() throws {
        let (watched, writer) = try EtcdCluster.shared().storages(of: "delivery", attachedTo: 2, 0)
        let prefs = EtcdTestPreferences(key: "settings", allowed: ["v"], domain: watched)
        prefs["v"] = 0
        let watching = ToldCollections(prefs)
        defer { watching.stop() }
        let told = watching.told
        for value in 1...5 {
            let callsBefore = watched.client.callsMade
            try writer.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["v": .integer(value)]) }
            #expect(told.wait(timeout: 20, until: { $0.last?["v"] == value }), "change \(value) was not told")
            #expect(watched.client.callsMade == callsBefore, "the delivery of change \(value) asked the cluster")
        }
        #expect(told.current.compactMap { $0["v"] } == [1, 2, 3, 4, 5])
        // A read of the instance's own is linearizable as ever: one request.
        let callsBefore = watched.client.callsMade
        #expect(prefs["v"] as? Int == 5)
        #expect(watched.client.callsMade == callsBefore + 1)
    }
}

/// An instance whose storage key is chosen by another instance's entry, kept in an etcd domain of its own.
final class ProfileChosenPreferences: RVS_PersistentPrefs {
    let profile: EtcdTestPreferences
    let suite: DefaultsSuite
    /// What the `key` override read of the profile, and the requests its domain made meanwhile.
    let choices = Mutex<[(value: Int?, requests: Int)]>([])
    let profileDomain: EtcdDomainStorage

    init(domain: EtcdDomainStorage, profile: EtcdTestPreferences, profileDomain: EtcdDomainStorage) {
        (self.profile, self.profileDomain) = (profile, profileDomain)
        suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        super.init(key: "settings")
    }
    required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }
    override var keys: [String] { ["v"] }
    override var userDefaults: DefaultsSuite? { suite }
    override var key: String {
        get {
            let before = profileDomain.client.callsMade
            let value = profile["v"] as? Int
            let requests = profileDomain.client.callsMade - before
            choices.withLock { $0.append((value, requests)) }
            return "settings"
        }
        set { _ = newValue }
    }
}

extension EtcdChangeDeliveryTests {
    @Test("An accessor override that reads another watched etcd domain during a change delivery reads it afresh, seeing a write that completed before")
    func overridesReadAfreshDuringDeliveries() throws {
        let cluster = try EtcdCluster.shared()
        let (profileDomain, profileWriter) = try cluster.storages(of: "profile", attachedTo: 0, 1)
        let profile = EtcdTestPreferences(key: "profile", allowed: ["v"], domain: profileDomain)
        profile["v"] = 0
        // The profile's domain has a live change watch once its instance heard a change made elsewhere.
        let watching = ToldCollections(profile)
        defer { watching.stop() }
        try profileWriter.modify(repairing: .failIfUnreadable) { $0["profile"] = .dictionary(["v": .integer(1)]) }
        #expect(watching.told.wait(timeout: 20, until: { $0.last?["v"] == 1 }))

        let settingsDomain = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 0), name: uniqueDomainName("settings"))
        let settings = ProfileChosenPreferences(domain: settingsDomain, profile: profile, profileDomain: profileDomain)
        settings.watchesExternalChanges = true
        defer { settings.watchesExternalChanges = false }
        for round in 2...4 {
            try profileWriter.modify(repairing: .failIfUnreadable) { $0["profile"] = .dictionary(["v": .integer(round)]) }
            settings.choices.withLock { $0 = [] }
            settings.deliverExternalChange()
            let choices = settings.choices.withLock { $0 }
            #expect(!choices.isEmpty)
            for choice in choices {
                #expect(choice.value == round, "the override read \(String(describing: choice.value)) after \(round) was written")
                #expect(choice.requests == 1, "the override's read was answered without asking the cluster")
            }
        }
    }
}

extension EtcdChangeDeliveryTests {
    @Test("A watching instance is told when the domain's key is deleted through another member, and reads it as empty")
    func deletionElsewhereIsTold() throws {
        let (watched, writer) = try EtcdCluster.shared().storages(of: "deleted-watched", attachedTo: 2, 0)
        let prefs = EtcdTestPreferences(key: "settings", allowed: ["v"], domain: watched)
        prefs["v"] = 1
        let watching = ToldCollections(prefs)
        defer { watching.stop() }
        let told = watching.told
        try writer.deleteKey()
        #expect(told.wait(timeout: 20, until: { $0.last == [:] }), "the deletion was not told: \(told.current)")
        #expect(prefs.values.isEmpty)
        #expect(prefs.lastError == nil)
    }
}
