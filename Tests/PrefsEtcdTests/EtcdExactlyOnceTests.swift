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
