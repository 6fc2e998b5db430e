import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
import RVS_PersistentPrefs
import Testing
import TestSupport

// The two unknown outcomes of a write, made to happen every time with a proxy in front of a real member.
@Suite("PrefsEtcd modify is exactly once when a request's outcome is unknown", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdExactlyOnceTests {
    @Test("An increment whose request etcd applied but whose answer was lost is applied once, not retried blindly")
    func appliedButAnswerLost() throws {
        let cluster = try EtcdCluster.shared()
        let proxy = try LossyProxy(to: cluster.members[0].clientURL, losing: .answerOfFirstWrite)
        let name = uniqueDomainName("answer-lost")
        let domain = try EtcdDomainStorage(endpoints: [proxy.url] + cluster.endpoints(attachedTo: 1), name: name)
        let prefs = EtcdTestPreferences(key: "counter", allowed: ["count"], domain: domain)
        prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
        #expect(prefs.lastError == nil, "\(String(describing: prefs.lastError))")
        #expect(proxy.stop() == 1, "the proxy lost the answer of the write")
        let fresh = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 2), name: name)
        #expect(try fresh.snapshot().contents["counter"] == .dictionary(["count": .integer(1)]))
    }

    @Test("An increment applied by etcd whose answer was lost, with no member left to ask, fails as outcomeUnknown, not as storageUnreachable (nothing changed)")
    func appliedButNobodyLeftToAsk() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster.shared()
            let proxy = try LossyProxy(to: cluster.members[0].clientURL, losing: .answerOfFirstWriteThenGone)
            let name = uniqueDomainName("answer-lost-alone")
            let domain = try EtcdDomainStorage(endpoints: [proxy.url], name: name, timeout: .seconds(1))
            let prefs = EtcdTestPreferences(key: "counter", allowed: ["count"], domain: domain)
            _ = prefs.values
            #expect(prefs.lastError == nil, "\(String(describing: prefs.lastError))")
            prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
            guard case .outcomeUnknown(let location, let reason)? = prefs.lastError else {
                Issue.record("expected outcomeUnknown, got \(String(describing: prefs.lastError))")
                return
            }
            #expect(location.contains("127.0.0.1:\(proxy.url.port!)"), "\(location)")
            #expect(reason.contains("could not be learnt"), "\(reason)")
            #expect(proxy.stop() == 1, "the proxy lost the answer of the write")
            // It was applied, once: what storageUnreachable, which says nothing was changed, would have hidden.
            let fresh = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 1), name: name)
            #expect(try fresh.snapshot().contents["counter"] == .dictionary(["count": .integer(1)]))
        }
    }

    @Test("An increment whose request was lost before reaching etcd is applied once, by the retry")
    func requestLost() throws {
        let cluster = try EtcdCluster.shared()
        let proxy = try LossyProxy(to: cluster.members[0].clientURL, losing: .firstWrite)
        let name = uniqueDomainName("request-lost")
        let domain = try EtcdDomainStorage(endpoints: [proxy.url] + cluster.endpoints(attachedTo: 1), name: name)
        let prefs = EtcdTestPreferences(key: "counter", allowed: ["count"], domain: domain)
        prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
        prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
        #expect(prefs.lastError == nil, "\(String(describing: prefs.lastError))")
        #expect(proxy.stop() == 1, "the proxy lost the write")
        let fresh = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 2), name: name)
        #expect(try fresh.snapshot().contents["counter"] == .dictionary(["count": .integer(2)]))
    }
}

// The quorum lost while increments are in flight: a failure that says nothing was changed must be true.
@Suite("PrefsEtcd modify outcomes are told truthfully when the quorum is lost", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdQuorumLossOutcomeTests {
    /// Rounds of two members killed at once; `RVS_PREFS_ETCD_QUORUM_ROUNDS` asks for more (a longer soak). Two, each
    /// longer than the workers' 2 s timeout, make every worker's operations fail in each; more only lengthen the suite.
    static let rounds = ProcessInfo.processInfo.environment["RVS_PREFS_ETCD_QUORUM_ROUNDS"].flatMap(Int.init) ?? 2

    @Test("With two of three members killed (kill -9) for 2.5 s again and again, increments reported as changing nothing changed nothing: the counter exceeds the acknowledged increments by no more than those whose outcome was reported unknown")
    func failuresThatChangedNothingAreTrue() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            let name = uniqueDomainName("quorum-lost")
            let workers = try (0..<3).map { index in
                try etcdWorker("tally-increments", cluster.endpoints(attachedTo: index), name, "counter", "2")
            }
            var failures = 0
            /// Reads worker lines until an increment is acknowledged: each worker makes progress between faults.
            func awaitAcknowledgement(_ worker: ChildProcess) throws {
                while let line = worker.readLine() {
                    if line.hasPrefix("ack ") { return }
                    if line.hasPrefix("failed ") { failures += 1 }
                }
                throw EtcdClusterError.notReady("a worker", "ended early: \(worker.readErrors())")
            }
            for round in 0..<Self.rounds {
                for worker in workers { try awaitAcknowledgement(worker) }
                let victims = [round % 3, (round + 1) % 3]
                for victim in victims { cluster.kill(victim) }
                // The fault's length, not a wait for something to happen: no quorum for 2.5 s.
                Thread.sleep(forTimeInterval: 2.5)
                for victim in victims { try cluster.start(victim) }
                for victim in victims { try cluster.waitUntilServing(victim) }
            }
            for worker in workers { try awaitAcknowledgement(worker) }
            var (acknowledged, unknown, unchanged) = (0, 0, 0)
            var examples: [String] = []
            for (index, worker) in workers.enumerated() {
                worker.send("stop")
                worker.closeInput()
                while let line = worker.readLine() {
                    let words = line.split(separator: " ")
                    if words.first == "tally", words.count == 4 {
                        acknowledged += Int(words[1])!
                        unknown += Int(words[2])!
                        unchanged += Int(words[3])!
                    } else if words.first == "example" {
                        examples.append(line)
                    }
                }
                #expect(worker.wait() == 0, "worker \(index): \(worker.readErrors())")
            }
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name)
            guard case .dictionary(let collection)? = try domain.snapshot().contents["counter"],
                  case .integer(let counter)? = collection["count"] else {
                Issue.record("no counter stored")
                return
            }
            let figures = "counter \(counter), acknowledged \(acknowledged), outcome unknown \(unknown), nothing changed \(unchanged), over \(Self.rounds) rounds\n\(examples.joined(separator: "\n"))"
            print(figures)
            #expect(unknown + unchanged > 0, "the faults made no operation fail: \(figures)")
            #expect(counter >= acknowledged, "an acknowledged increment is missing: \(figures)")
            #expect(counter - acknowledged <= unknown, "an increment reported as changing nothing was applied: \(figures)")
        }
    }
}
