import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
import RVS_PersistentPrefs
import Testing
import TestSupport

@Suite("PrefsEtcd over https and with etcd authentication", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdSecurityTests {
    let directory = TemporaryDirectory()

    @Test("https endpoints work when their certificate is verified against the given CA file, writes and watches alike")
    func httpsWithCAFile() async throws {
        try await onOwnThread {
            let files = try TestCertificates.make(in: directory.path, name: "loopback", subjectAltName: "IP:127.0.0.1")
            let cluster = try EtcdCluster(tls: files)
            let name = uniqueDomainName("https")
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name, caFile: files.authority)
            let watcher = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 1), name: name, caFile: files.authority)
            _ = try watcher.snapshot()
            let counter = ChangeCounter()
            let watch = try #require(watcher.watchChanges(counter.handler))
            try domain.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(7) }
            #expect(counter.waitForCall())
            #expect(try watcher.snapshot().contents["v"] == .integer(7))
            watch.cancel()

            // The system's trust store does not hold the test CA: nothing is read or written.
            let untrusting = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name, timeout: .seconds(1))
            do {
                _ = try untrusting.snapshot()
                Issue.record("a certificate from an unknown CA was accepted")
            } catch {
                #expect("\(error)".contains("not trusted"), "\(error)")
            }
        }
    }

    @Test("An https endpoint whose certificate names another host is refused, even when its CA is trusted")
    func httpsHostNameChecked() async throws {
        try await onOwnThread {
            let files = try TestCertificates.make(in: directory.path, name: "elsewhere", subjectAltName: "DNS:elsewhere.example")
            // Not waited for (its readiness cannot be asked over https either): the read's bound covers the member's
            // start, and a handshake on a loaded machine, not only the refusal it ends with.
            let cluster = try EtcdCluster(size: 1, tls: files, skipReadiness: true)
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints, name: uniqueDomainName("mismatch"),
                                               timeout: .seconds(3), caFile: files.authority)
            do {
                _ = try domain.snapshot()
                Issue.record("a certificate for another host was accepted")
            } catch {
                #expect("\(error)".contains("not trusted"), "\(error)")
                #expect("\(error)".contains("mismatch"), "\(error)")
            }
        }
    }

    @Test("With etcd authentication, the user's credentials work, are never shown, and an expired token is renewed")
    func usernameAndPassword() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster()
            let admin = try EtcdClient(endpoints: [HTTPEndpoint(cluster.members[0].clientURL)!], caFile: nil,
                                       credentials: nil)
            func call(_ path: String, _ body: EtcdJSON.Object, as client: EtcdClient) throws {
                do {
                    _ = try client.call(path, body, by: .after(.seconds(20)), timeout: .seconds(10))
                } catch {
                    // An attempt whose answer came too late on a loaded machine was applied: its retry found it done.
                    guard "\(error)".contains("already exists") else { throw error }
                }
            }
            let secret = "s3cret-\(UUID().uuidString)"
            try call("/v3/auth/user/add", ["name": "root", "password": secret], as: admin)
            try call("/v3/auth/role/add", ["name": "root"], as: admin)
            try call("/v3/auth/user/grant", ["user": "root", "role": "root"], as: admin)
            try call("/v3/auth/enable", [:], as: admin)

            let name = uniqueDomainName("auth")
            let credentials = EtcdCredentials(user: "root", password: secret)
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name, credentials: credentials)
            try domain.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(1) }
            #expect(try domain.snapshot().contents["v"] == .integer(1))

            // Turning authentication off and on again forgets every token: the next operation authenticates anew.
            let rootAdmin = try EtcdClient(endpoints: [HTTPEndpoint(cluster.members[1].clientURL)!], caFile: nil,
                                           credentials: credentials)
            try call("/v3/auth/disable", [:], as: rootAdmin)
            try call("/v3/auth/enable", [:], as: admin)
            try domain.modify(repairing: .failIfUnreadable) { $0["v"] = .integer(2) }
            #expect(try domain.snapshot().contents["v"] == .integer(2))

            // Without credentials, or with a wrong password: refused, and no message shows a password. (Given 5 s:
            // etcd checks a password with bcrypt, which on a loaded machine took longer than 1 s.)
            let anonymous = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name, timeout: .seconds(5))
            #expect(throws: PrefsError.self) { try anonymous.snapshot() }
            let wrong = try EtcdDomainStorage(endpoints: cluster.endpoints, name: name, timeout: .seconds(5),
                                              credentials: EtcdCredentials(user: "root", password: "wrong-\(secret)"))
            do {
                _ = try wrong.snapshot()
                Issue.record("a wrong password was accepted")
            } catch {
                #expect("\(error)".contains("invalid user ID or password"), "\(error)")
                #expect(!"\(error)".contains(secret))
                // Said as a refusal to correct, not as a cluster out of reach.
                if case .userDefaultsUnavailable(let reason)? = error as? PrefsError {
                    #expect(reason.contains("etcd refused access to"), "\(reason)")
                } else {
                    Issue.record("a wrong password was reported as \(error)")
                }
            }
            var dumped = ""
            dump(credentials, to: &dumped)
            for shown in ["\(credentials)", String(reflecting: credentials), dumped, domain.location, "\(domain)"] {
                #expect(!shown.contains(secret), "\(shown)")
            }
        }
    }
}
