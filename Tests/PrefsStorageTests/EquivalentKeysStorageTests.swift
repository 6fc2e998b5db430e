import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// A domain file written by Python or CoreFoundation may hold storage keys, and collection entries,
/// that differ in code points but are equal under Swift's `String ==` (`"é"` and `"e\u{301}"`). A write
/// through the library to anything else must leave them all as they were (SPEC §2.4: collections under
/// other storage keys are never lost).
@Suite("Domain files with keys equal under String == but spelled otherwise")
struct EquivalentKeysStorageTests {
    let directory = TemporaryDirectory()

    /// Both spellings as storage keys, and as entries of a collection, with a collection to write to.
    static let pythonDomain = """
        {'caf\\u00e9': {'spelling': 'precomposed', 'n': 1}, 'cafe\\u0301': {'spelling': 'decomposed', 'n': 2},
         'prefs': {'\\u00e9': 'pre', 'e\\u0301': 'de', 'count': 1},
         'other': {'count': 1}}
        """

    /// Writes the domain file with Python's plistlib, in `format`.
    func writeWithPython(_ domain: FileDomainStorage, format: String) throws {
        try FileManager.default.createDirectory(atPath: domain.directory, withIntermediateDirectories: true)
        _ = try python("""
            import plistlib
            plistlib.dump(\(Self.pythonDomain), open('\(domain.path)', 'wb'), fmt=plistlib.FMT_\(format))
            """)
    }

    /// What Python reads from the domain file: JSON with sorted keys and code points escaped.
    func pythonView(_ domain: FileDomainStorage) throws -> String {
        String(decoding: try python("""
            import plistlib, json
            print(json.dumps(plistlib.load(open('\(domain.path)', 'rb')), sort_keys=True))
            """), as: UTF8.self)
    }

    /// What Python reads from `domain` after applying `change` to the dictionary it first wrote.
    func pythonExpectation(_ change: String) throws -> String {
        String(decoding: try python("""
            import json
            d = \(Self.pythonDomain)
            \(change)
            print(json.dumps(d, sort_keys=True))
            """), as: UTF8.self)
    }

    func domain() throws -> FileDomainStorage {
        try FileDomainStorage(directory: directory.appending("prefs"), name: "app")
    }

    @Test("A write to another storage key keeps both spellings of a storage key, with their collections", arguments: ["BINARY", "XML"])
    func unrelatedStorageKey(format: String) throws {
        let domain = try domain()
        try writeWithPython(domain, format: format)
        try domain.modify(repairing: .failIfUnreadable) { $0["other"] = .dictionary(["count": .integer(2)]) }
        #expect(try pythonView(domain) == pythonExpectation("d['other']['count'] = 2"))
    }

    @Test("A write to another entry of a collection keeps both spellings of its entries", arguments: ["BINARY", "XML"])
    func unrelatedEntry(format: String) throws {
        let domain = try domain()
        try writeWithPython(domain, format: format)
        try domain.modify(repairing: .failIfUnreadable) { contents in
            guard case .dictionary(var prefs)? = contents["prefs"] else { return }
            prefs["count"] = .integer(2)
            contents["prefs"] = .dictionary(prefs)
        }
        #expect(try pythonView(domain) == pythonExpectation("d['prefs']['count'] = 2"))
    }

    @Test("Later writes, from the cache of the last write and from a fresh read of the file, keep them too")
    func laterWrites() throws {
        let domain = try domain()
        try writeWithPython(domain, format: "BINARY")
        for count in 2 ... 3 {
            try domain.modify(repairing: .failIfUnreadable) { $0["other"] = .dictionary(["count": .integer(count)]) }
        }
        try self.domain().modify(repairing: .failIfUnreadable) { $0["other"] = .dictionary(["count": .integer(4)]) }
        #expect(try pythonView(domain) == pythonExpectation("d['other']['count'] = 4"))
    }

    @Test("A read gives the precomposed spelling; a write to it changes that collection and keeps the other spelling's")
    func winningKey() throws {
        let domain = try domain()
        try writeWithPython(domain, format: "BINARY")
        let contents = try domain.snapshot().contents
        #expect(contents.count == 3)
        #expect(contents["cafe\u{301}"] == .dictionary(["spelling": .string("precomposed"), "n": .integer(1)]))
        #expect(contents.keys.contains { Array($0.unicodeScalars) == Array("caf\u{E9}".unicodeScalars) })
        try domain.modify(repairing: .failIfUnreadable) { $0["café"] = .dictionary(["n": .integer(9)]) }
        #expect(try pythonView(domain) == pythonExpectation("d['caf\\u00e9'] = {'n': 9}"))
    }

    @Test("Removing the key removes both spellings: a removed key never reads back")
    func removal() throws {
        let domain = try domain()
        try writeWithPython(domain, format: "BINARY")
        try domain.modify(repairing: .failIfUnreadable) { $0["café"] = nil }
        #expect(try domain.snapshot().contents["café"] == nil)
        #expect(try pythonView(domain) == pythonExpectation("del d['caf\\u00e9']; del d['cafe\\u0301']"))
    }

    @Test("A write through the UserDefaults API keeps them as well")
    func userDefaultsWrite() throws {
        let domain = try domain()
        try writeWithPython(domain, format: "BINARY")
        let suite = DefaultsSuite(persistentDomain: domain, globalDomain: InMemoryDomainStorage(location: "global (test)"), arguments: [])
        suite.set(["count": 5], forKey: "other")
        #expect(suite.lastError == nil)
        #expect(try pythonView(domain) == pythonExpectation("d['other'] = {'count': 5}"))
    }
}
