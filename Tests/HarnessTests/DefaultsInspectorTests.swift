import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("harness defaults, the inspector of domain files")
struct HarnessDefaultsInspectorTests {
    let sandbox = HarnessSandbox()

    /// Runs `harness defaults --directory SANDBOX ARGUMENTS` and requires it to succeed silently on standard error.
    @discardableResult
    func succeed(_ arguments: String..., input: String = "") throws -> HarnessRun {
        try sandbox.defaultsSucceeding(arguments, input: input)
    }

    @Test("write stores each typed form as that type, and plistlib reads the file")
    func writeStoresTypedValues() throws {
        try succeed("write", "app", "text", "-string", "12")
        try succeed("write", "app", "count", "-int", "-9223372036854775808")
        try succeed("write", "app", "ratio", "-float", "0.25")
        try succeed("write", "app", "enabled", "-bool", "YES")
        try succeed("write", "app", "disabled", "-boolean", "false")
        try succeed("write", "app", "when", "-date", "2024-05-01 12:30:00 +0000")
        try succeed("write", "app", "bytes", "-data", "0a0B0c")
        try succeed("write", "app", "list", "-array", "a", "-int", "2", "-bool", "no")
        try succeed("write", "app", "table", "-dict", "name", "Ada", "age", "-int", "36")
        let contents = try sandbox.domain("app")
        #expect(contents["text"] == .string("12"))
        #expect(contents["count"] == .integer(Int.min))
        #expect(contents["ratio"] == .real(0.25))
        #expect(contents["enabled"] == .bool(true))
        #expect(contents["disabled"] == .bool(false))
        #expect(contents["when"] == .date(Date(timeIntervalSince1970: 1_714_566_600)))
        #expect(contents["bytes"] == .data(Data([0x0a, 0x0b, 0x0c])))
        #expect(contents["list"] == .array([.string("a"), .integer(2), .bool(false)]))
        #expect(contents["table"] == .dictionary(["name": .string("Ada"), "age": .integer(36)]))

        let seen = try python("""
            import plistlib, sys
            d = plistlib.load(open('\(sandbox.path)/app.plist', 'rb'))
            print(repr((d['count'], d['enabled'], d['list'], d['table']['age'], d['bytes'])))
            """)
        #expect(String(decoding: seen, as: UTF8.self) == "(-9223372036854775808, True, ['a', 2, False], 36, b'\\n\\x0b\\x0c')\n")
    }

    @Test("write takes property-list text as defaults does, and any other text as a string")
    func writeParsesPropertyListText() throws {
        try succeed("write", "app", "settings", "{appearance = dark; sizes = (small, large);}")
        try succeed("write", "app", "greeting", "hello world")
        try succeed("write", "app", "word", "dark")
        let contents = try sandbox.domain("app")
        #expect(contents["settings"] == .dictionary(["appearance": .string("dark"), "sizes": .array([.string("small"), .string("large")])]))
        #expect(contents["greeting"] == .string("hello world"))
        #expect(contents["word"] == .string("dark"))
    }

    @Test("write DOMAIN PLIST replaces the whole domain")
    func writeReplacesWholeDomain() throws {
        try succeed("write", "app", "old", "value")
        try succeed("write", "app", "{fresh = yes;}")
        #expect(try sandbox.domain("app") == ["fresh": .string("yes")])
    }

    @Test("-array-add and -dict-add extend what is stored instead of replacing it")
    func addingExtendsStoredValues() throws {
        try succeed("write", "app", "list", "-array", "a")
        try succeed("write", "app", "list", "-array-add", "b", "-int", "3")
        try succeed("write", "app", "table", "-dict", "x", "1")
        try succeed("write", "app", "table", "-dict-add", "y", "-int", "2")
        let contents = try sandbox.domain("app")
        #expect(contents["list"] == .array([.string("a"), .string("b"), .integer(3)]))
        #expect(contents["table"] == .dictionary(["x": .string("1"), "y": .integer(2)]))
    }

