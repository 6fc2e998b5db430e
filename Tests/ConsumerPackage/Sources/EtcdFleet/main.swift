// Settings shared by a fleet through an etcd cluster (Sharing Across Machines), as an app writes it:
// ETCD_ENDPOINTS holds the members' client URLs, comma-separated. Each run adds 10 to maximumConnections
// and shows that another instance, attached to the members in the other order, reads the new value at once.
import Foundation
import PrefsEtcd
import RVS_PersistentPrefs

final class FleetSettings: RVS_PersistentPrefs {
    @Entry("maximumConnections") var maximumConnections = 100
    @Entry("maintenance") var maintenance = false
}

let endpoints = (ProcessInfo.processInfo.environment["ETCD_ENDPOINTS"] ?? "http://127.0.0.1:2379")
    .split(separator: ",").compactMap { URL(string: String($0)) }
do {
    let domain = try EtcdDomainStorage(endpoints: endpoints, name: "com.example.fleet")
    let fleet = FleetSettings(key: "settings", suite: DefaultsSuite(persistentDomain: domain))
    let before = fleet.maximumConnections
    fleet.modify(\.$maximumConnections) { $0 += 10 }
    if let error = fleet.lastError {
        print("not saved:", error)
        exit(1)
    }
    let elsewhere = try EtcdDomainStorage(endpoints: endpoints.reversed(), name: "com.example.fleet")
    let other = FleetSettings(key: "settings", suite: DefaultsSuite(persistentDomain: elsewhere))
    print("maximumConnections: \(before) → \(fleet.maximumConnections); another instance reads \(other.maximumConnections)")
} catch {
    print(error)
    exit(1)
}
