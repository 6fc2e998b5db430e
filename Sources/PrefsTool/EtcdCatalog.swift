// The inspector's domains kept in an etcd cluster (`harness defaults --etcd URL[,URL…]`): every verb works on
// them as on files, through EtcdDomainStorage, the type an app stores with. The credentials come from the
// environment (ETCD_USER and ETCD_PASSWORD; ETCD_CA_FILE for https endpoints signed by a private CA), never
// from the command line, where other users could read them; ETCD_TIMEOUT bounds each operation (seconds).

import Foundation
import PrefsEtcd
import RVS_PersistentPrefs

/// The domains under `/RVS_PersistentPrefs/` of one etcd cluster.
package struct EtcdCatalog: DomainCatalog {
    package let catalog: EtcdDomainCatalog

    /// The option that selects it, and what it takes.
    package static let option = "--etcd"

    /// The catalog of the cluster at `list`, client URLs separated by commas.
    package init(endpoints list: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(HarnessError) {
        let urls = list.split(separator: ",").map { URL(string: String($0)) }
        guard !urls.isEmpty, urls.allSatisfy({ $0 != nil }) else {
            throw .usage("\(Self.option) needs client URLs separated by commas, such as http://10.0.0.1:2379,http://10.0.0.2:2379")
        }
        var credentials: EtcdCredentials?
        if let user = environment["ETCD_USER"] {
            guard let password = environment["ETCD_PASSWORD"] else {
                throw .usage("ETCD_USER is set but ETCD_PASSWORD is not: set both in the environment for an etcd user")
            }
            credentials = EtcdCredentials(user: user, password: password)
        }
        var timeout = Duration.seconds(5)
        if let text = environment["ETCD_TIMEOUT"] {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw .usage("ETCD_TIMEOUT must be a number of seconds above 0 and at most 3600, not '\(text)'")
            }
            timeout = .seconds(seconds)
        }
        do {
            catalog = try EtcdDomainCatalog(endpoints: urls.compactMap { $0 }, timeout: timeout, credentials: credentials,
                                            caFile: environment["ETCD_CA_FILE"])
        } catch {
            throw HarnessError(error)
        }
    }

    package var place: String { catalog.place }

    package func storage(_ domain: DomainReference) throws(HarnessError) -> any DomainStorage {
        switch domain {
        case .global:
            throw .usage("the global domain is kept in a file, not in etcd: leave out \(Self.option) to read or change it")
        case .file:
            throw .usage("with \(Self.option), name a domain, not a file")
        case .named(let name):
            do {
                return try catalog.storage(name)
            } catch {
                throw HarnessError(error)
            }
        }
    }

    package func domainNames() throws(HarnessError) -> [String] {
        do {
            return try catalog.names()
        } catch {
            throw HarnessError(error)
        }
    }

    package var hasGlobalDomain: Bool { false }

    package func remove(_ domain: DomainReference, named word: String) throws(HarnessError) {
        guard case .named(let name) = domain else { _ = try storage(domain); return }
        let existed: Bool
        do {
            existed = try catalog.remove(name)
        } catch {
            throw HarnessError(error)
        }
        if !existed { throw .failure("Domain \(word) does not exist \(place); `\(Tool.command) --etcd … domains` lists those that do") }
    }
}
