import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

/// `harness bench`: the library measured side by side with the toolchain's `UserDefaults` (the peer)
/// and with the bare system calls it cannot do without (the floor), in one run.
///
/// Each case interleaves ours, peer and floor sample by sample, so a noisy machine slows all three
/// alike, and reports medians over many samples taken after a warm-up.
enum BenchCommand: Subcommand {
    static let name = "bench"
    static let summary = "measure reads and writes against UserDefaults and the system-call floor"

    static var usage: String { """
        usage: harness bench [--quick] [--json PATH] [--directory PATH] [--cases NAME,NAME...]
               harness bench --etcd [--quick] [--json PATH]

        Measures the library against Foundation's UserDefaults (peer) and the bare system calls
        (floor), interleaved sample by sample, and prints a table and one line per case:
          BENCH case=<name> ours_us=<median> peer_us=<median> floor_us=<median> [<figure>=<value>...]
        Build with -c release for meaningful figures: swift run -c release harness bench

        Further figures: check_us, the bare pending-events check (ioctl(FIONREAD) on an inotify
        descriptor) a watched read stands on; untyped_us, the subscript read or write of the same entry
        as a typed one; and for external-change (a write in another process heard by a watching
        instance, timed from the write starting; floor: a bare inotify wake-up for the same rename) the
        99th percentiles, the figures from the write returning, and the CPU time used by the idle
        watcher over idle_s seconds (10, or 1 with --quick).
        \(negativeFiguresNote)

          --etcd            measure an etcd domain instead, against the bare gateway calls, on a
                            three-member cluster started on loopback (needs Debian's etcd-server)
          --quick           fewer samples: the whole run takes well under 30 seconds
          --json PATH       also write every sample, in microseconds, as JSON to PATH
          --samples N       exactly N samples per case (for a smoke test; the figures mean little)
          --cases NAME,...  only these cases of the full run (write-entry,write-collection, say),
                            in its order, so that a few can be measured again and again
          --directory PATH  work in PATH instead of a private temporary directory
          --count-reads CASE:N  only N reads of CASE (read, read-watched, read-typed,
                            read-typed-watched), for Scripts/read-instructions.sh
          --watchers N,N... only the watchers-N cases, for these numbers of watching instances (by
                            default the full run measures 1, 100, 2000 and 20000): start_us to make
                            them and start their watches, then for one plain rename over the domain
                            file first_told_us and all_told_us until the first and last observer is
                            told, and told_cpu_us, the process's CPU time (getrusage) meanwhile
        """ }

    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        var arguments = arguments
        // The writer process of the external-change case, started by the case itself.
        if let directory = try arguments.option(BenchExternalWriter.option, needs: "a directory") {
            try arguments.finish { "unknown option \($0) (see harness bench --help)" }
            try BenchExternalWriter.run(directory: directory)
            return
        }
        // Reads only, for an instruction counter (Scripts/read-instructions.sh); no peer, so no child process.
        if let specification = try arguments.option(BenchReadCount.option, needs: "CASE:N") {
            try arguments.finish { "unknown option \($0) (see harness bench --help)" }
            let workspace = try BenchWorkspace(directory: context.directory)
            defer { workspace.removeIfPrivate() }
            try BenchReadCount.run(specification, workspace: workspace)
            return
        }
        // The watchers cases only: they need no peer, so no child process either.
        let watcherCounts = try arguments.option("--watchers", needs: "numbers of watchers, like 1,100,2000", { text -> [Int]? in
            let counts = text.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
            return counts.isEmpty ? nil : counts
        })
        if let counts = watcherCounts {
            try arguments.finish { "unknown option \($0) (see harness bench --help)" }
            let workspace = try BenchWorkspace(directory: context.directory)
            defer { workspace.removeIfPrivate() }
            for count in counts { Console.say(try watchersCase(workspace, count: count).line) }
            return
        }
        let quick = arguments.flag("--quick")
        let etcd = arguments.flag("--etcd")
        let jsonPath = try arguments.option("--json", needs: "a PATH (see harness bench --help)")
        let sampleCount = try arguments.option("--samples", needs: "a positive whole number (see harness bench --help)") { text in
            Int(text).flatMap { $0 > 0 ? $0 : nil }
        }
        let selected = try arguments.option("--cases", needs: "case names, like write-entry,write-collection") { text -> Set<String>? in
            let names = Set(text.split(separator: ",").map(String.init))
            return names.isEmpty ? nil : names
        }
        try arguments.finish { "unknown option \($0) (see harness bench --help)" }
        if etcd {
            try BenchEtcd.report(quick: quick, samples: sampleCount, json: jsonPath)
            return
        }
        let workspace = try BenchWorkspace(directory: context.directory)
        defer { workspace.removeIfPrivate() }
        // Foundation reads XDG_CONFIG_HOME once, early, so the peer's files can be moved into the
        // workspace only by starting the measuring process with it set: run this command again as a
        // child process in that environment.
        guard ProcessInfo.processInfo.environment[BenchWorkspace.childVariable] == workspace.root else {
            var options: [String] = quick ? ["--quick"] : []
            if let jsonPath { options += ["--json", jsonPath] }
            if let sampleCount { options += ["--samples", String(sampleCount)] }
            if let selected { options += ["--cases", selected.sorted().joined(separator: ",")] }
            let status = try workspace.runAsChild(options)
            // The child shares this process's standard error: it has told its own failure.
            if status != 0 { throw HarnessError.alreadyReported(status: status) }
            return
        }

