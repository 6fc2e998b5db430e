import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("The harness command line: subcommands, help and usage errors")
struct HarnessCommandLineTests {
    let sandbox = HarnessSandbox()

    static let subcommands = ["tour", "settings-bridge", "bindings", "share", "defaults", "bench", "completion"]

    @Test("Every subcommand answers --help with its usage on standard output, exit status 0, writing nothing", arguments: subcommands)
    func everySubcommandHasHelp(_ subcommand: String) throws {
        let run = try sandbox.run([subcommand, "--help"])
        #expect(run.status == 0)
        #expect(run.errors.isEmpty)
        #expect(run.output.hasPrefix("usage: harness "))
        #expect(try sandbox.run(["help", subcommand]).output == run.output)
        #expect(sandbox.files().isEmpty)
        #expect(sandbox.fallback.contents().isEmpty)
        #expect(sandbox.temporary.contents().isEmpty)
    }

    @Test("harness --help lists every subcommand with a summary")
    func globalHelpListsSubcommands() throws {
        let run = try sandbox.run(["--help"])
        #expect(run.status == 0)
        for subcommand in Self.subcommands {
            #expect(run.lines.contains { $0.hasPrefix("  \(subcommand) ") }, "\(subcommand) is not listed")
        }
    }

    @Test("Bad usage prints one line on standard error, exits non-zero and creates nothing", arguments: [
        ["frobnicate"],
        ["help", "frobnicate"],
        ["--directory"],
        ["tour", "extra"],
        ["bindings", "extra"],
        ["settings-bridge", "extra"],
        ["share", "--role", "tablet"],
        ["share", "--timeout", "soon", "--role", "helper"],
        ["defaults", "frobnicate"],
        ["completion", "fish"],
        ["completion"],
    ])
    func badUsageIsOneLine(_ arguments: [String]) throws {
        let run = try sandbox.run(arguments)
        #expect(run.status == 2)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.errorLines.first?.hasPrefix("harness") == true)
        #expect(run.output.isEmpty)
        #expect(sandbox.files().isEmpty)
        #expect(sandbox.fallback.contents().isEmpty)
        #expect(sandbox.temporary.contents().isEmpty)
    }

    @Test("--directory may come before or after the subcommand's name")
    func directoryOptionAnywhere() throws {
        #expect(try sandbox.run(["--directory", sandbox.path, "defaults", "write", "app", "a", "1"]).status == 0)
        #expect(try sandbox.run(["defaults", "write", "app", "b", "2", "--directory", sandbox.path]).status == 0)
        #expect(try sandbox.domain("app") == ["a": .string("1"), "b": .string("2")])
        #expect(sandbox.fallback.contents().isEmpty)
    }
}
