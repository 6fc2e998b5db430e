// `harness bench --count-reads CASE:N`: N reads of one read case and nothing else, so that an instruction
// counter (Scripts/read-instructions.sh runs it under callgrind) can take the cost of one read as the
// difference between two runs with different N.

import Foundation
import RVS_PersistentPrefs
import PrefsTool

enum BenchReadCount {
    static let option = "--count-reads"

    /// The cases, as `harness bench` names them, and `read-only`: the `read` case's collection read N times
    /// with no write before (made by an earlier `read:0` in the same directory), so that a process reading
    /// once can be compared with one reading nothing (N = 0): what a short-lived process pays for watching.
    static let cases = ["read", "read-watched", "read-typed", "read-typed-watched", "read-only"]

    /// Sets the case up as `harness bench` does, then reads `count` times.
    static func run(_ specification: String, workspace: BenchWorkspace) throws(HarnessError) {
        let parts = specification.split(separator: ":")
        guard parts.count == 2, cases.contains(String(parts[0])), let count = Int(parts[1]), count >= 0 else {
            throw .failure("\(option) takes CASE:N, CASE one of \(cases.joined(separator: ", "))")
        }
        let name = String(parts[0])
        var sink = 0
        switch name {
        case "read-only":
            // With N = 0 not even an instance: the process that reads nothing.
            if count > 0 {
                let prefs = workspace.preferences(key: "read")
                for _ in 0..<count { sink &+= prefs.values.count }
                if let error = prefs.lastError { throw .failure("the reads failed: \(error)") }
            }
        case "read", "read-watched":
            let prefs = workspace.preferences(key: "read")
            prefs.values = BenchWorkspace.collection(entries: 10, round: 0)
            workspace.waitUntilFilesAreSettled()
            if name == "read-watched" { prefs.watchesExternalChanges = true }
            _ = prefs.values
            for _ in 0..<count { sink &+= prefs.values.count }
            prefs.watchesExternalChanges = false
        default:
            let prefs = BenchTypedPreferences(key: "typed")
            prefs.launchCount = 42
            prefs.appearance = .dark
            prefs.window = BenchTypedPreferences.WindowFrame(width: 1024)
            workspace.waitUntilFilesAreSettled()
            if name == "read-typed-watched" { prefs.watchesExternalChanges = true }
            sink &+= prefs.launchCount
            // The three entries in turn, as the timed case reads them.
            for round in 0..<count {
                switch round % 3 {
                case 0: sink &+= prefs.launchCount
                case 1: sink &+= prefs.appearance == .dark ? 1 : 0
                default: sink &+= Int(prefs.window.width)
                }
            }
            prefs.watchesExternalChanges = false
        }
        // (Not for read-only: another instance would read once more than the process is meant to.)
        if name != "read-only", let error = BenchPreferences(key: "read").lastError { throw .failure("the reads failed: \(error)") }
        Console.say("reads=\(count) sink=\(sink)")
    }
}