        let samples = sampleCount ?? (quick ? 41 : 301)
        var results: [BenchResult] = []
        func record(_ result: BenchResult) {
            results.append(result)
            Console.say(result.line)
        }
        // With --cases, a case not named is skipped (its closure is never called): the cases named keep
        // the state the full run would give them, except what skipped cases would have left behind.
        func runs(_ name: String) -> Bool { selected?.contains(name) ?? true }
        func record(_ name: String, _ result: () throws -> BenchResult) rethrows {
            if runs(name) { record(try result()) }
        }
        #if DEBUG
        Console.say("note: this is a debug build; use `swift run -c release harness bench` for real figures")
        #endif
        Console.say("Working in \(workspace.root)\n")
        record("read") { readCase(workspace, samples: samples) }
        record("read-watched") { readWatchedCase(workspace, samples: samples) }
        record("read-typed") { readTypedCase(workspace, samples: samples, watched: false) }
        record("read-typed-watched") { readTypedCase(workspace, samples: samples, watched: true) }
        record("read-after-external-write") { readAfterExternalWriteCase(workspace, samples: samples) }
        record("write-entry") { writeEntryCase(workspace, samples: samples) }
        record("write-typed") { writeTypedCase(workspace, samples: samples) }
        record("write-collection") { writeCollectionCase(workspace, samples: samples) }
        for size in [10, 100, 1_000, 10_000] {
            let scaled = sampleCount ?? max(11, samples / max(1, size / 100))
            record("scale-\(size)-read") { scaleReadCase(workspace, entries: size, samples: scaled) }
            record("scale-\(size)-write") { scaleWriteCase(workspace, entries: size, samples: scaled) }
        }
        for collections in [1, 10, 100] {
            record("domain-\(collections)") { domainCase(workspace, collections: collections, samples: samples) }
        }
        // Last, since its writer is a process of its own: many rounds, for a meaningful 99th percentile.
        try record("external-change") {
            try externalChangeCase(workspace, rounds: sampleCount ?? (quick ? 200 : 2_000),
                                   idleSeconds: sampleCount != nil ? 0.2 : quick ? 1 : 10)
        }
        if selected == nil { Console.say(negativeFiguresNote) }
        for count in sampleCount != nil ? [1, 100] : Self.watcherCounts {
            try record("watchers-\(count)") { try watchersCase(workspace, count: count) }
        }
        Console.say()
        Console.say(BenchResult.table(results))
        if let jsonPath {
            do {
                try BenchResult.json(results).write(to: URL(fileURLWithPath: jsonPath))
            } catch {
                throw HarnessError.failure("cannot write \(jsonPath): \(error)")
            }
        }
    }

    // MARK: Cases

    /// `values` of a 10-entry collection whose file is unchanged; peer `dictionary(forKey:)`; floor `stat()`.
    static func readCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let prefs = workspace.preferences(key: "read")
        prefs.values = BenchWorkspace.collection(entries: 10, round: 0)
        let peer = workspace.peer(name: "read")
        peer.set(BenchWorkspace.collection(entries: 10, round: 0), forKey: "read")
        peer.synchronize()
        workspace.waitUntilFilesAreSettled()
        let path = workspace.domainPath
        return BenchResult.measure("read", samples: samples, batch: 100,
            ours: { _ = prefs.values },
            peer: { _ = peer.dictionary(forKey: "read") },
            floor: {
                var info = stat()
                _ = stat(path, &info)
            })
    }

    /// A read right after another writer replaced the file. The replacement (a raw temporary file and
    /// rename of bytes the library wrote, as another process does) is outside the timed part.
    static func readAfterExternalWriteCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let peer = workspace.peer(name: "external")
        let peerVersions = (0..<2).map { round -> [UInt8] in
            peer.set(BenchWorkspace.collection(entries: 10, round: round), forKey: "external")
            peer.synchronize()
            return (FileManager.default.contents(atPath: workspace.peerPath("external")).map { [UInt8]($0) }) ?? []
        }
        var peerRound = 0
        return changedFileReadCase("read-after-external-write", workspace, key: "external", entries: 10, samples: samples,
            peer: (
                prepare: {
                    peerRound += 1
                    BenchFloor.replace(workspace.peerPath("external"), with: peerVersions[peerRound % 2], lock: nil)
                },
                read: {
                    peer.synchronize()
                    _ = peer.dictionary(forKey: "external")
                }
            ))
    }

    /// Reads of a collection whose file another writer replaces before each timed read, alternating
    /// between two versions that the library wrote; the floor reads the same file.
    private static func changedFileReadCase(
        _ name: String, _ workspace: BenchWorkspace, key: String, entries: Int, samples: Int,
        peer: (prepare: () -> Void, read: () -> Void)? = nil, bytes reportBytes: Bool = false
    ) -> BenchResult {
        let prefs = workspace.preferences(key: key, allowing: entries)
        let versions = (0..<2).map { round -> [UInt8] in
            prefs.values = BenchWorkspace.collection(entries: entries, round: round)
            return workspace.domainBytes()
        }
        var round = 0
        let path = workspace.domainPath
        let replace = { BenchFloor.replace(path, with: versions[round % 2], lock: nil) }
        return BenchResult.measure(name, samples: samples, batch: 1,
            prepareOurs: {
                round += 1
                replace()
            },
            ours: { _ = prefs.values },
            preparePeer: peer?.prepare, peer: peer?.read,
            prepareFloor: replace,
            floor: { _ = BenchFloor.readFile(path) },
            bytes: reportBytes ? versions[0].count : nil)
    }

    /// One subscript write; peer `set` + `synchronize()`; floor `flock` + temporary file + rename of the same bytes.
    static func writeEntryCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let prefs = workspace.preferences(key: "entry")
        var collection = BenchWorkspace.collection(entries: 10, round: 0)
        prefs.values = collection
        let peer = workspace.peer(name: "entry")
        let bytes = workspace.domainBytes()
        var round = 0
        return BenchResult.measure("write-entry", samples: samples, batch: 1,
            ours: {
                round += 1
                prefs["entry\(round % 10)"] = round
            },
            peer: {
                collection["entry\(round % 10)"] = round
                peer.set(collection, forKey: "entry")
                peer.synchronize()
            },
            floor: { BenchFloor.replace(workspace.floorPath, with: bytes, lock: workspace.floorLockPath) })
    }

    /// `values = …` of 10 entries; same peer and floor as write-entry.
    static func writeCollectionCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let prefs = workspace.preferences(key: "collection")
        prefs.values = BenchWorkspace.collection(entries: 10, round: 0)
        let peer = workspace.peer(name: "collection")
        let bytes = workspace.domainBytes()
        // Built before timing: what is measured is the write, not the caller making its dictionary.
        let versions = (1...2).map { BenchWorkspace.collection(entries: 10, round: $0) }
        var round = 0
        return BenchResult.measure("write-collection", samples: samples, batch: 1,
            ours: {
                round += 1
                prefs.values = versions[round % 2]
            },
            peer: {
                peer.set(versions[round % 2], forKey: "collection")
                peer.synchronize()
            },
            floor: { BenchFloor.replace(workspace.floorPath, with: bytes, lock: workspace.floorLockPath) })
    }

    /// A read of an N-entry collection right after it changed (so it is parsed and converted);
    /// the floor reads the same file.
    static func scaleReadCase(_ workspace: BenchWorkspace, entries: Int, samples: Int) -> BenchResult {
        changedFileReadCase("scale-\(entries)-read", workspace, key: "scale", entries: entries, samples: samples, bytes: true)
    }

    /// A whole-collection write of N entries; the floor writes the same bytes.
    static func scaleWriteCase(_ workspace: BenchWorkspace, entries: Int, samples: Int) -> BenchResult {
        let prefs = workspace.preferences(key: "scale", allowing: entries)
        prefs.values = BenchWorkspace.collection(entries: entries, round: 0)
        let bytes = workspace.domainBytes()
        let versions = (1...2).map { BenchWorkspace.collection(entries: entries, round: $0) }
        var round = 0
        return BenchResult.measure("scale-\(entries)-write", samples: samples, batch: 1,
            ours: {
                round += 1
                prefs.values = versions[round % 2]
            },
            peer: nil,
            floor: { BenchFloor.replace(workspace.floorPath, with: bytes, lock: workspace.floorLockPath) },
            bytes: bytes.count)
    }

    /// A subscript write when the domain file holds M collections of 10 entries.
    static func domainCase(_ workspace: BenchWorkspace, collections: Int, samples: Int) -> BenchResult {
        workspace.resetDomain()
        for index in 1..<max(collections, 1) {
            workspace.preferences(key: "other\(index)").values = BenchWorkspace.collection(entries: 10, round: index)
        }
        let prefs = workspace.preferences(key: "domain")
        prefs.values = BenchWorkspace.collection(entries: 10, round: 0)
        let bytes = workspace.domainBytes()
        var round = 0
        return BenchResult.measure("domain-\(collections)", samples: samples, batch: 1,
            ours: {
                round += 1
                prefs["entry\(round % 10)"] = round
            },
            peer: nil,
            floor: { BenchFloor.replace(workspace.floorPath, with: bytes, lock: workspace.floorLockPath) },
            bytes: bytes.count)
    }
}
