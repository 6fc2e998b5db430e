import Foundation
import Glibc
import RVS_PersistentPrefs

/// `harness bench`: the library measured side by side with the toolchain's `UserDefaults` (the peer)
/// and with the bare system calls it cannot do without (the floor), in one run.
///
/// Each case interleaves ours, peer and floor sample by sample, so a noisy machine slows all three
/// alike, and reports medians over many samples taken after a warm-up.
enum BenchCommand {
    static let summary = "measure reads and writes against UserDefaults and the system-call floor"

    static let help = """
        usage: harness bench [--quick] [--json PATH] [--directory PATH]

        Measures the library against Foundation's UserDefaults (peer) and the bare system calls
        (floor), interleaved sample by sample, and prints a table and one line per case:
          BENCH case=<name> ours_us=<median> peer_us=<median> floor_us=<median>
        Build with -c release for meaningful figures: swift run -c release harness bench

          --quick           fewer samples: the whole run takes well under 30 seconds
          --json PATH       also write every sample, in microseconds, as JSON to PATH
          --samples N       exactly N samples per case (for a smoke test; the figures mean little)
          --directory PATH  work in PATH instead of a private temporary directory
        """

    static func run(_ arguments: [String]) -> Int32 {
        var quick = false
        var jsonPath: String?
        var directory: String?
        var sampleCount: Int?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--help", "-h":
                print(help)
                return 0
            case "--quick":
                quick = true
            case "--json":
                guard let path = remaining.popFirst() else { return usageError("--json needs a PATH") }
                jsonPath = path
            case "--samples":
                guard let text = remaining.popFirst(), let count = Int(text), count > 0 else {
                    return usageError("--samples needs a positive whole number")
                }
                sampleCount = count
            case "--directory":
                guard let path = remaining.popFirst() else { return usageError("--directory needs a PATH") }
                directory = path
            default:
                return usageError("unknown option \(argument)")
            }
        }
        let workspace: BenchWorkspace
        do {
            workspace = try BenchWorkspace(directory: directory)
        } catch {
            FileHandle.standardError.write(Data("harness bench: \(error)\n".utf8))
            return 1
        }
        defer { workspace.removeIfPrivate() }
        // Foundation reads XDG_CONFIG_HOME once, early, so the peer's files can be moved into the
        // workspace only by starting the measuring process with it set: run this command again as a
        // child process in that environment.
        guard ProcessInfo.processInfo.environment[BenchWorkspace.childVariable] == workspace.root else {
            let options = (quick ? ["--quick"] : []) + (jsonPath.map { ["--json", $0] } ?? [])
                + (sampleCount.map { ["--samples", String($0)] } ?? [])
            return workspace.runAsChild(options)
        }

        let samples = sampleCount ?? (quick ? 41 : 301)
        var results: [BenchResult] = []
        func record(_ result: BenchResult) {
            results.append(result)
            print(result.line)
        }
        #if DEBUG
        print("note: this is a debug build; use `swift run -c release harness bench` for real figures")
        #endif
        print("Working in \(workspace.root)\n")
        record(readCase(workspace, samples: samples))
        record(readAfterExternalWriteCase(workspace, samples: samples))
        record(writeEntryCase(workspace, samples: samples))
        record(writeCollectionCase(workspace, samples: samples))
        for size in [10, 100, 1_000, 10_000] {
            let scaled = sampleCount ?? max(11, samples / max(1, size / 100))
            record(scaleReadCase(workspace, entries: size, samples: scaled))
            record(scaleWriteCase(workspace, entries: size, samples: scaled))
        }
        for collections in [1, 10, 100] {
            record(domainCase(workspace, collections: collections, samples: samples))
        }
        print("")
        print(BenchResult.table(results))
        if let jsonPath {
            do {
                try BenchResult.json(results).write(to: URL(fileURLWithPath: jsonPath))
            } catch {
                FileHandle.standardError.write(Data("harness bench: cannot write \(jsonPath): \(error)\n".utf8))
                return 1
            }
        }
        return 0
    }

    private static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("harness bench: \(message) (see harness bench --help)\n".utf8))
        return 2
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

