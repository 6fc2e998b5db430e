// The administrator's layers over the inspector's domains (see the Administration article): system-wide
// defaults and forced entries. `read --sources` shows which layer supplies each entry, `domains` marks the
// domains that have system or managed files, and a write that would change a forced entry is refused with
// the library's own message.

import Foundation
import RVS_PersistentPrefs

/// The system and managed directories the environment selects, as the library reads them.
package struct AdministratorLayers {
    package let locations: DefaultsLocations

    /// The layers of this process's environment ($CONFIGURATION_DIRECTORY, $XDG_CONFIG_DIRS,
    /// $RVS_PREFS_MANAGED_DIRECTORY), over the user's domains in `preferencesDirectory`.
    package init(preferencesDirectory: String) {
        var locations = DefaultsLocations.current(applicationDomainName: "harness")
        locations.preferencesDirectory = preferencesDirectory
        self.locations = locations
    }

    /// The suite a program would read `name` through: `persistent` and `global` with the layers above and below.
    package func suite(named name: String, persistent: any DomainStorage, global: (any DomainStorage)?) -> DefaultsSuite {
        DefaultsSuite(persistentDomain: persistent, globalDomain: global,
                      systemDomains: locations.systemDomains(named: name), managedDomains: locations.managedDomains(named: name),
                      argumentDomain: [:])
    }

    /// The domains with a file in some system directory, and those with a managed file.
    package func markedDomains() -> (system: Set<String>, managed: Set<String>) {
        let system = locations.systemDirectories.flatMap(Self.domainNames(in:))
        return (Set(system), Set(locations.managedDirectory.map(Self.domainNames(in:)) ?? []))
    }

    private static func domainNames(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(DomainName.fileExtension) && !$0.hasPrefix(".") }
            .map { String($0.dropLast(DomainName.fileExtension.count)) }
    }
}

/// A user's domain as the inspector writes it: a write that would set, change or remove an entry the
/// administrator forces is refused as a whole, as the library refuses it.
package final class AdministeredDomain: DomainStorage {
    package let file: FileDomainStorage
    package let suite: DefaultsSuite

    package init(_ file: FileDomainStorage, suite: DefaultsSuite) {
        (self.file, self.suite) = (file, suite)
    }

    package var location: String { file.location }
    package var isKnownToExist: Bool { file.isKnownToExist }

    package func snapshot() throws(PrefsError) -> DomainSnapshot { try file.snapshot() }

    @discardableResult
    package func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try file.modify(repairing: policy) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
            let before = contents
            try transform(&contents)
            try suite.refuseForcedChanges(from: before, to: contents)
        }
    }

    package func watchChanges(_ onChange: @escaping @Sendable () -> Void) -> (any DomainChangeWatch)? { file.watchChanges(onChange) }
}

extension DomainInspector {
    /// `read --sources DOMAIN [KEY]`: each key, and each entry of a collection, with the layer that supplies
    /// it and its file, as a program reading DOMAIN through the library sees it.
    package func readSources(_ operands: [String]) throws(HarnessError) {
        guard let directory = domains as? DomainDirectory else {
            throw .usage("read --sources works on domain files; the administrator's layers are files on this machine")
        }
        guard (1...2).contains(operands.count) else { throw .usage("read --sources needs DOMAIN [KEY] (see \(Tool.command) help read)") }
        let reference = try DomainReference(operands[0])
        guard case .named(let name) = reference else {
            throw .usage("read --sources needs a domain's name: the global domain and files given by path have no layers")
        }
        let suite = directory.layers.suite(named: name, persistent: try directory.fileStorage(reference),
                                           global: try directory.fileStorage(.global))
        let keys: [String]
        do {
            keys = operands.count == 2 ? [operands[1]] : try suite.propertyListRepresentation().keys.sorted()
        } catch {
            throw HarnessError(error)
        }
        var lines: [String] = []
        for key in keys {
            let origins: (whole: (value: PropertyListValue, role: SearchDomain, location: String)?,
                          entries: [String: (value: PropertyListValue, role: SearchDomain, location: String)])
            do {
                origins = try suite.origins(ofKey: key)
            } catch {
                throw HarnessError(error)
            }
            if let whole = origins.whole {
                lines.append("\(key) = \(PropertyListPrinter.inline(whole.value));  \(Self.origin(whole.role, whole.location))")
            } else if !origins.entries.isEmpty {
                lines.append("\(key):")
                for (entry, origin) in origins.entries.sorted(by: { $0.key < $1.key }) {
                    lines.append("    \(entry) = \(PropertyListPrinter.inline(origin.value));  \(Self.origin(origin.role, origin.location))")
                }
            } else if operands.count == 2 {
                throw .failure("The domain/default pair of (\(name), \(key)) does not exist in any layer; `\(Tool.command) read --sources \(name)` lists its keys")
            }
        }
        Console.say(lines.joined(separator: "\n"))
    }

    private static func origin(_ role: SearchDomain, _ location: String) -> String {
        role == .arguments || role == .registration ? "(\(role.name))" : "(\(role.name): \(location))"
    }
}
