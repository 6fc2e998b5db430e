// The `watchers-N` cases of `harness bench` (issue 27, "watchers scale linearly"): N instances of one
// domain, each watching for changes made elsewhere with a key-path observer; how long starting them all
// takes, and for one write made outside the library (a plain rename of new bytes over the domain file)
// how soon the first and the last are told and how much CPU the process spends telling them.

import Foundation
import Glibc
import RVS_PersistentPrefs
import Synchronization
import TestSupport
import PrefsTool

/// Counts the observers told of one value, and notes when the first and the last were told.
private final class ToldCounter: Sendable {
    private struct State {
        var told = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
    }

    private let state = Mutex(State())
    let allTold = WaitableValue(false)
    let expected: Int

    init(expected: Int) { self.expected = expected }

    func tell() {
        let time = BenchResult.now()
        let done = state.withLock { state -> Bool in
            state.told += 1
            if state.told == 1 { state.first = time }
            state.last = time
            return state.told == expected
        }
        if done { allTold.update { $0 = true } }
    }

    var figures: (told: Int, first: UInt64, last: UInt64) { state.withLock { ($0.told, $0.first, $0.last) } }
}

extension BenchCommand {
    /// The numbers of watching instances measured by default.
    static let watcherCounts = [1, 100, 2_000, 20_000]

    /// N watching instances of one domain (in a directory of their own): the time to make them and start
    /// their watches; then one external write (the bytes of another value renamed over the file, as any
    /// other program may), timed until the last observer is told, with the process's CPU time
    /// (`getrusage`) over the same span. `ours` holds the one wall time; the other figures follow it.
    static func watchersCase(_ workspace: BenchWorkspace, count: Int) throws -> BenchResult {
        let directory = workspace.root + "/watchers-\(count)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The new file's bytes, written by the library elsewhere, so that the rename is the only step timed.
        let elsewhere = directory + "/elsewhere"
        try? FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let writer = BenchExternalPreferences(key: "settings", suite: try BenchExternalPreferences.suite(directory: elsewhere))
        writer["count"] = 1
        let newBytes = FileManager.default.contents(atPath: elsewhere + "/\(BenchExternalPreferences.domainName).plist").map { [UInt8]($0) }
        guard let newBytes, writer.lastError == nil else { throw HarnessError.failure("cannot write in \(elsewhere)") }

        let suite = try BenchExternalPreferences.suite(directory: directory)
        let first = BenchExternalPreferences(key: "settings", suite: suite)
        first["count"] = 0
        if let error = first.lastError { throw HarnessError.failure("cannot write in \(directory): \(error)") }
        let counter = ToldCounter(expected: count)

        var instances: [BenchExternalPreferences] = []
        var observations: [PrefsObservation] = []
        instances.reserveCapacity(count)
        observations.reserveCapacity(count)
        let startBegan = BenchResult.now()
        for _ in 0..<count {
            let prefs = BenchExternalPreferences(key: "settings", suite: suite)
            observations.append(prefs.observe(\.values, options: [.new]) { _, change in
                if change.newValue?["count"] as? Int == 1 { counter.tell() }
            })
            prefs.watchesExternalChanges = true
            instances.append(prefs)
        }
        let startEnded = BenchResult.now()
        defer {
            for observation in observations { observation.invalidate() }
            for prefs in instances { prefs.watchesExternalChanges = false }
        }

        let cpuBefore = Self.processCPUMicroseconds()
        let written = BenchResult.now()
        BenchFloor.replace(directory + "/\(BenchExternalPreferences.domainName).plist", with: newBytes, lock: nil)
        guard counter.allTold.wait(timeout: 120, until: { $0 }) else {
            throw HarnessError.failure("only \(counter.figures.told) of \(count) watchers were told within 120 seconds")
        }
        let cpuUsed = Self.processCPUMicroseconds() - cpuBefore
        let (_, firstTold, lastTold) = counter.figures
        func micro(_ later: UInt64, _ earlier: UInt64) -> Double { (Double(later) - Double(earlier)) / 1_000 }

        var result = BenchResult(name: "watchers-\(count)", ours: [micro(lastTold, written)], peer: nil, floor: nil, bytes: nil)
        let format = BenchResult.format
        result.figures = [
            ("watchers", String(count)),
            ("start_us", format(micro(startEnded, startBegan))),
            ("first_told_us", format(micro(firstTold, written))),
            ("all_told_us", format(micro(lastTold, written))),
            ("told_cpu_us", String(cpuUsed)),
        ]
        return result
    }

    /// The user and system CPU time, in microseconds, the whole process has used (`getrusage`).
    static func processCPUMicroseconds() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}
