import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An app's class with constrained entries, whose schema the tests install as the app's package would.
final class ServiceSettings: RVS_PersistentPrefs {
    @Entry("port", range: 1...65535, description: "The port the service listens on") var port = 8080
    @Entry("level", allowed: ["debug", "info", "warning", "error"]) var level = "info"
    @Entry("enabled") var enabled = true
    @Entry("ratio", range: 0.0...1.0) var ratio = 0.5
    @Entry("name") var name = "service"
    @Entry("hosts") var hosts: [String] = []
    @Entry("lastRun") var lastRun: Date? = nil

    /// The schema file's bytes, from an instance over a suite in memory.
    static func schemaData(key: String = "settings") throws -> Data {
        try ServiceSettings(key: key, suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])).schema.propertyListData()
    }
}

/// An app's class whose entries were renamed (`formerly:`), one of them retyped too (`upgrading:`).
final class RenamedServiceSettings: RVS_PersistentPrefs {
    @Entry("volume", formerly: ["vol"]) var volume = 0.5
    @Entry("columns", formerly: ["compact"], upgrading: { (compact: Bool) in compact ? 1 : 3 }) var columns = 2

    static func schemaData() throws -> Data {
        try RenamedServiceSettings(key: "settings", suite: DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])).schema.propertyListData()
    }
}

/// `prefsctl` with an app's installed schema (SPEC §14): list-keys, describe, range, typed and checked writes,
/// and verify, each run as a child process as an administrator runs it.
@Suite("prefsctl reads the app's installed schema")
struct PrefsctlSchemaTests {
    let sandbox = HarnessSandbox()

    /// The first data directory of the sandbox's `XDG_DATA_DIRS`.
    var dataDirectory: String { sandbox.fallback.appending("share") }

    /// Installs `data` as the schema of `domain` under `directory` (the sandbox's data directory by default).
    func install(_ data: Data, for domain: String = "com.example.app", in directory: String? = nil) throws -> String {
        let schemas = (directory ?? dataDirectory) + "/RVS_PersistentPrefs/schemas"
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        let path = schemas + "/" + domain + ".plist"
        writeFile(path, Array(data))
        return path
    }

    /// Runs `prefsctl --directory SANDBOX ARGUMENTS` and requires success with nothing on standard error.
    @discardableResult
    func succeed(_ arguments: String...) throws -> HarnessRun {
        let run = try sandbox.prefsctl(["--directory", sandbox.path] + arguments)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }

    /// Runs `prefsctl --directory SANDBOX ARGUMENTS`, which must fail with exit status 1 and one line on
    /// standard error; returns that line.
    func fail(_ arguments: String...) throws -> String {
        let run = try sandbox.prefsctl(["--directory", sandbox.path] + arguments)
        #expect(run.status == 1, "prefsctl \(arguments.joined(separator: " ")): \(run.output) \(run.errors)")
        #expect(run.errorLines.count == 1, "\(run.errors)")
        return run.errors
    }

    /// The stored collection `settings` of com.example.app.
    func stored() throws -> [String: PropertyListValue] {
        try sandbox.domain("com.example.app")["settings"]?.dictionaryValue ?? [:]
    }

