import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
import RVS_PersistentPrefs
import Testing
import TestSupport

// SPEC §10, "Optimistic backends say so": no instance lock is held across a network round trip.
@Suite("PrefsEtcd: an instance's reads do not wait for its writes' round trips", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdInstanceLockTests {
    @Test("While one thread's modify retries against a member stopped with SIGSTOP, a read of the same instance on another thread returns within its own timeout; after SIGCONT the change is applied exactly once")
    func readReturnsWhileModifyRetriesAgainstAStoppedMember() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            // A follower: stopping the leader would make the others elect a new one meanwhile, which is not what
            // is tested here.
            let stopped = try #require(cluster.follower(), "no member reported a leader")
            var proved = false
            for _ in 0..<3 where !proved {
                proved = try readReturnsWhileModifyRetries(cluster, stopped: stopped)
            }
            #expect(proved, "in 3 attempts the write never waited for the stopped member")
        }
    }

    /// One attempt of the test above on a new domain.
    /// - Returns: Whether the write was still waiting when the read returned. It was not when its first attempt
    ///   went to a member that answered: the client moves on from a member after a request that gave up there
    ///   (on a loaded machine, a read of the write's checks could), and then the write never met the stopped one.
    private func readReturnsWhileModifyRetries(_ cluster: EtcdCluster, stopped: Int) throws -> Bool {
        let timeout = Duration.seconds(6)
        let name = uniqueDomainName("stopped-member-modify")
        let domain = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: stopped), name: name, timeout: timeout)
        nonisolated(unsafe) let prefs = EtcdTestPreferences(key: "counter", allowed: ["count", "other"], domain: domain)
        prefs.values = ["count": 0, "other": 7]
        try #require(prefs.lastError == nil, "\(String(describing: prefs.lastError))")

        cluster.pause(stopped)
        var continued = false
        defer { if !continued { cluster.pause(stopped, false) } }

        // The write: its first attempt goes to the stopped member, which never answers; after the attempt's
        // limit its outcome is unknown, and the storage retries through another member. The retry's transform
        // waits until the test has seen the read return (at most 30 s, so that the test cannot hang), so that
        // the write is certainly still in progress when the read returns.
        let transformRuns = Locked(0)
        let firstRun = DispatchSemaphore(value: 0)
        let retryMayGoOn = DispatchSemaphore(value: 0)
        let written = WaitableValue<(value: Int?, error: String?)?>(nil)
        Thread.detachNewThread {
            let new = prefs.modify("count") { value -> Any? in
                let run = transformRuns.withLock { runs in
                    runs += 1
                    return runs
                }
                if run == 1 { firstRun.signal() } else { _ = retryMayGoOn.wait(timeout: .now() + 30) }
                return (value as? Int ?? 0) + 1
            }
            let error = prefs.lastError.map { "\($0)" }
            written.update { $0 = (new as? Int, error) }
        }
        try #require(firstRun.wait(timeout: .now() + 20) == .success, "the modify's transform never ran")

        // The read, on another thread of the same instance, while the write waits for the stopped member.
        let read = WaitableValue<(value: Int?, error: String?, took: Duration)?>(nil)
        Thread.detachNewThread {
            let started = ContinuousClock.now
            let value = prefs["other"] as? Int
            let error = prefs.lastError.map { "\($0)" }
            let took = ContinuousClock.now - started
            read.update { $0 = (value, error, took) }
        }
        let readReturned = read.wait(timeout: 8) { $0 != nil }
        #expect(readReturned, "the read did not return within its own timeout (6 s) and 2 s more: it waited for the write")
        let waited = written.current == nil
        #expect(waited || transformRuns.withLock { $0 } == 1, "the write finished before the read returned, after a retry")
        if let outcome = read.current {
            #expect(outcome.took < timeout + .seconds(1), "the read took \(outcome.took)")
            // A value or an error, but a value only as stored.
            if outcome.error == nil { #expect(outcome.value == 7) }
        }

        cluster.pause(stopped, false)
        continued = true
        for _ in 0..<4 { retryMayGoOn.signal() }
        #expect(written.wait(timeout: 60) { $0 != nil }, "the write never finished")
        #expect(read.wait(timeout: 60) { $0 != nil }, "the read never finished")
        let outcome = try #require(written.current)
        #expect(outcome.error == nil, "\(outcome.error ?? "")")
        #expect(outcome.value == 1)
        // The transform may have run again for a retry (SPEC §10: it may run more than once), or the first attempt
        // may have been answered once the member continued (on a loaded machine its attempt can outlast the pause):
        // either way the change was applied once: the stopped member, once continued, may still handle the first
        // attempt's request, which compares with a revision the retry moved past.
        let other = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: (stopped + 1) % cluster.members.count), name: name)
        #expect(try other.snapshot().contents["counter"] == .dictionary(["count": .integer(1), "other": .integer(7)]))
        let atStopped = try EtcdDomainStorage(endpoints: [cluster.members[stopped].clientURL], name: name)
        #expect(try atStopped.snapshot().contents["counter"] == .dictionary(["count": .integer(1), "other": .integer(7)]))
        return waited
    }

    @Test("With the quorum lost, a read of an instance returns within its own timeout while another thread's write is still checking before its commit: over a domain not yet written, or for a versioned class",
          arguments: ["new domain", "versioned class"])
    func readReturnsWhileAWritesChecksWait(case kind: String) async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            let timeout = Duration.seconds(3)
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 0), name: uniqueDomainName("checks-wait"),
                                               timeout: timeout)
            nonisolated(unsafe) let prefs: RVS_PersistentPrefs = kind == "new domain"
                ? EtcdTestPreferences(key: "counter", allowed: ["count", "other"], domain: domain)
                : VersionedEtcdTestPreferences(key: "counter", domain: domain)
            if kind != "new domain" {
                // Written once, so that only the versioned class's reading of the schema stands before the commit.
                prefs["other"] = 7
                try #require(prefs.lastError == nil, "\(String(describing: prefs.lastError))")
            }
            // Two of three members stopped: every request through the third waits its whole timeout.
            cluster.pause(1)
            cluster.pause(2)
            defer {
                cluster.pause(1, false)
                cluster.pause(2, false)
            }
            let written = WaitableValue<Bool>(false)
            Thread.detachNewThread {
                prefs.modify("count") { value -> Any? in (value as? Int ?? 0) + 1 }
                written.update { $0 = true }
            }
            // A head start, so that the write holds the instance first: without it the read may take the lock first,
            // and the test proves nothing (it cannot fail then either). The write's checks take the whole timeout.
            Thread.sleep(forTimeInterval: 0.5)
            let writtenBefore = written.current
            let started = ContinuousClock.now
            _ = prefs["other"]
            let took = ContinuousClock.now - started
            #expect(!writtenBefore, "the write finished before the read started: nothing was proved")
            // Waiting for the write's checks first, it took about twice its timeout.
            #expect(took < timeout + .seconds(1), "the read took \(took), waiting for the write's round trips")
            #expect(written.wait(timeout: 30) { $0 }, "the write never finished")
        }
    }

    @Test("Over etcd, where a modify runs without the instance's operation lock, a transform that reads, writes, modifies or watches its own instance still fails at once and writes nothing",
          arguments: ["read", "write", "modify", "watch"])
    func misuseFailsWithoutTheLock(misuse: String) throws {
        let domain = try EtcdDomainStorage(endpoints: EtcdCluster.shared().endpoints, name: uniqueDomainName("misuse"))
        let prefs = EtcdTestPreferences(key: "counter", allowed: ["count", "other"], domain: domain)
        prefs["count"] = 1
        let result = prefs.modify("count") { value -> Any? in
            switch misuse {
            case "read": _ = prefs["other"]
            case "write": prefs["other"] = 2
            case "modify": prefs.modify("other") { _ in 3 }
            default: prefs.watchesExternalChanges = true
            }
            return (value as? Int ?? 0) + 1
        }
        #expect(result == nil)
        #expect(prefs.lastError.map { "\($0)" }?.contains("inside its own modify transform") == true, "\(String(describing: prefs.lastError))")
        #expect(try domain.snapshot().contents["counter"] == .dictionary(["count": .integer(1)]))
        // The instance is usable again at once.
        #expect(prefs.modify("count") { ($0 as? Int ?? 0) + 1 } as? Int == 2)
        #expect(prefs.lastError == nil)
    }
}

