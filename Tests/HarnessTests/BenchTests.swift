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
        "read", "read-watched", "read-typed", "read-typed-watched", "read-after-external-write",
        "write-entry", "write-typed", "write-collection",
        "scale-10-read", "scale-10-write", "scale-100-read", "scale-100-write",
        "scale-1000-read", "scale-1000-write", "scale-10000-read", "scale-10000-write",
        "domain-1", "domain-10", "domain-100", "external-change", "watchers-1", "watchers-100",
    ]

    /// What a watchers case reports (issue 27: watchers scale linearly).
    static let watcherFields = ["watchers", "start_us", "first_told_us", "all_told_us", "told_cpu_us"]

    /// The figures each case reports beyond ours, peer and floor.
    static let extraFields: [String: [String]] = [
        "read-watched": ["check_us"],
        "read-typed": ["untyped_us", "typed_per_untyped"],
        "read-typed-watched": ["untyped_us", "check_us", "typed_per_untyped"],
        "write-typed": ["untyped_us", "typed_per_untyped"],
        "external-change": [
            "ours_p99_us", "floor_p99_us", "ours_from_return_us", "ours_from_return_p99_us",
            "floor_from_return_us", "floor_from_return_p99_us", "write_us", "idle_s", "idle_cpu_us",
        ],
        "watchers-1": watcherFields,
        "watchers-100": watcherFields,
    ]

    @Test("Every case prints one BENCH line with ours, peer, floor and its own figures, and --json writes every sample")
    func everyCaseReports() async throws {
        try await onOwnThread {
            let json = sandbox.directory.appending("bench.json")
            let run = try sandbox.run(["bench", "--samples", "3", "--json", json, "--directory", sandbox.directory.appending("work")])
            #expect(run.status == 0, "standard error: \(run.errors)")
            let lines = run.lines.filter { $0.hasPrefix("BENCH ") }
            #expect(lines.map { $0.split(separator: " ")[1] } == Self.cases.map { "case=\($0)" })
            for line in lines {
                let pairs = line.split(separator: " ").dropFirst().map {
                    let pair = $0.split(separator: "=", maxSplits: 1)
                    return (String(pair[0]), String(pair[1]))
                }
                let fields = Dictionary(uniqueKeysWithValues: pairs)
                let name = fields["case"] ?? ""
                #expect(pairs.map(\.0) == ["case", "ours_us", "peer_us", "floor_us"] + (Self.extraFields[name] ?? []), "\(line)")
                for extra in Self.extraFields[name] ?? [] {
                    #expect(Double(fields[extra] ?? "")?.isFinite == true, "\(line)")
                }
                #expect(Double(fields["ours_us"] ?? "") != nil, "\(line)")
                #expect(fields["floor_us"].map { $0 == "-" || Double($0) != nil } == true, "\(line)")
                #expect(fields["peer_us"].map { $0 == "-" || Double($0) != nil } == true, "\(line)")
            }
            let peerCases = lines.filter { !$0.contains("peer_us=-") }.map { $0.split(separator: " ")[1] }
            #expect(peerCases == ["case=read", "case=read-after-external-write", "case=write-entry", "case=write-collection"])
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [[String: Any]])
            #expect(objects.count == Self.cases.count)
            // A watchers case has one sample: the one write told to all.
            #expect(objects.allSatisfy { ($0["ours_us"] as? [Double])?.count == (($0["case"] as? String)?.hasPrefix("watchers-") == true ? 1 : 3) })
            let external = try #require(objects.first { $0["case"] as? String == "external-change" })
            #expect((external["floor_us"] as? [Double])?.count == 3, "the floor's wake-ups are samples too")
            #expect(external["idle_cpu_us"] is Double)
            #expect(sandbox.fallback.contents().isEmpty, "the bench wrote outside its directory")
        }
    }

    @Test("bench --watchers measures only the watchers cases asked for, each told of one write made elsewhere")
    func watchersCasesAlone() throws {
        let run = try sandbox.run(["bench", "--watchers", "1,3", "--directory", sandbox.directory.appending("work")])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let lines = run.lines.filter { $0.hasPrefix("BENCH ") }
        #expect(lines.map { $0.split(separator: " ")[1] } == ["case=watchers-1", "case=watchers-3"])
        for line in lines {
            for field in Self.watcherFields {
                #expect(line.split(separator: " ").contains { $0.hasPrefix(field + "=") && Double($0.dropFirst(field.count + 1)) != nil }, "\(line)")
            }
        }
    }

    @Test("bench --cases runs only the cases named, in the full run's order, with the peer and the floor")
    func namedCasesAlone() throws {
        let run = try sandbox.run(["bench", "--cases", "write-collection,write-entry", "--samples", "3",
                                   "--directory", sandbox.directory.appending("work")])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let lines = run.lines.filter { $0.hasPrefix("BENCH ") }
        #expect(lines.map { $0.split(separator: " ")[1] } == ["case=write-entry", "case=write-collection"])
        #expect(lines.allSatisfy { !$0.contains("peer_us=-") && !$0.contains("floor_us=-") }, "\(lines)")
    }

    @Test("Bad bench options give one line on standard error and exit 2")
    func badOptionsAreRejected() throws {
        for arguments in [["bench", "--samples", "0"], ["bench", "--json"], ["bench", "--nonsense"], ["bench", "--watchers", "none"]] {
            let run = try sandbox.run(arguments)
            #expect(run.status == 2)
            #expect(run.errorLines.count == 1, "\(arguments): \(run.errors)")
        }
    }
}