    @Test("list-keys lists each entry of the installed schema with its type and default, and as JSON with --json")
    func listKeys() throws {
        _ = try install(ServiceSettings.schemaData())
        #expect(try succeed("list-keys", "com.example.app", "settings").output == """
            enabled  boolean  1
            hosts    array    ()
            lastRun  -        -
            level    string   info
            name     string   service
            port     integer  8080
            ratio    real     0.5

            """)
        let json = try JSONSerialization.jsonObject(with: Data(try succeed("list-keys", "com.example.app", "settings", "--json").output.utf8)) as? [[String: Any]]
        let port = try #require(json?.first { $0["name"] as? String == "port" })
        #expect(port["type"] as? String == "integer" && port["default"] as? Int == 8080)
        #expect(json?.map { $0["name"] as? String ?? "" } == ["enabled", "hosts", "lastRun", "level", "name", "port", "ratio"])
    }

    @Test("describe gives an entry's type, default, constraint, description and schema file; range its allowed values; both with --json")
    func describeAndRange() throws {
        let path = try install(ServiceSettings.schemaData())
        #expect(try succeed("describe", "com.example.app", "settings", "port").output == """
            Entry:       settings port of com.example.app
            Type:        integer
            Default:     8080
            Constraint:  range 1 65535
            Description: The port the service listens on
            Schema:      \(path)

            """)
        #expect(try succeed("range", "com.example.app", "settings", "port").output == "range 1 65535\n")
        #expect(try succeed("range", "com.example.app", "settings", "level").output == "allowed debug info warning error\n")
        #expect(try succeed("range", "com.example.app", "settings", "name").output == "any string\n")
        let ratio = try JSONSerialization.jsonObject(with: Data(try succeed("range", "com.example.app", "settings", "ratio", "--json").output.utf8)) as? [String: Any]
        #expect(ratio?["range"] as? [Int] == [0, 1] && ratio?["type"] as? String == "real" && ratio?.count == 2)
        let described = try JSONSerialization.jsonObject(with: Data(try succeed("describe", "com.example.app", "settings", "level", "--json").output.utf8)) as? [String: Any]
        #expect(described?["allowed"] as? [String] == ["debug", "info", "warning", "error"])
        #expect(described?["default"] as? String == "info" && described?["type"] as? String == "string" && described?["schema"] as? String == path)
    }

    @Test("The first directory of XDG_DATA_DIRS holding the domain's schema wins; relative directories are skipped")
    func firstDataDirectoryWins() throws {
        let first = sandbox.temporary.appending("first"), second = sandbox.temporary.appending("second")
        let winner = try install(ServiceSettings.schemaData(key: "first"), in: first)
        _ = try install(ServiceSettings.schemaData(key: "second"), in: second)
        let environment = ["XDG_DATA_DIRS": "relative/share:\(first):\(second)"]
        let run = try sandbox.prefsctl(["describe", "com.example.app", "first", "port"], environment: environment)
        #expect(run.status == 0 && run.output.contains("Schema:      \(winner)\n"), "\(run.errors)")
        #expect(try sandbox.prefsctl(["list-keys", "com.example.app", "second"], environment: environment).status == 1)
        try FileManager.default.removeItem(atPath: winner)
        let fallback = try sandbox.prefsctl(["list-keys", "com.example.app", "second"], environment: environment)
        #expect(fallback.status == 0 && fallback.output.hasPrefix("enabled "), "\(fallback.errors)")
    }

    @Test("Without a schema, or for a storage key or entry it does not describe, list-keys, describe and range fail with exit 1 saying what is missing")
    func clearErrors() throws {
        let missing = try fail("list-keys", "com.example.app", "settings")
        #expect(missing.hasPrefix("prefsctl: no schema is installed for the domain com.example.app: looked for com.example.app.plist in \(dataDirectory)/RVS_PersistentPrefs/schemas"))
        _ = try install(ServiceSettings.schemaData())
        #expect(try fail("describe", "com.example.app", "other", "port").contains("describes no storage key other; it describes settings"))
        #expect(try fail("range", "com.example.app", "settings", "colour").contains("has no entry colour in settings; its entries are enabled, hosts, lastRun, level, name, port, ratio"))
        writeFile(dataDirectory + "/RVS_PersistentPrefs/schemas/com.example.broken.plist", Array("garbage".utf8))
        #expect(try fail("list-keys", "com.example.broken", "settings").contains("com.example.broken.plist is not a property list"))
    }

    @Test("write types the value from the schema: 7777 an integer, yes/no/true/false/1/0 a boolean, 0.5 a real, text a string; without a schema, as before")
    func typedWrite() throws {
        try succeed("write", "com.example.app", "settings", "port", "7777")
        #expect(try stored()["port"] == .string("7777"), "without a schema, the word is stored as defaults stores it")
        _ = try install(ServiceSettings.schemaData())
        try succeed("write", "com.example.app", "settings", "port", "7777")
        #expect(try stored()["port"] == .integer(7777))
        for (word, value) in [("yes", true), ("no", false), ("TRUE", true), ("false", false), ("1", true), ("0", false)] {
            try succeed("write", "com.example.app", "settings", "enabled", word)
            #expect(try stored()["enabled"] == .bool(value), "enabled \(word)")
        }
        try succeed("write", "com.example.app", "settings", "ratio", "0.5")
        #expect(try stored()["ratio"] == .real(0.5))
        try succeed("write", "com.example.app", "settings", "ratio", "1")
        #expect(try stored()["ratio"] == .real(1))
        try succeed("write", "com.example.app", "settings", "name", "1234")
        #expect(try stored()["name"] == .string("1234"))
        try succeed("write", "com.example.app", "settings", "port", "-int", "443")
        try succeed("write", "com.example.app", "settings", "hosts", "-array", "a", "b")
        #expect(try stored()["port"] == .integer(443) && stored()["hosts"] == .array([.string("a"), .string("b")]))
    }

    @Test("write refuses what the schema refuses (outside the range, not allowed, wrong type, unknown entry, a contradicting type flag), naming entry and constraint, exit 1, nothing written")
    func refusedWrites() throws {
        _ = try install(ServiceSettings.schemaData())
        try succeed("write", "com.example.app", "settings", "port", "8081")
        let before = sandbox.files()
        let refusals: [([String], String)] = [
            (["port", "70000"], "settings port: it must be from 1 to 65535"),
            (["ratio", "2"], "settings ratio: it must be from 0 to 1"),
            (["level", "verbose"], "settings level: it must be one of \"debug\", \"info\", \"warning\", \"error\""),
            (["port", "many"], "settings port: it must be a whole number, not"),
            (["enabled", "maybe"], "settings enabled: it must be true, false, yes, no, 1 or 0"),
            (["colour", "blue"], "has no entry colour in settings"),
            (["port", "-string", "8080"], "settings port: it is an integer, and -string gives a string"),
            (["ratio", "-int", "1"], "settings ratio: it is a real, and -int gives an integer"),
            (["name", "-array", "a"], "settings name: it is a string, and -array gives an array"),
            (["port", "-int", "0"], "settings port: it must be from 1 to 65535"),
        ]
        for (words, reason) in refusals {
            let arguments = ["--directory", sandbox.path, "write", "com.example.app", "settings"] + words
            let run = try sandbox.prefsctl(arguments)
            #expect(run.status == 1, "write \(words): \(run.errors)")
            #expect(run.errors.contains(reason), "write \(words): \(run.errors)")
            #expect(run.errors.hasSuffix("nothing was written\n") || run.errors.contains("has no entry"), "write \(words): \(run.errors)")
        }
        // The whole collection and the whole domain are judged too.
        #expect(try fail("write", "com.example.app", "settings", "-dict-add", "level", "loud").contains("settings level: it must be one of"))
        #expect(try fail("write", "com.example.app", "{settings = {level = loud;};}").contains("settings level: it must be one of"))
        #expect(try fail("write", "com.example.app", "{settings = {port = 0;};}").contains("settings port: it must be an integer, not a string"))
        #expect(try fail("write", "com.example.app", "settings", "5").contains("settings: it must be a dictionary of entries"))
        #expect(sandbox.files() == before, "a refused write changed a file")
        try succeed("write", "com.example.app", "settings", "level", "debug")
        #expect(try stored()["level"] == .string("debug"))
    }

    @Test("import and edit refuse a domain the schema refuses, naming the entry and constraint, and write nothing; a fitting one is written")
    func importAndEditAreChecked() throws {
        _ = try install(ServiceSettings.schemaData())
        try succeed("write", "com.example.app", "settings", "port", "8081")
        let before = sandbox.files()
        let bad = sandbox.temporary.appending("bad.plist")
        writeFile(bad, Array(try PropertyListValue.dictionary(["settings": .dictionary(["ratio": .real(1.5)])]).xmlPropertyListData()))
        #expect(try fail("import", "com.example.app", bad).contains("settings ratio: it must be from 0 to 1; nothing was written"))
        // An editor that saves a port out of range: refused, and the edited text kept for the user.
        let editor = sandbox.temporary.appending("editor.sh")
        writeFile(editor, Array("#!/bin/sh\nsed -i 's/8081/0/' \"$1\"\n".utf8))
        chmod(editor, 0o700)
        let edited = try sandbox.prefsctl(["--directory", sandbox.path, "edit", "com.example.app", "settings"], environment: ["EDITOR": editor, "VISUAL": ""])
        #expect(edited.status == 1 && edited.errors.contains("settings port: it must be from 1 to 65535"), "\(edited.errors)")
        #expect(sandbox.files() == before, "a refused import or edit changed a file")
        let good = sandbox.temporary.appending("good.plist")
        writeFile(good, Array(try PropertyListValue.dictionary(["settings": .dictionary(["ratio": .real(0.25)])]).xmlPropertyListData()))
        try succeed("import", "com.example.app", good)
        #expect(try stored() == ["ratio": .real(0.25)])
        // A collection renamed into the described storage key is judged as an import is, -f or not.
        try succeed("write", "com.example.app", "scratch", "-dict", "port", "-int", "70000")
        let beforeRename = sandbox.files()
        #expect(try fail("rename", "-f", "com.example.app", "scratch", "settings").contains("settings port: it must be from 1 to 65535"))
        #expect(sandbox.files() == beforeRename, "a refused rename changed a file")
        try succeed("write", "com.example.app", "fitting", "-dict", "port", "-int", "8082")
        try succeed("rename", "-f", "com.example.app", "fitting", "settings")
        #expect(try stored() == ["port": .integer(8082)])
    }

    @Test("verify --as system checks the file against the domain's installed schema: unknown entries, wrong types and broken constraints exit 1 with the reason")
    func verifyAgainstSchema() throws {
        let candidate = sandbox.temporary.appending("com.example.app.plist")
        func verify(_ settings: [String: PropertyListValue]) throws -> HarnessRun {
            let data = try PropertyListValue.dictionary(["settings": .dictionary(settings), "other": .string("x")]).xmlPropertyListData()
            writeFile(candidate, Array(data))
            chmod(candidate, 0o644)
            return try sandbox.prefsctl(["verify", candidate, "--as", "system"])
        }
        let unchecked = try verify(["port": .integer(0)])
        #expect(unchecked.status == 0, "without a schema, verify judges the form only: \(unchecked.errors)")
        _ = try install(ServiceSettings.schemaData())
        let good = try verify(["port": .integer(443), "level": .string("warning"), "ratio": .integer(1)])
        #expect(good.status == 0 && good.output.contains("a good system file"), "\(good.errors)")
        let bad = try verify(["port": .integer(0), "level": .string("loud"), "enabled": .string("yes"), "colour": .string("blue")])
        #expect(bad.status == 1)
        #expect(bad.errors.contains("does not fit the schema of com.example.app (\(dataDirectory)/RVS_PersistentPrefs/schemas/com.example.app.plist)"), "\(bad.errors)")
        for reason in ["settings colour: the app has no such entry", "settings enabled: it must be a boolean, not a string",
                       "settings level: it must be one of", "settings port: it must be from 1 to 65535"] {
            #expect(bad.errors.contains(reason), "\(reason): \(bad.errors)")
        }
    }

    @Test("The schema lists each entry's former names; verify accepts a system file written for the previous release under them, and write stores them, as the app reads and allows them")
    func formerNamesAreTheApps() throws {
        let data = try RenamedServiceSettings.schemaData()
        let schema = try PropertyListValue(propertyListData: data)
        #expect(schema.dictionaryValue?["settings"]?.dictionaryValue?["volume"]?.dictionaryValue?["formerly"] == .array([.string("vol")]))
        _ = try install(data)
        let candidate = sandbox.temporary.appending("com.example.app.plist")
        writeFile(candidate, Array(try PropertyListValue.dictionary(["settings": .dictionary(["vol": .real(0.3), "compact": .bool(true)])]).xmlPropertyListData()))
        chmod(candidate, 0o644)
        let verified = try sandbox.prefsctl(["verify", candidate, "--as", "system"])
        #expect(verified.status == 0 && verified.output.contains("a good system file"), "\(verified.output) \(verified.errors)")
        try succeed("write", "com.example.app", "settings", "vol", "-float", "0.4")
        #expect(try stored() == ["vol": .real(0.4)])
        // The app reads it as its renamed entry.
        let app = RenamedServiceSettings(key: "settings", suite: DefaultsSuite(persistentDomain: try FileDomainStorage(directory: sandbox.path, name: "com.example.app"), arguments: []))
        #expect(app.volume == 0.4)
        #expect(try fail("write", "com.example.app", "settings", "loudness", "1").contains("has no entry loudness"))
    }

    @Test("harness bindings --schema prints the demo's schema; installed, prefsctl lists, describes, types a write and refuses volume 2 in the demo's domain")
    func bindingsSchemaInstalled() throws {
        let printed = try sandbox.run(["bindings", "--schema"])
        #expect(printed.status == 0 && printed.output.hasPrefix("<?xml"), "\(printed.errors)")
        _ = try install(Data(printed.output.utf8), for: "com.example.harness")
        #expect(try succeed("list-keys", "com.example.harness", "Bindings").output == """
            darkMode     boolean  0
            launchCount  integer  0
            userName     string   Anonymous
            volume       real     0.5

            """)
        #expect(try succeed("describe", "com.example.harness", "Bindings", "volume").output.contains("Constraint:  range 0 1\nDescription: Playback volume, from 0 (silent) to 1 (full)\n"))
        try succeed("write", "com.example.harness", "Bindings", "launchCount", "7")
        try succeed("write", "com.example.harness", "Bindings", "volume", "0.8")
        #expect(try sandbox.domain("com.example.harness")["Bindings"] == .dictionary(["launchCount": .integer(7), "volume": .real(0.8)]))
        #expect(try fail("write", "com.example.harness", "Bindings", "volume", "2").contains("Bindings volume: it must be from 0 to 1; nothing was written"))
        #expect(try sandbox.domain("com.example.harness")["Bindings"]?.dictionaryValue?["volume"] == .real(0.8))
        // And the demo's own class reads what prefsctl wrote.
        let shown = try sandbox.run(["bindings", "--directory", sandbox.path], input: "show\n")
        #expect(shown.output.contains("launchCount") && shown.output.contains("7"), "\(shown.output)")
    }

    @Test("Completion offers the domains with an installed schema, their storage keys and their entries, before anything is stored")
    func completionFromSchema() throws {
        _ = try install(ServiceSettings.schemaData())
        func complete(_ words: String...) throws -> String { try sandbox.prefsctl(["__complete", "--directory", sandbox.path] + words).output }
        #expect(try complete("describe", "com.example.a") == "com.example.app\n")
        #expect(try complete("describe", "com.example.app", "") == "settings\n")
        #expect(try complete("range", "com.example.app", "settings", "r") == "ratio\n")
        #expect(try complete("write", "com.example.app", "settings", "le") == "level\n")
        #expect(try complete("li") == "list-keys\n")
    }
}
