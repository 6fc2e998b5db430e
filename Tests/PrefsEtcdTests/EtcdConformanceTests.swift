import EtcdTestSupport
import TestSupport
import PrefsEtcd
import PrefsStorageTesting
import Testing

/// The conformance kit (SPEC §10) on the package's etcd backend, as on its others (see the PrefsStorage tests).
@Suite("DomainStorageConformance on etcd domains", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdConformanceTests {
    @Test("EtcdDomainStorage keeps the DomainStorage contract, with the other writer attached to another member")
    func etcdDomainConforms() async throws {
        try await onOwnThread {
            let cluster = try EtcdCluster.shared()
            try DomainStorageConformance {
                let (storage, otherWriter) = try cluster.storages(of: "conformance", attachedTo: 0, 1)
                return .init(storage: storage, otherWriter: otherWriter)
            }.check()
        }
    }
}