    @Test("read prints a domain, a key, or every domain in the OpenStep form defaults prints")
    func readPrintsOpenStepText() throws {
        try succeed("write", "app", "appearance", "dark")
        try succeed("write", "app", "launchCount", "-int", "5")
        try succeed("write", "app", "on", "-bool", "yes")
        try succeed("write", "app", "title", "-string", "My \"app\"")
        try succeed("write", "app", "recent", "-array", "a b", "c")
        try succeed("write", "-g", "AppleLanguages", "-array", "en")

        #expect(try succeed("read", "app").output == """
            {
                appearance = dark;
                launchCount = 5;
                on = 1;
                recent = (
                    "a b",
                    c
                );
                title = "My \\"app\\"";
            }

            """)
        #expect(try succeed("read", "app", "title").output == "My \"app\"\n")
        #expect(try succeed("read", "app", "launchCount").output == "5\n")
        #expect(try succeed("read-type", "app", "on").output == "Type is boolean\n")
        #expect(try succeed("read-type", "app", "recent").output == "Type is array\n")

        let everything = try succeed("read").output
        #expect(everything.hasPrefix("{\n    NSGlobalDomain = {\n        AppleLanguages = (\n            en\n        );\n    };\n    app = {\n"))
    }

    @Test("domains lists the domain files of the directory, not the global domain or other files")
    func domainsListsDomainFiles() throws {
        try succeed("write", "com.example.b", "k", "v")
        try succeed("write", "com.example.a", "k", "v")
        try succeed("write", "-g", "k", "v")
        writeFile(sandbox.directory.appending("notes.txt"), Array("not a domain".utf8))
        #expect(try succeed("domains").output == "com.example.a, com.example.b\n")
        #expect(FileManager.default.fileExists(atPath: sandbox.directory.appending(".GlobalPreferences.plist")))
    }

    @Test("delete removes one key, or every key of a domain, keeping the others' collections")
    func deleteRemovesKeys() throws {
        try succeed("write", "app", "a", "1")
        try succeed("write", "app", "b", "2")
        try succeed("delete", "app", "a")
        #expect(try sandbox.domain("app") == ["b": .string("2")])
        try succeed("delete", "app")
        #expect(try sandbox.domain("app") == [:])
    }

    @Test("export writes an XML property list that plistlib reads, to a file or standard output")
    func exportWritesXML() throws {
        try succeed("write", "app", "count", "-int", "7")
        try succeed("write", "app", "nested", "-dict", "on", "-bool", "yes")
        let printed = try succeed("export", "app", "-").output
        #expect(printed.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        let parsed = try python("import plistlib, sys; d = plistlib.loads(sys.stdin.buffer.read()); print(repr((d['count'], d['nested'])))", input: Array(printed.utf8))
        #expect(String(decoding: parsed, as: UTF8.self) == "(7, {'on': True})\n")

        let exportPath = sandbox.temporary.appending("app.xml")
        try succeed("export", "app", exportPath)
        #expect(fileBytes(exportPath) == Array(printed.utf8))
    }

    @Test("import replaces a domain's contents with a binary or XML property list, from a file or standard input")
    func importReplacesContents() throws {
        try succeed("write", "app", "stale", "value")
        let binaryPath = sandbox.temporary.appending("import.plist")
        _ = try python("import plistlib; plistlib.dump({'a': 1, 'b': [True, 2.5], 'c': {'d': b'xy'}}, open('\(binaryPath)', 'wb'), fmt=plistlib.FMT_BINARY)")
        try succeed("import", "app", binaryPath)
        #expect(try sandbox.domain("app") == [
            "a": .integer(1), "b": .array([.bool(true), .real(2.5)]), "c": .dictionary(["d": .data(Data("xy".utf8))]),
        ])

        let xml = String(decoding: try python("import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({'fromStdin': 'yes'}))"), as: UTF8.self)
        try succeed("import", "other", "-", input: xml)
        #expect(try sandbox.domain("other") == ["fromStdin": .string("yes")])
    }

    @Test("-g reads and writes the global domain, .GlobalPreferences.plist")
    func globalDomainFlag() throws {
        try succeed("write", "-g", "AppleLocale", "en_GB")
        #expect(try sandbox.domain(".GlobalPreferences") == ["AppleLocale": .string("en_GB")])
        #expect(try succeed("read", "NSGlobalDomain", "AppleLocale").output == "en_GB\n")
    }

    /// One bad command: what it is, and the arguments after `defaults --directory SANDBOX`.
    struct BadInput: CustomTestStringConvertible, Sendable {
        let what: String
        let arguments: [String]
        var testDescription: String { what }
    }

    static let badInputs: [BadInput] = [
        BadInput(what: "no verb", arguments: []),
        BadInput(what: "an unknown verb", arguments: ["frobnicate", "app"]),
        BadInput(what: "malformed property-list text", arguments: ["write", "app", "key", "{appearance = dark"]),
        BadInput(what: "a malformed integer", arguments: ["write", "app", "key", "-int", "twelve"]),
        BadInput(what: "a malformed Boolean", arguments: ["write", "app", "key", "-bool", "maybe"]),
        BadInput(what: "odd hex digits", arguments: ["write", "app", "key", "-data", "abc"]),
        BadInput(what: "an unknown type", arguments: ["write", "app", "key", "-number", "1"]),
        BadInput(what: "a domain name with a slash", arguments: ["write", "../escape", "key", "value"]),
        BadInput(what: "reading a missing domain", arguments: ["read", "com.example.missing"]),
        BadInput(what: "reading a missing key", arguments: ["read", "app", "missing"]),
        BadInput(what: "deleting a missing domain", arguments: ["delete", "com.example.missing"]),
        BadInput(what: "deleting a missing key", arguments: ["delete", "app", "missing"]),
        BadInput(what: "exporting a missing domain", arguments: ["export", "com.example.missing", "-"]),
        BadInput(what: "importing a file that does not exist", arguments: ["import", "app", "/nonexistent/file.plist"]),
        BadInput(what: "importing a file that is not a property list", arguments: ["import", "app", "NOT-A-PLIST"]),
        BadInput(what: "importing a property list whose root is not a dictionary", arguments: ["import", "app", "ARRAY-ROOT"]),
        BadInput(what: "adding to a value that is not an array", arguments: ["write", "app", "name", "-array-add", "x"]),
        BadInput(what: "too many values", arguments: ["write", "app", "key", "-string", "one", "two"]),
    ]

    @Test("Bad usage and bad input print one line on standard error, exit non-zero, and change nothing on disk", arguments: badInputs)
    func badInputChangesNothing(_ bad: BadInput) throws {
        try succeed("write", "app", "name", "Ada")
        let notAPlist = sandbox.temporary.appending("not-a-plist.txt")
        writeFile(notAPlist, Array("appearance = dark".utf8))
        let arrayRoot = sandbox.temporary.appending("array-root.plist")
        writeFile(arrayRoot, Array(try PropertyListValue.array([.string("x")]).xmlPropertyListData()))
        let arguments = bad.arguments.map { $0 == "NOT-A-PLIST" ? notAPlist : $0 == "ARRAY-ROOT" ? arrayRoot : $0 }
        let before = sandbox.files()

        let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments)
        #expect(run.status != 0)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.errorLines.first?.hasPrefix("harness defaults: ") == true)
        #expect(run.output.isEmpty)
        #expect(sandbox.files() == before)
    }

    @Test("An unreadable domain file is reported with its path, and a write leaves it byte for byte")
    func unreadableDomainIsLeftAlone() throws {
        try succeed("write", "app", "name", "Ada")
        let path = sandbox.directory.appending("app.plist")
        writeFile(path, Array("garbage, not a property list".utf8))
        let before = sandbox.files()
        for arguments in [["read", "app"], ["write", "app", "name", "Bob"], ["delete", "app", "name"]] {
            let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments)
            #expect(run.status == 1)
            #expect(run.errorLines == ["harness defaults: Unreadable domain file \(path): not a property list; replace it with `harness defaults import DOMAIN FILE` (which moves the unreadable file aside), or see \"Repairing deliberately\" in Errors and Recovery"])
        }
        #expect(sandbox.files() == before)
    }
}
