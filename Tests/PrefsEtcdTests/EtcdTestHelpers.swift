import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import RVS_PersistentPrefs
import Testing
import TestSupport

/// Every etcd test needs the `etcd` binary. Swift Testing reports each test it skips, so without it the suites
/// are skipped with this short comment, and one test alone (``EtcdBinaryTests``) names the package to install.
let etcdMissing: Comment = "needs etcd"

/// The one line that says what to install when the etcd tests are skipped.
@Suite("The etcd binary")
struct EtcdBinaryTests {
    @Test("The etcd binary the PrefsEtcd and harness --etcd tests start clusters from runs",
          .enabled(if: EtcdCluster.isAvailable, "etcd is not installed: install Debian's etcd-server (apt-get install etcd-server) to run the PrefsEtcd tests"))
    func etcdBinaryRuns() throws {
        // Under RVS_PREFS_REQUIRE_ETCD=1 a missing binary fails here, naming where it was looked for.
        guard let binary = EtcdCluster.binary else { throw EtcdClusterError.notInstalled }
        let child = try ChildProcess(binary, ["--version"])
        let output = child.readAllOutput()
        #expect(child.wait() == 0, "\(binary) --version: \(child.readErrors())")
        #expect(output.contains("etcd Version"), "\(output)")
    }
}

/// Allows every name a test writes.
final class EtcdTestPreferences: RVS_PersistentPrefs {
    let allowed: [String]
    let suite: DefaultsSuite

    init(key: String, allowed: [String], domain: EtcdDomainStorage) {
        self.allowed = allowed
        suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        super.init(key: key)
    }

    required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }

    override var keys: [String] { allowed }
    override var userDefaults: DefaultsSuite? { suite }
}

/// A unique domain name per test, so that tests sharing nothing never collide.
func uniqueDomainName(_ label: String) -> String { "test.\(label).\(UUID().uuidString)" }

/// What the watched-read tests share: a cluster of their own, and a new domain with a reader in watched read mode
/// attached to one member and a writer attached to another (so that the writer's changes reach the reader only
/// through the cluster and the reader's watch).
struct WatchedReadPair {
    let cluster: EtcdCluster
    let name: String
    let reader: EtcdDomainStorage
    let writer: EtcdDomainStorage

    /// The reader's timeout is 4 s: one full run at load 18 saw a read of a cluster that serves fail within 2 s.
    init(_ label: String, readerMember: Int = 1, readerTimeout: Duration = .seconds(4)) throws {
        cluster = try EtcdCluster()
        name = uniqueDomainName(label)
        reader = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: readerMember), name: name,
                                       timeout: readerTimeout, readMode: .watched)
        writer = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 0), name: name)
    }
}

/// Starts the test worker attached to `endpoints` (the first is its member).
func etcdWorker(_ command: String, _ endpoints: [URL], _ name: String, _ storageKey: String, _ more: String...) throws -> ChildProcess {
    try ChildProcess("EtcdTestWorker", [command, endpoints.map(\.absoluteString).joined(separator: ","), name, storageKey] + more)
}

extension EtcdDomainStorage {
    /// The raw value of the domain's key, through a plain range call.
    func rawValue() throws -> [UInt8]? {
        let response = try client.call("/v3/kv/range", ["key": EtcdJSON.base64(keyBytes)], by: .after(timeout), timeout: timeout).response
        return EtcdKeyValue.all(in: response).first?.value
    }

    /// Whether member `endpoint` currently knows a leader (`/v3/maintenance/status`); `nil` when it did not answer.
    static func memberKnowsLeader(_ endpoint: URL) -> Bool? {
        guard let client = try? EtcdClient(endpoints: [HTTPEndpoint(endpoint)!], caFile: nil, credentials: nil) else { return nil }
        do {
            let status = try client.call("/v3/maintenance/status", [:], by: .after(.seconds(1)), timeout: .seconds(1)).response
            return EtcdJSON.int(status["leader"]) != 0
        } catch {
            // Requests are marked "require a leader", so a member without one refuses even this.
            return error.summary.contains("no leader") ? false : nil
        }
    }
}

extension EtcdCluster {
    /// Two storage objects for one new domain, as two processes attached to members `first` and `second` see it.
    func storages(of label: String, attachedTo first: Int, _ second: Int) throws -> (EtcdDomainStorage, EtcdDomainStorage) {
        let name = uniqueDomainName(label)
        return (try EtcdDomainStorage(endpoints: endpoints(attachedTo: first), name: name),
                try EtcdDomainStorage(endpoints: endpoints(attachedTo: second), name: name))
    }
}

extension EtcdDomainStorage {
    /// Deletes the domain's key, as `etcdctl del` on another machine would.
    func deleteKey() throws {
        _ = try client.call("/v3/kv/deleterange", ["key": EtcdJSON.base64(keyBytes)], by: .after(timeout), timeout: timeout)
    }
}

/// A watching instance's notifications of changes made elsewhere: the integer entries of each collection told.
final class ToldCollections {
    let told = WaitableValue<[[String: Int]]>([])
    private let prefs: EtcdTestPreferences
    private var observation: PrefsObservation?

    /// Turns watching on for `prefs` and records what its observer is told.
    init(_ prefs: EtcdTestPreferences) {
        self.prefs = prefs
        prefs.watchesExternalChanges = true
        observation = prefs.observe(\.values, options: [.new]) { [told] _, change in
            let values = (change.newValue ?? [:]).compactMapValues { $0 as? Int }
            told.update { $0.append(values) }
        }
    }

    /// Stops the observer and the watching.
    func stop() {
        observation?.invalidate()
        prefs.watchesExternalChanges = false
    }
}
