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
    package init(preferencesDirectory: String?) {
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
    /// One value as a layer supplies it: what, from which layer, in which file.
    struct Origin {
        let value: PropertyListValue
        let role: SearchDomain
        let location: String

        var text: String {
            role == .arguments || role == .registration ? "(\(role.name))" : "(\(role.name): \(location))"
        }

        var json: PropertyListValue {
            .dictionary(["value": value, "layer": .string(role.name), "file": .string(location)])
        }
    }

    /// `read --sources DOMAIN [KEY [ENTRY]]`: each key, and each entry of a collection, with the layer that
    /// supplies it and its file, as a program reading DOMAIN through the library sees it, and beneath it the
    /// values of the other layers that it shadows (as `git config --show-origin --get-all`). An
    /// administrator's file that the library ignores is reported on standard error, and the other layers
    /// are shown without it.
    package func readSources(_ operands: [String], json: Bool = false) throws(HarnessError) {
        guard (1...3).contains(operands.count) else { throw .usage("read --sources needs DOMAIN [KEY [ENTRY]] (see \(Tool.command) help read)") }
        // The domains of --system, --managed and --etcd, the global domain and a file given by its path have one layer.
        guard let directory = userDirectory, case .named(let name) = try DomainReference(operands[0]) else {
            return try readSourcesOfOneLayer(operands, json: json)
        }
        let suite = try layeredSuite(directory, named: name)
        // Every layer's contents, in the search list's order, for the values each winner shadows.
        var layers: [(role: SearchDomain, location: String, contents: [String: PropertyListValue])] = []
        let own: [String: PropertyListValue]?
        do {
            for source in suite.sources where source.role != .arguments && source.role != .registration {
                layers.append((source.role, source.storage.location, try source.storage.snapshot().contents))
            }
            // The keys `read DOMAIN` shows: those of the domain's own layers.
            own = try Self.effectiveContents(of: suite, named: name)
        } catch {
            throw HarnessError(error)
        }
        guard let own else { throw domains.doesNotExist(operands[0]) }
        let keys = operands.count >= 2 ? [operands[1]] : own.keys.sorted()
        var lines: [String] = []
        var report: [String: PropertyListValue] = [:]
        for key in keys {
            let origins: (whole: (value: PropertyListValue, role: SearchDomain, location: String)?,
                          entries: [String: (value: PropertyListValue, role: SearchDomain, location: String)])
            do {
                origins = try suite.origins(ofKey: key)
            } catch {
                throw HarnessError(error)
            }
            let shadowed = { (winner: Origin, entry: String?) -> [Origin] in
                layers.compactMap { layer -> Origin? in
                    guard layer.role != winner.role || layer.location != winner.location, let value = layer.contents[key] else { return nil }
                    guard let entry else { return Origin(value: value, role: layer.role, location: layer.location) }
                    guard case .dictionary(let entries) = value, let inner = entries[entry] else { return nil }
                    return Origin(value: inner, role: layer.role, location: layer.location)
                }
            }
            if let whole = origins.whole, operands.count < 3 {
                let winner = Origin(value: whole.value, role: whole.role, location: whole.location)
                let beneath = shadowed(winner, nil)
                lines.append("\(key) = \(PropertyListPrinter.inline(winner.value));  \(winner.text)")
                lines += beneath.map { "    shadows \(PropertyListPrinter.inline($0.value));  \($0.text)" }
                report[key] = Self.json(winner, beneath)
            } else if !origins.entries.isEmpty {
                var entries = origins.entries
                if operands.count == 3 {
                    guard let only = entries[operands[2]] else {
                        throw .failure("\(EntryPath.describe(name, key, [operands[2]])) does not exist in any layer; `\(Tool.command) read --sources \(name) \(key)` lists its entries")
                    }
                    entries = [operands[2]: only]
                }
                lines.append("\(key):")
                var entryReport: [String: PropertyListValue] = [:]
                for (entry, origin) in entries.sorted(by: { $0.key < $1.key }) {
                    let winner = Origin(value: origin.value, role: origin.role, location: origin.location)
                    let beneath = shadowed(winner, entry)
                    lines.append("    \(entry) = \(PropertyListPrinter.inline(winner.value));  \(winner.text)")
                    lines += beneath.map { "        shadows \(PropertyListPrinter.inline($0.value));  \($0.text)" }
                    entryReport[entry] = Self.json(winner, beneath)
                }
                report[key] = .dictionary(["entries": .dictionary(entryReport)])
            } else if let found = try? suite.lookup(key),
                      let supplier = layers.first(where: { $0.role == found.domain && $0.contents[key] != nil }), operands.count < 3 {
                // A value no entry-by-entry origin accounts for: a system default that is not a dictionary, which
                // a read of the key returns whole, and a program reading the key as a collection ignores.
                let winner = Origin(value: found.value, role: found.domain, location: supplier.location)
                let beneath = shadowed(winner, nil)
                lines.append("\(key) = \(PropertyListPrinter.inline(winner.value));  \(winner.text)")
                lines += beneath.map { "    shadows \(PropertyListPrinter.inline($0.value));  \($0.text)" }
                report[key] = Self.json(winner, beneath)
                if found.value.dictionaryValue == nil && found.domain != .persistent {
                    Warnings.report("\(supplier.location): the value under '\(key)' is \(PropertyListPrinter.typeName(found.value, article: true)), not a dictionary: a program reading '\(key)' as a collection ignores it (an RVS_PersistentPrefs instance), and one reading the key with the UserDefaults API gets it as shown")
                }
            } else if operands.count >= 2 {
                throw .failure("The domain/default pair of (\(name), \(key)) does not exist in any layer; `\(Tool.command) read --sources \(name)` lists its keys")
            }
        }
        Console.say(json ? JSONText.encode(.dictionary(report)) : lines.joined(separator: "\n"))
    }

    private static func json(_ winner: Origin, _ beneath: [Origin]) -> PropertyListValue {
        guard case .dictionary(var fields) = winner.json else { return winner.json }
        fields["shadowed"] = .array(beneath.map(\.json))
        return .dictionary(fields)
    }

    /// The administrator's domains whose files the library would use; each one it would ignore is reported
    /// on standard error with the library's reason, so that the other layers can still be shown.
    static func usable(_ storages: [any DomainStorage], reporting: Bool = true) -> [any DomainStorage] {
        storages.filter { storage in
            do {
                _ = try storage.snapshot()
                return true
            } catch {
                if reporting { Warnings.report("\(error)") }
                return false
            }
        }
    }
}
