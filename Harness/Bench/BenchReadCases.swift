// The read cases of `harness bench` beyond the first: reads a watch validates, and typed reads.

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

extension BenchCommand {
    /// `values` of a 10-entry collection whose file is unchanged, while the instance watches for changes
    /// made elsewhere (so the process watches the domain's directory and a read asks the inotify queue,
    /// not the file); floor `stat()`; `check`: the bare pending-events check, `ioctl(FIONREAD)` on an
    /// inotify descriptor watching the same directory.
    static func readWatchedCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let prefs = workspace.preferences(key: "read")
        prefs.values = BenchWorkspace.collection(entries: 10, round: 0)
        prefs.watchesExternalChanges = true
        // Later cases measure reads without a watch: the process's last watch goes with this one.
        defer { prefs.watchesExternalChanges = false }
        let check = BenchPendingEventsCheck(directory: workspace.domainDirectory)
        let path = workspace.domainPath
        return BenchResult.measure("read-watched", samples: samples, batch: 100,
            ours: { _ = prefs.values },
            peer: nil,
            floor: {
                var info = stat()
                _ = stat(path, &info)
            },
            others: [("check", { _ = check.pendingBytes() })])
    }

    /// Typed reads (`@Entry`) of an unchanged file, cycling through an Int, a String enum and a Codable
    /// struct; `untyped`: the subscript read of the same entry with the cast an app writes; floor `stat()`.
    /// With `watched`, the instance watches for changes made elsewhere, as in `read-watched`, and `check`
    /// is the bare pending-events check.
    static func readTypedCase(_ workspace: BenchWorkspace, samples: Int, watched: Bool) -> BenchResult {
        let prefs = BenchTypedPreferences(key: "typed")
        prefs.launchCount = 42
        prefs.appearance = .dark
        prefs.window = BenchTypedPreferences.WindowFrame(width: 1024)
        if watched {
            prefs.watchesExternalChanges = true
        } else {
            workspace.waitUntilFilesAreSettled()
        }
        defer { if watched { prefs.watchesExternalChanges = false } }
        let check = watched ? BenchPendingEventsCheck(directory: workspace.domainDirectory) : nil
        let path = workspace.domainPath
        var sink = 0
        var typedRound = 0, untypedRound = 0
        var others: [(name: String, body: () -> Void)] = [("untyped", {
            untypedRound += 1
            switch untypedRound % 3 {
            case 0: sink &+= prefs["launchCount"] as? Int ?? 0
            case 1: sink &+= (prefs["appearance"] as? String).flatMap(BenchTypedPreferences.Appearance.init(rawValue:)) == .dark ? 1 : 0
            default: sink &+= Int((prefs["window"] as? [String: Any])?["width"] as? Double ?? 0)
            }
        })]
        if let check { others.append(("check", { _ = check.pendingBytes() })) }
        var result = BenchResult.measure(watched ? "read-typed-watched" : "read-typed", samples: samples, batch: 99,
            ours: {
                typedRound += 1
                switch typedRound % 3 {
                case 0: sink &+= prefs.launchCount
                case 1: sink &+= prefs.appearance == .dark ? 1 : 0
                default: sink &+= Int(prefs.window.width)
                }
            },
            peer: nil,
            floor: {
                var info = stat()
                _ = stat(path, &info)
            },
            others: others)
        precondition(sink != 0, "the typed reads returned nothing")
        let untyped = BenchResult.median(result.others[0].samples)
        result.figures = [("typed_per_untyped", String(format: "%.2f", result.oursMedian / untyped))]
        return result
    }

    /// One typed write of an Int entry; `untyped`: the subscript write of the same entry; floor: `flock` +
    /// temporary file + rename of the same bytes.
    static func writeTypedCase(_ workspace: BenchWorkspace, samples: Int) -> BenchResult {
        let prefs = BenchTypedPreferences(key: "typed-write")
        prefs.launchCount = 0
        let bytes = workspace.domainBytes()
        var round = 0
        var result = BenchResult.measure("write-typed", samples: samples, batch: 1,
            ours: {
                round += 1
                prefs.launchCount = round
            },
            peer: nil,
            floor: { BenchFloor.replace(workspace.floorPath, with: bytes, lock: workspace.floorLockPath) },
            others: [("untyped", {
                round += 1
                prefs["launchCount"] = round
            })])
        let untyped = BenchResult.median(result.others[0].samples)
        result.figures = [("typed_per_untyped", String(format: "%.2f", result.oursMedian / untyped))]
        return result
    }
}

/// Typed entries for the `read-typed` and `write-typed` cases.
final class BenchTypedPreferences: RVS_PersistentPrefs {
    enum Appearance: String, Codable, Sendable { case system, light, dark }
    struct WindowFrame: Codable, Equatable, Sendable { var x = 0.0, y = 0.0, width = 800.0, height = 600.0 }

    @Entry("launchCount") var launchCount = 0
    @Entry("appearance") var appearance = Appearance.system
    @Entry("window") var window = WindowFrame()
}
