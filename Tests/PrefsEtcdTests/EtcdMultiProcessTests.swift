import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
import RVS_PersistentPrefs
import Testing
import TestSupport

// Real child processes (Tests/EtcdTestWorker), each attached to a different member of a real cluster.
@Suite("PrefsEtcd across processes attached to different members", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdMultiProcessTests {
    @Test("4 processes × 100 modify increments, while a member is killed with kill -9 and restarted, end at exactly 400")
    func incrementsSurviveAKilledMember() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            let name = uniqueDomainName("increments")
            let workers = try (0..<4).map { index in
                try etcdWorker("increment", cluster.endpoints(attachedTo: index % 3), name, "counter", "100")
            }
            // Kill the member the first worker is attached to once it has made some progress, and restart it while
            // the others still write; the workers report each increment, so this waits on their pipes.
            #expect(workers[0].readLine() == "progress 25")
            cluster.kill(0)
            #expect(workers[1].readLine() == "progress 25")
            try cluster.start(0)
            for (index, worker) in workers.enumerated() {
                var last = ""
                while let line = worker.readLine() { last = line }
                #expect(worker.wait() == 0, "worker \(index): \(worker.readErrors())")
                #expect(last == "ok", "worker \(index) ended with \(last)")
            }
            try cluster.waitUntilServing(0)
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 0), name: name)
            #expect(try domain.snapshot().contents["counter"] == .dictionary(["count": .integer(400)]))
        }
    }

    @Test("8 processes × 50 writes of different entries of one collection, through different members, are all kept")
    func concurrentEntriesAllKept() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster.shared()
            let name = uniqueDomainName("entries")
            let workers = try (0..<8).map { index in
                try etcdWorker("write-entries", cluster.endpoints(attachedTo: index % 3), name, "shared", String(index), "8", "50")
            }
            for (index, worker) in workers.enumerated() {
                #expect(worker.readAllOutput() == "ok", "worker \(index)")
                #expect(worker.wait() == 0, "worker \(index): \(worker.readErrors())")
            }
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 1), name: name)
            guard case .dictionary(let entries)? = try domain.snapshot().contents["shared"] else {
                Issue.record("no collection")
                return
            }
            #expect(entries.count == 400)
            for worker in 0..<8 {
                for index in 0..<50 { #expect(entries["w\(worker)-\(index)"] == .integer(index), "w\(worker)-\(index)") }
            }
        }
    }

    @Test("A process watching changes on one member hears 50 writes made by another process through another member, ending on the final value")
    func watcherHearsAnotherMembersWrites() throws {
        let cluster = try EtcdCluster.shared()
        let name = uniqueDomainName("watch")
        let watcher = try etcdWorker("watch", cluster.endpoints(attachedTo: 2), name, "live", "50")
        #expect(watcher.readLine() == "ready")
        let writer = try etcdWorker("serve-writes", cluster.endpoints(attachedTo: 0), name, "live")
        for value in 1...50 {
            writer.send(String(value))
            #expect(writer.readLine() == "done \(value)")
        }
        writer.closeInput()
        #expect(writer.wait() == 0, "\(writer.readErrors())")
        let report = watcher.readLine() ?? ""
        #expect(report.hasPrefix("final 50 deliveries "), "\(report)")
        let deliveries = Int(report.split(separator: " ").last ?? "") ?? 0
        #expect(deliveries >= 1 && deliveries <= 50, "\(report)")
        #expect(watcher.wait() == 0, "\(watcher.readErrors())")
    }
}
