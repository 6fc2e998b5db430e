import Foundation
import PrefsStorage

/// The domains kept under one prefix of an etcd cluster, listed and removed as a whole: what
/// `harness defaults --etcd` needs beyond one domain's storage. Not part of the public API.
package struct EtcdDomainCatalog: Sendable {
    package let endpoints: [URL]
    package let prefix: String
    package let timeout: Duration
    private let credentials: EtcdCredentials?
    private let caFile: String?
    private let client: EtcdClient

    /// `endpoints, prefix` for messages.
    package var place: String { "under \(prefix) at \(client.endpoints.map(\.description).joined(separator: ", "))" }

    package init(endpoints: [URL], prefix: String = "/RVS_PersistentPrefs/", timeout: Duration = .seconds(5),
                 credentials: EtcdCredentials? = nil, caFile: String? = nil) throws(PrefsError) {
        // The storage checks the endpoints and the CA file the same way for every domain.
        let probe = try EtcdDomainStorage(endpoints: endpoints, name: "catalog", prefix: prefix, timeout: timeout,
                                          credentials: credentials, caFile: caFile)
        self.endpoints = endpoints
        self.prefix = prefix
        self.timeout = timeout
        self.credentials = credentials
        self.caFile = caFile
        client = probe.client
    }

    /// The storage of the domain `name`.
    package func storage(_ name: String) throws(PrefsError) -> EtcdDomainStorage {
        try EtcdDomainStorage(endpoints: endpoints, name: name, prefix: prefix, timeout: timeout,
                              credentials: credentials, caFile: caFile)
    }

    /// The names of the domains under the prefix, sorted (companion keys and kept-aside values left out).
    package func names() throws(PrefsError) -> [String] {
        let start = Array(prefix.utf8)
        let body: EtcdJSON.Object = ["key": EtcdJSON.base64(start), "range_end": EtcdJSON.base64(Self.end(of: start)),
                                     "keys_only": true]
        do throws(EtcdCallFailure) {
            let response = try client.call("/v3/kv/range", body, by: .after(timeout), timeout: timeout).response
            return EtcdKeyValue.all(in: response).compactMap { kv -> String? in
                let name = kv.key.dropFirst(start.count)
                guard !name.contains(0), !name.contains(UInt8(ascii: "/")) else { return nil }
                let text = String(decoding: name, as: UTF8.self)
                return text.contains(".unreadable-") ? nil : text
            }.sorted()
        } catch {
            throw .storageUnreachable(location: place, reason: "listing the domains failed: \(error.summary)")
        }
    }

    /// Removes the domain `name` and its companion key in one transaction.
    /// - Returns: Whether the domain existed.
    package func remove(_ name: String) throws(PrefsError) -> Bool {
        let domain = try storage(name)
        let body: EtcdJSON.Object = ["success": [
            ["request_delete_range": ["key": EtcdJSON.base64(domain.keyBytes)]],
            ["request_delete_range": ["key": EtcdJSON.base64(domain.writerKey)]],
        ]]
        do throws(EtcdCallFailure) {
            let response = try client.call("/v3/kv/txn", body, by: .after(timeout), timeout: timeout).response
            let first = (response["responses"] as? [Any])?.first as? EtcdJSON.Object
            return EtcdJSON.int((first?["response_delete_range"] as? EtcdJSON.Object)?["deleted"]) > 0
        } catch {
            // A removal applied twice removes once: but the caller must not be told that nothing was removed.
            if error.mayHaveBeenApplied {
                throw .outcomeUnknown(location: domain.location, reason: "removing the domain failed: \(error.summary); a request reached a member, but whether the domain was removed could not be learnt")
            }
            throw .storageUnreachable(location: domain.location, reason: "removing the domain failed: \(error.summary); nothing was changed")
        }
    }

    /// The end of the range of keys starting with `prefix`: the prefix with its last byte incremented.
    static func end(of prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF { end[end.count - 1] = last + 1; return end }
            end.removeLast()
        }
        return [0]
    }
}
