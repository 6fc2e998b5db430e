// Every layer, everywhere (SPEC §13): `read`, `keys`, `read-type`, `find`, `export` and `watch` show a user's
// domain as a program reads it, not the bare contents of the user's file: forced entries over the user's own
// values over the system defaults, combined by the library's own search list (DefaultsSuite), so that the tool
// cannot disagree with the library about precedence.
//
// Which keys: those the domain's own layers hold (the user's file, and the domain's files in the system and managed
// directories). The global domain is a domain of its own (`read -g`): its keys are not listed under every other
// domain, but where a key is listed, its value is the one the whole search list gives, global domain included.
// `read --sources` shows where each value comes from. Administrators' files the library ignores are left out and
// reported on standard error once each (a warning: the exit status stays 0), as the library reports them in
// `lastWarnings` while it reads the other layers.
//
// With --etcd, --system, --managed, or a domain given by its file's path, there are no layers: the verbs read the
// file (or etcd key) itself, as before.

import Foundation
import RVS_PersistentPrefs
import PrefsStorage
import Synchronization

extension DomainInspector {
    /// The user's domain directory, when the verbs read a user's domains over the administrator's layers; `nil`
    /// for `--system`, `--managed` and `--etcd`, whose domains are read as they are.
    var userDirectory: DomainDirectory? {
        let base = (domains as? DryRunCatalog)?.base ?? domains
        guard let directory = base as? DomainDirectory, directory.layer == nil else { return nil }
        return directory
    }

    /// The contents of `word`'s domain as a program reads them (see the top of this file); a domain given by
    /// its path, the global domain, and the domains of `--system`, `--managed` and `--etcd` as stored.
    /// - Parameter reporting: Whether an administrator's file that the library ignores is reported on standard
    ///   error (not while completing a command line).
    /// - Throws: When the domain exists in no layer, or the user's file cannot be read.
    package func effectiveContents(of word: String, reporting: Bool = true) throws(HarnessError) -> [String: PropertyListValue] {
        guard let contents = try effectiveContentsIfAny(of: word, reporting: reporting) else { throw domains.doesNotExist(word) }
        return contents
    }

    /// ``effectiveContents(of:reporting:)``, or `nil` when the domain exists in no layer.
    package func effectiveContentsIfAny(of word: String, reporting: Bool = true) throws(HarnessError) -> [String: PropertyListValue]? {
        let reference = try DomainReference(word)
        guard let directory = userDirectory, case .named(let name) = reference else {
            let snapshot = try domains.snapshot(of: domains.storage(reference))
            return snapshot.exists ? snapshot.contents : nil
        }
        let suite = try layeredSuite(directory, named: name, reporting: reporting)
        do {
            return try Self.effectiveContents(of: suite, named: name)
        } catch {
            throw HarnessError(error)
        }
    }

    /// The value of `key` in `word`'s domain as a program reads it, which must exist.
    package func effectiveValue(_ key: String, in word: String) throws(HarnessError) -> PropertyListValue {
        guard let value = try effectiveContents(of: word)[key] else {
            throw .failure("The domain/default pair of (\(word), \(key)) does not exist; `\(Tool.command) read \(word)` lists its keys")
        }
        return value
    }

    /// Every key that the domain `name`'s own layers in `suite` hold, with the value the suite's search list
    /// gives it; `nil` when none of those layers exists. An administrator's file that cannot be used is skipped,
    /// as the library's reads skip it.
    /// - Throws: The user's file's read errors (an unreadable file is an error, as for a program).
    static func effectiveContents(of suite: DefaultsSuite, named name: String) throws(PrefsError) -> [String: PropertyListValue]? {
        var exists = false
        var keys = Set<String>()
        for source in suite.sources where isOwnLayer(source, named: name) {
            let snapshot: DomainSnapshot
            if source.role == .persistent {
                snapshot = try source.storage.snapshot()
            } else {
                guard let usable = try? source.storage.snapshot() else { continue }
                snapshot = usable
            }
            exists = exists || snapshot.exists
            keys.formUnion(snapshot.contents.keys)
        }
        guard exists else { return nil }
        var contents: [String: PropertyListValue] = [:]
        for key in keys {
            contents[key] = try suite.value(forKey: key)
        }
        return contents
    }

