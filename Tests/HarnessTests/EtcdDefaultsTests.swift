import EtcdTestSupport
import Foundation
import Glibc
@testable import PrefsEtcd
import Testing
import TestSupport

/// A loopback port nobody listens on: bound with port 0 (the kernel picks) and released.
private func unusedLoopbackPort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
    }
    try #require(bound, "cannot bind a loopback socket")
    return Int(UInt16(bigEndian: address.sin_port))
}

@Suite("harness defaults --etcd with no member reachable")
struct EtcdDefaultsUnreachableTests {
    let sandbox = HarnessSandbox()

    @Test("Listing or searching the domains of a cluster no member of which answers fails, naming the endpoint, instead of listing none", arguments: [["domains"], ["find", "x"]])
    func listingAnUnreachableClusterFails(words: [String]) async throws {
        try await onOwnThread {
            let endpoint = "http://127.0.0.1:\(try unusedLoopbackPort())"
            let run = try sandbox.run(["defaults", "--etcd", endpoint] + words, environment: ["ETCD_TIMEOUT": "0.3"])
            #expect(run.status == 1, "\(run.output) \(run.errors)")
            #expect(run.errors.contains("listing the domains failed"), "\(run.errors)")
            #expect(run.errors.contains(endpoint), "\(run.errors)")
            #expect(!run.errors.contains("no domains"), "\(run.errors)")
        }
    }
}

extension EtcdDefaultsUnreachableTests {
    @Test("ETCD_TIMEOUT that is not a positive number of seconds is refused as a usage error, naming the value", arguments: ["abc", "0", "-1", "99999"])
    func badTimeoutIsRefused(value: String) throws {
        let run = try sandbox.run(["defaults", "--etcd", "http://127.0.0.1:2379", "domains"], environment: ["ETCD_TIMEOUT": value])
        #expect(run.status == 2, "\(run.errors)")
        #expect(run.errors.contains("ETCD_TIMEOUT must be a number of seconds"), "\(run.errors)")
        #expect(run.errors.contains("'\(value)'"), "\(run.errors)")
    }
}

@Suite("harness defaults --etcd on a real etcd cluster", .enabled(if: EtcdCluster.isAvailable, "needs etcd"))
struct EtcdDefaultsTests {
    let sandbox = HarnessSandbox()

    @Test("Every kind of verb works on etcd domains: write, read, read-type, domains, export, import, delete")
    func verbsOnEtcdDomains() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster(size: 1)
            let etcd = cluster.endpoints.map(\.absoluteString).joined(separator: ",")
            func defaults(_ words: String...) throws -> HarnessRun { try sandbox.run(["defaults", "--etcd", etcd] + words) }
            #expect(try defaults("write", "com.example.fleet", "maximumConnections", "-int", "120").status == 0)
            #expect(try defaults("write", "com.example.fleet", "name", "fleet one").status == 0)
            let read = try defaults("read", "com.example.fleet")
            #expect(read.status == 0)
            #expect(read.output.contains("maximumConnections = 120;"))
            #expect(try defaults("read-type", "com.example.fleet", "maximumConnections").output == "Type is integer\n")
            let exported = sandbox.directory.appending("fleet.plist")
            #expect(try defaults("export", "com.example.fleet", exported).status == 0)
            #expect(try defaults("import", "com.example.copy", exported).status == 0)
            #expect(try defaults("domains").output == "com.example.copy, com.example.fleet\n")
            #expect(try defaults("delete", "com.example.copy").status == 0)
            #expect(try defaults("domains").output == "com.example.fleet\n")
            // What the inspector wrote is the app's domain.
            let domain = try EtcdDomainStorage(endpoints: cluster.endpoints, name: "com.example.fleet")
            #expect(try domain.snapshot().contents["maximumConnections"] == .integer(120))
            // No file was made but the export.
            #expect(sandbox.files().keys.sorted() == ["fleet.plist"])
        }
    }

    @Test("harness defaults --etcd takes the etcd user from ETCD_USER and ETCD_PASSWORD, and never prints the password")
    func credentialsFromTheEnvironment() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster(size: 1)
            let admin = try EtcdClient(endpoints: [HTTPEndpoint(cluster.members[0].clientURL)!], caFile: nil, credentials: nil)
            let secret = "pw-\(UUID().uuidString)"
            for (path, body) in [("/v3/auth/user/add", ["name": "root", "password": secret]), ("/v3/auth/role/add", ["name": "root"]),
                                 ("/v3/auth/user/grant", ["user": "root", "role": "root"]), ("/v3/auth/enable", [:])] {
                _ = try admin.call(path, body, by: .after(.seconds(5)), timeout: .seconds(5))
            }
            let etcd = cluster.members[0].clientURL.absoluteString
            let allowed = try sandbox.run(["defaults", "--etcd", etcd, "write", "com.example.secure", "k", "-int", "1"],
                                          environment: ["ETCD_USER": "root", "ETCD_PASSWORD": secret])
            #expect(allowed.status == 0, "\(allowed.errors)")
            let refused = try sandbox.run(["defaults", "--etcd", etcd, "read", "com.example.secure"],
                                          environment: ["ETCD_USER": "root", "ETCD_PASSWORD": "wrong-" + secret])
            #expect(refused.status == 1)
            #expect(refused.errors.contains("invalid user ID or password"), "\(refused.errors)")
            for run in [allowed, refused] { #expect(!(run.output + run.errors).contains(secret)) }
        }
    }
}

@Suite("harness share --etcd: the app and the helper share the suite through a real etcd cluster",
       .enabled(if: EtcdCluster.isAvailable, "needs etcd"))
struct EtcdShareTests {
    let sandbox = HarnessSandbox()

    @Test("Two processes, each given another member first, exchange their messages through etcd and the app's observer hears the answer")
    func shareThroughEtcd() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster(size: 3)
            let urls = cluster.endpoints.map(\.absoluteString)
            // The app's own member first; its child, the helper, is handed the same list.
            let run = try sandbox.run(["share", "--directory", sandbox.path, "--etcd", urls.joined(separator: ",")])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("helper: sees appSays = \"Hello from the app\""), "\(run.output)")
            #expect(run.output.contains("app:   its observer: helperSays: (nothing) → \"Hello back from the helper\""), "\(run.output)")
            // What they exchanged is the etcd domain, read through another member; no group-suite file was made.
            let domain = try EtcdDomainStorage(endpoints: Array(cluster.endpoints.reversed()), name: "group.com.example.harness")
            guard case .dictionary(let conversation)? = try domain.snapshot().contents["Conversation"] else {
                Issue.record("no Conversation collection in etcd")
                return
            }
            #expect(conversation["helperSays"] == .string("Hello back from the helper"))
            #expect(!sandbox.files().keys.contains { $0.hasSuffix(".plist") })
        }
    }
}
