import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The benchmark's figures are not tested (speed belongs in the benchmark, not in a timed test); its
/// shape is: every case runs and reports one machine-readable line, and the JSON holds the samples.
@Suite("harness bench: every case reports")
struct HarnessBenchTests {
    let sandbox = HarnessSandbox()

    static let cases = [
        "read", "read-after-external-write", "write-entry", "write-collection",
        "scale-10-read", "scale-10-write", "scale-100-read", "scale-100-write",
        "scale-1000-read", "scale-1000-write", "scale-10000-read", "scale-10000-write",
        "domain-1", "domain-10", "domain-100",
    ]

    @Test("Every case prints one BENCH line with ours, peer and floor, and --json writes every sample")
    func everyCaseReports() throws {
        let json = sandbox.directory.appending("bench.json")
        let run = try sandbox.run(["bench", "--samples", "3", "--json", json, "--directory", sandbox.directory.appending("work")])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let lines = run.lines.filter { $0.hasPrefix("BENCH ") }
        #expect(lines.map { $0.split(separator: " ")[1] } == Self.cases.map { "case=\($0)" })
        for line in lines {
            let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").dropFirst().map {
                let pair = $0.split(separator: "=", maxSplits: 1)
                return (String(pair[0]), String(pair[1]))
            })
            #expect(Double(fields["ours_us"] ?? "") != nil, "\(line)")
            #expect(fields["floor_us"].map { $0 == "-" || Double($0) != nil } == true, "\(line)")
            #expect(fields["peer_us"].map { $0 == "-" || Double($0) != nil } == true, "\(line)")
        }
        let peerCases = lines.filter { !$0.contains("peer_us=-") }.map { $0.split(separator: " ")[1] }
        #expect(peerCases == ["case=read", "case=read-after-external-write", "case=write-entry", "case=write-collection"])
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [[String: Any]])
        #expect(objects.count == Self.cases.count)
        #expect(objects.allSatisfy { ($0["ours_us"] as? [Double])?.count == 3 })
        #expect(sandbox.fallback.contents().isEmpty, "the bench wrote outside its directory")
    }

    @Test("Bad bench options give one line on standard error and exit 2")
    func badOptionsAreRejected() throws {
        for arguments in [["bench", "--samples", "0"], ["bench", "--json"], ["bench", "--nonsense"]] {
            let run = try sandbox.run(arguments)
            #expect(run.status == 2)
            #expect(run.errorLines.count == 1, "\(arguments): \(run.errors)")
        }
    }
}
