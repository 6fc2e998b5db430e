import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `prefsctl`'s command line as other tools parse theirs (SPEC §13, conventional parsing).
@Suite("prefsctl parses its command line conventionally")
struct PrefsctlParsingTests {
    let sandbox = HarnessSandbox()
    static let domain = "com.example.app"
    static let key = "com.example.app.preferences"

    @discardableResult
    func succeed(_ arguments: String...) throws -> HarnessRun {
        let run = try sandbox.prefsctl(["--directory", sandbox.path] + arguments)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }

    func run(_ arguments: String...) throws -> HarnessRun {
        try sandbox.prefsctl(["--directory", sandbox.path] + arguments)
    }

    @Test("Options may come before the verb, after it, or among the operands, with the same result")
    func optionsAnywhere() throws {
        try succeed("write", Self.domain, Self.key, "port", "-int", "8080")
        let after = try succeed("read", Self.domain, "--json").output
        #expect(after.contains("\"port\": 8080"))
        #expect(try succeed("--json", "read", Self.domain).output == after)
        #expect(try succeed("read", "--json", Self.domain).output == after)
        // A value-taking option before the verb: its value is not taken for the verb.
        let exported = try succeed("--format", "json", "export", Self.domain, "-").output
        #expect(try succeed("export", Self.domain, "-", "--format", "json").output == exported)
        let viaDirectoryLast = try sandbox.prefsctl(["read", Self.domain, Self.key, "port", "--directory", sandbox.path])
        #expect(viaDirectoryLast.status == 0)
        #expect(viaDirectoryLast.output == "8080\n")
    }

    @Test("An unknown option is an error naming it, exit status 2, and nothing is read as a name or changed",
          arguments: [["read", domain, "--jsn"], ["read", "--show-origin", domain], ["--bogus", "domains"],
                      ["write", domain, key, "port", "7", "--dryrun"], ["find", "x", "--color"], ["delete", domain, "-x"]])
    func unknownOption(_ arguments: [String]) throws {
        try succeed("write", Self.domain, Self.key, "port", "-int", "8080")
        let before = sandbox.files()
        let result = try sandbox.prefsctl(["--directory", sandbox.path] + arguments)
        let option = try #require(arguments.first { $0.hasPrefix("-") })
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.errorLines.count == 1)
        #expect(result.errors.hasPrefix("prefsctl: unknown option '\(option)'"), "\(result.errors)")
        #expect(sandbox.files() == before)
    }

    @Test("Words that start with - but are operands still work: -g, - for standard output, negative numbers, and anything after --")
    func dashedOperands() throws {
        try succeed("write", Self.domain, Self.key, "-int", "-5")
        #expect(try succeed("read", Self.domain, Self.key).output == "-5\n")
        try succeed("write", "-g", "shared", "yes")
        #expect(try succeed("read", "-g", "shared").output == "yes\n")
        #expect(try succeed("export", Self.domain, "-").output.contains("<integer>-5</integer>"))
        try succeed("write", Self.domain, "flag", "--", "-string", "--verbose")
        #expect(try succeed("read", Self.domain, "flag").output == "--verbose\n")
    }

    @Test("A collection flag nested in -dict or -array is refused (exit 2, nothing written), and property-list text nests")
    func nestedCollections() throws {
        let nested = try run("write", Self.domain, Self.key, "-dict", "a", "-int", "1", "hosts", "-array", "x", "y")
        #expect(nested.status == 2)
        #expect(nested.errors.contains("-array cannot be nested"))
        #expect(sandbox.files().isEmpty)
        let inArray = try run("write", Self.domain, Self.key, "-array", "a", "-dict", "k", "v")
        #expect(inArray.status == 2)
        let mistyped = try run("write", Self.domain, Self.key, "-array", "a", "-integer5")
        #expect(mistyped.status == 2)
        #expect(mistyped.errors.contains("unknown type '-integer5'"))
        #expect(sandbox.files().isEmpty)
        try succeed("write", Self.domain, Self.key, "-dict", "a", "-int", "1", "hosts", "(x, y)")
        #expect(try sandbox.domain(Self.domain)[Self.key] == .dictionary(["a": .integer(1), "hosts": .array([.string("x"), .string("y")])]))
    }

    @Test("find exits 1 when nothing matches and 0 when something does")
    func findStatus() throws {
        try succeed("write", Self.domain, Self.key, "appearance", "dark")
        let none = try run("find", "absent")
        #expect(none.status == 1)
        #expect(none.output.isEmpty)
        #expect(none.errors == "prefsctl: no domain, key, nor value containing 'absent'\n")
        #expect(try succeed("find", "dark").output.hasPrefix("Found 1 keys in domain 'com.example.app'"))
    }

    @Test("--json is the one spelling of JSON for every verb whose output is data; --format json stays an alias of export")
    func jsonEverywhere() throws {
        try succeed("write", Self.domain, Self.key, "port", "-int", "8080")
        #expect(try succeed("domains", "--json").output == "[\n  {\n    \"layers\": [],\n    \"name\": \"com.example.app\"\n  }\n]\n")
        #expect(try succeed("read-type", Self.domain, Self.key, "port", "--json").output == "\"integer\"\n")
        #expect(try succeed("keys", Self.domain, Self.key, "--json").output == "[\n  \"port\"\n]\n")
        #expect(try succeed("find", "8080", "--json").output.contains("\"com.example.app\": {"))
        let json = try succeed("export", Self.domain, "-", "--json").output
        #expect(json.contains("\"port\": 8080"))
        #expect(try succeed("export", Self.domain, "-", "--format", "json").output == json)
        #expect(try run("export", Self.domain, "-", "--json", "--format", "xml").status == 2)
    }
}