extension EtcdCluster {
    /// The index of a member that is not the leader, as the members' `/v3/maintenance/status` tell it; `nil` when
    /// none named a leader.
    func follower() -> Int? {
        for _ in 0..<100 {
            var leader: String?
            var identifiers: [Int: String] = [:]
            for (index, member) in members.enumerated() {
                guard let client = try? EtcdClient(endpoints: [HTTPEndpoint(member.clientURL)!], caFile: nil, credentials: nil),
                      let status = try? client.call("/v3/maintenance/status", [:], by: .after(.seconds(1)), timeout: .seconds(1)).response
                else { continue }
                if let id = (status["header"] as? EtcdJSON.Object)?["member_id"] { identifiers[index] = "\(id)" }
                if let named = status["leader"], "\(named)" != "0" { leader = "\(named)" }
            }
            if let leader, let index = identifiers.first(where: { $0.value != leader })?.key { return index }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }
}

/// A versioned class over an etcd domain: its writes read the stored schema version before their commit.
final class VersionedEtcdTestPreferences: RVS_PersistentPrefs {
    let suite: DefaultsSuite
    override class var schemaVersion: Int { 1 }

    init(key: String, domain: EtcdDomainStorage) {
        suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        super.init(key: key)
    }

    required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }

    override var keys: [String] { ["count", "other"] }
    override var userDefaults: DefaultsSuite? { suite }
}
