import Foundation
import PrefsHistory
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

    @Test("--recheck of a kept history with a stale read prints the anomaly with its slice and exits 1; a clean one exits 0")
    func recheck() throws {
        let kept = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: kept.appending("log"), withIntermediateDirectories: true)
        func record(_ process: Int, _ sequence: Int, _ kind: HistoryRecord.Kind, _ start: UInt64, _ end: UInt64, value: Int?) -> String {
            HistoryRecord(process: process, sequence: sequence, kind: kind, domain: "d0", key: "k0", entry: "a", value: value,
                          start: start, end: end, outcome: .ok).jsonLine
        }
        let writes = [record(1, 1, .write, 10, 20, value: 100), record(1, 2, .write, 30, 40, value: 200)]
        try (writes + [record(2, 1, .read, 50, 60, value: 200)]).joined(separator: "\n").write(toFile: kept.appending("log/p1.jsonl"), atomically: true, encoding: .utf8)
        let clean = try sandbox.run(["check", "--recheck", kept.path])
        #expect(clean.status == 0, "output: \(clean.output)")
        #expect(clean.lines.last { !$0.isEmpty } == "check: recheck of \(kept.path), 3 operations, 0 anomalies")

        try (writes + [record(2, 1, .read, 50, 60, value: 100)]).joined(separator: "\n").write(toFile: kept.appending("log/p1.jsonl"), atomically: true, encoding: .utf8)
        let stale = try sandbox.run(["check", "--recheck", kept.path])
        #expect(stale.status == 1)
        #expect(stale.lines.contains { $0.hasPrefix("anomaly 1: staleRead: d0/k0.a read 100") })
        #expect(stale.lines.filter { $0.hasPrefix("    p") }.count == 3)
        #expect(stale.lines.last { !$0.isEmpty } == "check: recheck of \(kept.path), 3 operations, 1 anomalies")
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