/// A preferences class for the benchmark, allowing the entry names the cases use.
final class BenchPreferences: RVS_PersistentPrefs {
    nonisolated(unsafe) static var allowedCount = 10
    override var keys: [String] { (0..<Self.allowedCount).map { "entry\($0)" } }
}

/// The directory the benchmark works in, and the things it makes there.
final class BenchWorkspace {
    let root: String
    private let isPrivate: Bool

    init(directory: String?) throws {
        if let directory {
            root = directory
            isPrivate = false
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } else {
            root = NSTemporaryDirectory() + "rvs-prefs-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            isPrivate = true
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }
        // Ours and the peer both keep their files under the workspace, never in the user's own (the
        // peer's through the environment the child process is started with: see runAsChild).
        setenv(DefaultsLocations.directoryVariable, root + "/ours", 1)
        RVS_PersistentPrefs.applicationDomainName = "bench"
        RVS_PersistentPrefs.groupID = nil
        try FileManager.default.createDirectory(atPath: root + "/floor", withIntermediateDirectories: true)
    }

    /// Set in the child process that measures, to the workspace it measures in.
    static let childVariable = "RVS_PREFS_BENCH_WORKSPACE"

    /// Runs `harness bench ARGUMENTS --directory ROOT` as a child process whose environment points
    /// Foundation's `UserDefaults` at the workspace, with this process's output streams.
    /// - Returns: The child's exit status.
    func runAsChild(_ arguments: [String]) -> Int32 {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["bench"] + arguments + ["--directory", root]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root + "/peer"
        environment[Self.childVariable] = root
        child.environment = environment
        do {
            try child.run()
        } catch {
            FileHandle.standardError.write(Data("harness bench: cannot start the measuring process: \(error)\n".utf8))
            return 1
        }
        child.waitUntilExit()
        return child.terminationStatus
    }

    func removeIfPrivate() {
        if isPrivate { try? FileManager.default.removeItem(atPath: root) }
    }

    var domainPath: String { root + "/ours/bench.plist" }
    var floorPath: String { root + "/floor/floor.plist" }
    var floorLockPath: String { root + "/floor/floor.plist.lock" }
    func peerPath(_ name: String) -> String { root + "/peer/\(name).plist" }

    func domainBytes() -> [UInt8] {
        FileManager.default.contents(atPath: domainPath).map { [UInt8]($0) } ?? []
    }

    func preferences(key: String, allowing entries: Int = 10) -> BenchPreferences {
        BenchPreferences.allowedCount = entries
        return BenchPreferences(key: key)
    }

    func peer(name: String) -> UserDefaults {
        UserDefaults(suiteName: name) ?? .standard
    }

    func resetDomain() {
        try? FileManager.default.removeItem(atPath: domainPath)
    }

    /// Lets the files' timestamps age past the window in which the library re-reads a recently
    /// changed file, so the `read` case measures the steady state of a file nobody is writing.
    func waitUntilFilesAreSettled() {
        usleep(250_000)
    }

    static func collection(entries: Int, round: Int) -> [String: Any] {
        var collection: [String: Any] = [:]
        for index in 0..<entries {
            switch index % 5 {
            case 0: collection["entry\(index)"] = round + index
            case 1: collection["entry\(index)"] = "value \(round) \(index)"
            case 2: collection["entry\(index)"] = index % 2 == 0
            case 3: collection["entry\(index)"] = Double(round) + 0.5
            default: collection["entry\(index)"] = ["nested": round, "list": [1, 2, 3]] as [String: Any]
            }
        }
        return collection
    }
}

