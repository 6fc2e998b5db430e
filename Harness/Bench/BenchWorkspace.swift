// Where `harness bench` works: its directory, its preferences class, and the peer's files.

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

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
    /// - Throws: When the child cannot be started.
    func runAsChild(_ arguments: [String]) throws(HarnessError) -> Int32 {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: HarnessChild.executable)
        child.arguments = ["bench"] + arguments + ["--directory", root]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root + "/peer"
        environment[Self.childVariable] = root
        child.environment = environment
        do {
            try child.run()
        } catch {
            throw .failure("cannot start the measuring process: \(error)")
        }
        child.waitUntilExit()
        return child.terminationStatus
    }

    func removeIfPrivate() {
        if isPrivate { try? FileManager.default.removeItem(atPath: root) }
    }

    var domainDirectory: String { root + "/ours" }
    var domainPath: String { domainDirectory + "/bench.plist" }
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

/// A preferences class for the benchmark, allowing the entry names the cases use.
final class BenchPreferences: RVS_PersistentPrefs {
    nonisolated(unsafe) static var allowedCount = 10
    override var keys: [String] { (0..<Self.allowedCount).map { "entry\($0)" } }
}
