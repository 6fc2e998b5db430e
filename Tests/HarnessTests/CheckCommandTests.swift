import Foundation
import Testing
import TestSupport

/// `harness check` from the outside: its help, its usage errors, and a short real run that ends with the
/// summary line, replays its plan from the seed, and leaves nothing behind when it finds nothing.
@Suite("harness check: the command line")
struct CheckCommandTests {
    let sandbox = HarnessSandbox()

    @Test("harness check --help prints its usage, and harness --help lists it")
    func help() throws {
        let run = try sandbox.run(["check", "--help"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("usage: harness check"))
        #expect(try sandbox.run(["--help"]).lines.contains { $0.hasPrefix("  check ") })
    }

    @Test("a bad option of harness check is one line on standard error and exit status 2", arguments: [
        ["check", "--processes", "0"], ["check", "--duration", "soon"], ["check", "--seed", "-1"], ["check", "--frobnicate"],
    ])
    func badUsage(_ arguments: [String]) throws {
        let run = try sandbox.run(arguments)
        #expect(run.status == 2)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.output.isEmpty)
    }

    @Test("a short run ends with the summary line, prints the same plan digest for the same seed, and removes its files")
    func shortRun() throws {
        let first = try sandbox.run(["check", "--seed", "11", "--duration", "3", "--processes", "2"])
        #expect(first.status == 0, "output: \(first.output)\nerrors: \(first.errors)")
        let summary = try #require(first.lines.last { !$0.isEmpty })
        #expect(summary.hasPrefix("check: seed 11, "))
        #expect(summary.hasSuffix(" 0 anomalies"))
        let operations = summary.split(separator: " ").dropFirst(3).first.flatMap { Int($0) } ?? 0
        #expect(operations > 0)
        let digest = first.lines.first { $0.hasPrefix("check: plan digest ") }
        #expect(digest != nil)
        // The plan alone is replayed: the same seed, duration and process count give the same digest.
        let again = try sandbox.run(["check", "--seed", "11", "--duration", "3", "--processes", "2"])
        #expect(again.lines.first { $0.hasPrefix("check: plan digest ") } == digest)
        #expect(sandbox.temporary.contents().isEmpty)
    }
}
