import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// One finished run of the built `harness` executable, as a user at a shell would see it.
struct HarnessRun {
    let status: Int32
    let output: String
    let errors: String

    /// Standard output's lines.
    var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// Standard error's non-empty lines.
    var errorLines: [String] { errors.split(separator: "\n").map(String.init) }
}

/// A sandbox for runs of the harness: a directory the harness may use (passed as `--directory` by the
/// tests that look at files), and an environment that keeps every run away from the real ~/.config and
/// the real temporary directory, whatever the test forgets to pass.
final class HarnessSandbox: @unchecked Sendable {
    let directory = TemporaryDirectory()
    /// Where runs without `--directory` make (and must remove) their temporary directories: TMPDIR.
    let temporary = TemporaryDirectory()
    /// Where the library would write if a run escaped `--directory`: `RVS_PREFS_DIRECTORY`.
    let fallback = TemporaryDirectory()

    var path: String { directory.path }

    var environment: [String: String] {
        // The administrator's layers too, so that no run reads the machine's /etc.
        ["TMPDIR": temporary.path, "RVS_PREFS_DIRECTORY": fallback.path, "XDG_CONFIG_HOME": fallback.path, "HOME": fallback.path,
         "XDG_CONFIG_DIRS": fallback.appending("xdg"), "RVS_PREFS_MANAGED_DIRECTORY": fallback.appending("managed"),
         // And the installed schemas, so that no run reads the machine's /usr/share.
         "XDG_DATA_DIRS": fallback.appending("share")]
    }

    /// Runs `harness ARGUMENTS`, with `input` on standard input (then closed), to the end; `extra` is
    /// added to the sandbox's environment.
    func run(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> HarnessRun {
        try run(executable: "harness", arguments, input: input, environment: extra)
    }

    /// Runs `prefsctl ARGUMENTS` (the administrator's tool, the same code as `harness defaults`) in the sandbox's
    /// environment, as ``run(_:input:environment:)`` runs the harness.
    func prefsctl(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> HarnessRun {
        try run(executable: "prefsctl", arguments, input: input, environment: extra)
    }

    /// Runs `prefsctl --directory SANDBOX ARGUMENTS`.
    func prefsctlHere(_ arguments: String..., input: String = "") throws -> HarnessRun {
        try prefsctl(["--directory", path] + arguments, input: input)
    }

    /// Runs the built executable `name` with `arguments` to the end.
    func run(executable name: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> HarnessRun {
        let child = try ChildProcess(name, arguments, environment: environment.merging(extra) { _, new in new })
        child.sendBytes(Array(input.utf8))
        child.closeInput()
        let output = String(decoding: child.readAllOutputBytes(), as: UTF8.self)
        let errors = child.readErrors()
        return HarnessRun(status: child.wait(), output: output, errors: errors)
    }

    /// Runs `harness defaults --directory SANDBOX ARGUMENTS`.
    func defaults(_ arguments: String..., input: String = "") throws -> HarnessRun {
        try run(["defaults", "--directory", path] + arguments, input: input)
    }

    /// The contents of the domain `name` in the sandbox, read through the library's own storage type.
    func domain(_ name: String, in subdirectory: String? = nil) throws -> [String: PropertyListValue] {
        try FileDomainStorage(directory: subdirectory.map(directory.appending) ?? path, name: name).snapshot().contents
    }

    /// Every file under the sandbox directory with its bytes, to prove that a run changed nothing.
    func files() -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = directory.appending(name)
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[name] = fileBytes(full) ?? []
            } else {
                result[name + "/"] = []
            }
        }
        return result
    }
}

extension HarnessSandbox {
    /// Runs `harness defaults --directory SANDBOX ARGUMENTS` and requires it to succeed silently on standard error.
    func defaultsSucceeding(_ arguments: [String], input: String = "") throws -> HarnessRun {
        let run = try run(["defaults", "--directory", path] + arguments, input: input)
        #expect(run.status == 0, "harness defaults \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }
}