/// The bare system calls: what any correct implementation must at least do.
enum BenchFloor {
    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`, under an exclusive
    /// `flock` of `lock` when given.
    static func replace(_ path: String, with bytes: [UInt8], lock: String?) {
        var lockFD: Int32 = -1
        if let lock {
            lockFD = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            _ = flock(lockFD, LOCK_EX)
        }
        let temporary = path + ".floor.tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        rename(temporary, path)
        if lockFD >= 0 { close(lockFD) }
    }

    /// open + read + close of the whole file.
    static func readFile(_ path: String) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return total }
            total += count
        }
    }
}

/// The figures of one case.
struct BenchResult {
    let name: String
    let ours: [Double]
    let peer: [Double]?
    let floor: [Double]?
    let bytes: Int?

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    var oursMedian: Double { Self.median(ours) }
    var peerMedian: Double? { peer.map(Self.median) }
    var floorMedian: Double? { floor.map(Self.median) }

    static func format(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value < 10 ? String(format: "%.3f", value) : String(format: "%.1f", value)
    }

    var line: String {
        "BENCH case=\(name) ours_us=\(Self.format(oursMedian)) peer_us=\(Self.format(peerMedian)) floor_us=\(Self.format(floorMedian))"
    }

    /// Times `batch` calls of each of ours, peer and floor per sample, interleaved, after a warm-up of
    /// a tenth of the samples; the `prepare` closures run before each timed call, untimed.
    static func measure(
        _ name: String, samples: Int, batch: Int,
        prepareOurs: (() -> Void)? = nil, ours: () -> Void,
        preparePeer: (() -> Void)? = nil, peer: (() -> Void)?,
        prepareFloor: (() -> Void)? = nil, floor: (() -> Void)?,
        bytes: Int? = nil
    ) -> BenchResult {
        func timed(_ prepare: (() -> Void)?, _ body: () -> Void) -> Double {
            var total: UInt64 = 0
            for _ in 0..<batch {
                prepare?()
                let start = now()
                body()
                total += now() - start
            }
            return Double(total) / Double(batch) / 1_000
        }
        let warmUp = samples < 10 ? 1 : max(3, samples / 10)
        var oursSamples: [Double] = [], peerSamples: [Double] = [], floorSamples: [Double] = []
        for index in 0..<(warmUp + samples) {
            let a = timed(prepareOurs, ours)
            let b = peer.map { timed(preparePeer, $0) }
            let c = floor.map { timed(prepareFloor, $0) }
            guard index >= warmUp else { continue }
            oursSamples.append(a)
            if let b { peerSamples.append(b) }
            if let c { floorSamples.append(c) }
        }
        return BenchResult(name: name, ours: oursSamples, peer: peer == nil ? nil : peerSamples,
                           floor: floor == nil ? nil : floorSamples, bytes: bytes)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func table(_ results: [BenchResult]) -> String {
        var lines = ["case                        ours µs    peer µs   floor µs  ours/floor  bytes"]
        for result in results {
            let ratio = result.floorMedian.map { String(format: "%.2f×", result.oursMedian / $0) } ?? "-"
            lines.append(
                result.name.padding(toLength: 26, withPad: " ", startingAt: 0)
                    + format(result.oursMedian).leftPadded(10) + format(result.peerMedian).leftPadded(11)
                    + format(result.floorMedian).leftPadded(11) + ratio.leftPadded(12)
                    + (result.bytes.map(String.init) ?? "-").leftPadded(7)
            )
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [BenchResult]) -> Data {
        let objects: [[String: Any]] = results.map { result in
            var object: [String: Any] = ["case": result.name, "ours_us": result.ours, "ours_median_us": result.oursMedian]
            if let peer = result.peer { object["peer_us"] = peer; object["peer_median_us"] = result.peerMedian ?? 0 }
            if let floor = result.floor { object["floor_us"] = floor; object["floor_median_us"] = result.floorMedian ?? 0 }
            if let bytes = result.bytes { object["bytes"] = bytes }
            return object
        }
        return (try? JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