    /// Whether `source` is one of the domain `name`'s own layers: the user's (or group suite's) file, or the
    /// domain's file in a system or managed directory; not the global domain, nor the system-wide global files.
    static func isOwnLayer(_ source: SearchSource, named name: String) -> Bool {
        if source.role == .persistent { return true }
        guard source.role == .managed || source.role == .system else { return false }
        return (source.storage.location as NSString).lastPathComponent == name + DomainName.fileExtension
    }
}

/// What has been reported on standard error as a warning, so that a file that many domains read (a system
/// directory's global file) is reported once per run, not once per domain.
enum Warnings {
    private static let reported = PrefsMutex<Set<String>>([])

    /// Writes `message` on standard error as a warning, unless it was written already.
    static func report(_ message: String) {
        guard reported.withLock({ $0.insert(message).inserted }) else { return }
        Console.complain("\(Tool.command): warning: \(message)")
    }
}

extension DomainInspector {
    /// `read --sources` where the domain has one layer only: a domain of `--system`, `--managed` or `--etcd`, the
    /// global domain (`-g`), or a file given by its path. Each key (and each entry of a collection) is shown with
    /// that layer and its location, in the form and JSON of the layered `read --sources`, shadowing nothing.
    func readSourcesOfOneLayer(_ operands: [String], json: Bool) throws(HarnessError) {
        guard (1...3).contains(operands.count) else { throw .usage("read --sources needs DOMAIN [KEY [ENTRY]] (see \(Tool.command) help read)") }
        let reference = try DomainReference(operands[0])
        let storage = try domains.existingStorage(operands[0])
        let contents = try domains.contents(of: storage)
        let layer: String
        switch reference {
        case .global: layer = "global"
        case .file: layer = "file"
        case .named: layer = (((domains as? DryRunCatalog)?.base ?? domains) as? DomainDirectory)?.layer?.rawValue ?? "etcd"
        }
        let origin = { (value: PropertyListValue) -> (text: String, json: PropertyListValue) in
            ("(\(layer): \(storage.location))",
             .dictionary(["value": value, "layer": .string(layer), "file": .string(storage.location), "shadowed": .array([])]))
        }
        var lines: [String] = []
        var report: [String: PropertyListValue] = [:]
        for key in operands.count >= 2 ? [operands[1]] : contents.keys.sorted() {
            guard let value = contents[key] else {
                throw .failure("The domain/default pair of (\(operands[0]), \(key)) does not exist; `\(Tool.command) read --sources \(operands[0])` lists its keys")
            }
            guard case .dictionary(var entries) = value, operands.count == 3 || !entries.isEmpty else {
                if operands.count == 3 {
                    throw .failure("\(EntryPath.describe(operands[0], key, [operands[2]])) does not exist: \(key) holds \(PropertyListPrinter.typeName(value, article: true)), not a dictionary")
                }
                lines.append("\(key) = \(PropertyListPrinter.inline(value));  \(origin(value).text)")
                report[key] = origin(value).json
                continue
            }
            if operands.count == 3 {
                guard let only = entries[operands[2]] else {
                    throw .failure("\(EntryPath.describe(operands[0], key, [operands[2]])) does not exist; `\(Tool.command) read --sources \(operands[0]) \(key)` lists its entries")
                }
                entries = [operands[2]: only]
            }
            lines.append("\(key):")
            lines += entries.sorted { $0.key < $1.key }.map { "    \($0.key) = \(PropertyListPrinter.inline($0.value));  \(origin($0.value).text)" }
            report[key] = .dictionary(["entries": .dictionary(entries.mapValues { origin($0).json })])
        }
        if json {
            Console.say(JSONText.encode(.dictionary(report)))
        } else if !lines.isEmpty {
            Console.say(lines.joined(separator: "\n"))
        }
    }
}
