import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `prefsctl`, the installable administrator's tool (SPEC §13): its own executable on the code of `harness defaults`.
@Suite("prefsctl, the administrator's tool")
struct PrefsctlTests {
    let sandbox = HarnessSandbox()

    /// The repository's root, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Runs `prefsctl --directory SANDBOX ARGUMENTS` and requires success with nothing on standard error.
    @discardableResult
    func succeed(_ arguments: String..., input: String = "") throws -> HarnessRun {
        let run = try sandbox.prefsctl(["--directory", sandbox.path] + arguments, input: input)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }

    @Test("prefsctl --version prints its name and the version CHANGELOG.md names")
    func version() throws {
        let changelog = try String(contentsOfFile: Self.repository + "/CHANGELOG.md", encoding: .utf8)
        let number = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") }?.split(separator: " ")[1])
        let run = try sandbox.prefsctl(["--version"])
        #expect(run.status == 0)
        #expect(run.output == "prefsctl \(number) (RVS_PersistentPrefs \(number))\n")
    }

    @Test("prefsctl and harness defaults run the same verbs on the same files, each naming itself")
    func sameCodeAsTheAlias() throws {
        try succeed("write", "com.example.app", "com.example.app.preferences", "port", "-int", "8080")
        let viaAlias = try sandbox.defaultsSucceeding(["read", "com.example.app", "com.example.app.preferences", "port"])
        #expect(viaAlias.output == "8080\n")
        #expect(try succeed("read", "com.example.app", "com.example.app.preferences", "port").output == "8080\n")
        #expect(try succeed("--help").output.hasPrefix("usage: prefsctl "))
        #expect(try sandbox.defaultsSucceeding(["--help"]).output.hasPrefix("usage: harness defaults "))
        let missing = try sandbox.prefsctl(["--directory", sandbox.path, "read", "com.example.absent"])
        #expect(missing.status == 1)
        #expect(missing.errors.hasPrefix("prefsctl: Domain com.example.absent does not exist"))
        #expect(missing.errors.contains("`prefsctl domains` lists those that do"))
    }

    @Test("The prefsctl executable links no test support, while the harness does")
    func linksNoTestSupport() throws {
        // A Swift module's symbols carry its mangled name: "11TestSupport" is in every symbol of TestSupport
        // (and "15EtcdTestSupport" of EtcdTestSupport), so the bytes of the executable say which were linked.
        let directory = ChildProcess.buildDirectory
        let prefsctl = try #require(fileBytes(directory + "/prefsctl"))
        let harness = try #require(fileBytes(directory + "/harness"))
        for module in ["11TestSupport", "15EtcdTestSupport"] {
            let marker = Array(module.utf8)
            #expect(Self.contains(harness, marker), "the check cannot see \(module) in the harness")
            #expect(!Self.contains(prefsctl, marker), "prefsctl links \(module)")
        }
    }

    private static func contains(_ bytes: [UInt8], _ marker: [UInt8]) -> Bool {
        Data(bytes).range(of: Data(marker)) != nil
    }
}
