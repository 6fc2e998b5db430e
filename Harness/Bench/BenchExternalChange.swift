// The `external-change` case of `harness bench`: how soon a watching instance hears another process's
// write, against the bare inotify wake-up for the same rename, and what an idle watcher costs.

import Foundation
import Glibc
import RVS_PersistentPrefs
import TestSupport
import PrefsTool

/// The collection both processes of the `external-change` case share, in a domain of its own directory,
/// so that its watch never validates the reads of the other cases.
final class BenchExternalPreferences: RVS_PersistentPrefs {
    override var keys: [String] { ["count"] }

    static let domainName = "external"

    static func suite(directory: String) throws -> DefaultsSuite {
        do {
            return DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory, name: domainName), arguments: [])
        } catch {
            throw HarnessError.failure("cannot open the domain \(domainName) in \(directory): \(error)")
        }
    }
}

/// The writer process of the `external-change` case: `harness bench --writer DIRECTORY` (not listed in the
/// usage; only the case starts it). For each number N read from standard input it sets `count` to N and
/// prints `N <returned> <started>`, the CLOCK_MONOTONIC nanoseconds at which the write returned and began.
enum BenchExternalWriter {
    static let option = "--writer"

    static func run(directory: String) throws {
        let prefs = BenchExternalPreferences(key: "settings", suite: try BenchExternalPreferences.suite(directory: directory))
        let input = LineReader(descriptor: 0)
        while let line = input.nextLine() {
            guard let number = Int(line) else { throw HarnessError.failure("the writer expects a number per line, not '\(line)'") }
            let started = BenchResult.now()
            prefs["count"] = number
            let returned = BenchResult.now()
            if let error = prefs.lastError { throw HarnessError.failure("the writer's write failed: \(error)") }
            Console.say("\(number) \(returned) \(started)")
        }
    }
}


/// The floor: a bare inotify instance watching the directory, read by a thread blocked in `read()`,
/// which notes when each rename onto the domain file woke it.
private final class InotifyWakeups: @unchecked Sendable {
    /// When each rename woke the thread.
    let times = WaitableValue<[UInt64]>([])
    private let finished = WaitableValue(false)
    private let descriptor: Int32
    private let watch: Int32

    init(directory: String, fileName: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        watch = descriptor >= 0 ? inotify_add_watch(descriptor, directory, UInt32(IN_MOVED_TO)) : -1
        guard watch >= 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw HarnessError.failure("cannot watch \(directory) with inotify: \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in listen(for: fileName) }
        thread.start()
    }

    private func listen(for fileName: String) {
        let header = MemoryLayout<inotify_event>.size
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ended = false
        while !ended {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            let time = BenchResult.now()
            guard count > 0 else { break }
            var offset = 0, hit = false
            buffer.withUnsafeBytes { bytes in
                while offset + header <= count {
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let name = bytes[(offset + header)..<(offset + header + Int(event.len))].prefix { $0 != 0 }
                    if event.mask & UInt32(IN_IGNORED) != 0 { ended = true }
                    if event.mask & UInt32(IN_MOVED_TO) != 0 && String(decoding: name, as: UTF8.self) == fileName { hit = true }
                    offset += header + Int(event.len)
                }
            }
            if hit { times.update { $0.append(time) } }
        }
        finished.update { $0 = true }
    }

    /// Removes the watch, which wakes the thread with `IN_IGNORED`, waits for it to end, and closes.
    func stop() {
        inotify_rm_watch(descriptor, watch)
        _ = finished.wait(timeout: nil) { $0 }
        close(descriptor)
    }
}

extension BenchCommand {
    /// Printed after the external-change line and in the help: why its figures from the write
    /// returning may be negative, which looks like a bug in the timing otherwise.
    static let negativeFiguresNote = "note: *_from_return_us may be negative: the watcher is often told before the writer's write returns, since the kernel queues the event inside rename() and the writer still unlocks and closes after it"

    /// A writer process sets an entry; the measuring process's instance, watching for changes made
    /// elsewhere, is told in its key-path observer. Ours: from the writer's write starting (and, as extra
    /// figures, from it returning) to the handler call; floor: to the wake-up of a bare inotify watch of
    /// the same directory. Then the CPU time the process uses over `idleSeconds` with the watcher alive.
    static func externalChangeCase(_ workspace: BenchWorkspace, rounds: Int, idleSeconds: Double) throws -> BenchResult {
        let directory = workspace.root + "/external"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let prefs = BenchExternalPreferences(key: "settings", suite: try BenchExternalPreferences.suite(directory: directory))
        prefs["count"] = -1
        if let error = prefs.lastError { throw HarnessError.failure("cannot write in \(directory): \(error)") }
        // When the watcher's handler saw each value.
        let handlerTimes = WaitableValue<[Int: UInt64]>([:])
        prefs.watchesExternalChanges = true
        let observation = prefs.observe(\.values, options: [.new]) { _, change in
            guard let number = change.newValue?["count"] as? Int else { return }
            let time = BenchResult.now()
            handlerTimes.update { $0[number] = time }
        }
        defer {
            observation.invalidate()
            prefs.watchesExternalChanges = false
        }
        let wakeups = try InotifyWakeups(directory: directory, fileName: BenchExternalPreferences.domainName + ".plist")
        defer { wakeups.stop() }

        let writer = try HarnessChild([name, BenchExternalWriter.option, directory], role: "the writer process")

        let warmUp = min(20, max(1, rounds / 10))
        var fromStart: (ours: [Double], floor: [Double]) = ([], [])
        var fromReturn: (ours: [Double], floor: [Double]) = ([], [])
        var writes: [Double] = []
        for number in 0..<(warmUp + rounds) {
            let wakeupsBefore = wakeups.times.current.count
            try? writer.send("\(number)")
            let reply = writer.nextLine()?.split(separator: " ").compactMap { UInt64($0) } ?? []
            guard reply.count == 3, reply[0] == UInt64(number) else {
                throw HarnessError.failure("the writer process ended or answered wrongly (exit status \(writer.finish()))")
            }
            let (returned, started) = (reply[1], reply[2])
            _ = handlerTimes.wait(timeout: 30) { $0[number] != nil }
            _ = wakeups.times.wait(timeout: 30) { $0.count > wakeupsBefore }
            let heard = handlerTimes.current[number]
            let woke = wakeups.times.current.dropFirst(wakeupsBefore).first
            guard let heard, let woke else {
                _ = writer.finish()
                throw HarnessError.failure("the watcher was not told of write \(number) within 30 seconds")
            }
            guard number >= warmUp else { continue }
            func micro(_ later: UInt64, _ earlier: UInt64) -> Double { (Double(later) - Double(earlier)) / 1_000 }
            fromStart.ours.append(micro(heard, started))
            fromStart.floor.append(micro(woke, started))
            fromReturn.ours.append(micro(heard, returned))
            fromReturn.floor.append(micro(woke, returned))
            writes.append(micro(returned, started))
        }
        let status = writer.finish()
        guard status == 0 else { throw HarnessError.failure("the writer process failed (exit status \(status))") }

        let idleCPU = Self.cpuMicroseconds { usleep(UInt32(idleSeconds * 1_000_000)) }
        var result = BenchResult(name: "external-change", ours: fromStart.ours, peer: nil, floor: fromStart.floor, bytes: nil)
        let format = BenchResult.format
        result.figures = [
            ("ours_p99_us", format(BenchResult.percentile(fromStart.ours, 0.99))),
            ("floor_p99_us", format(BenchResult.percentile(fromStart.floor, 0.99))),
            ("ours_from_return_us", format(BenchResult.median(fromReturn.ours))),
            ("ours_from_return_p99_us", format(BenchResult.percentile(fromReturn.ours, 0.99))),
            ("floor_from_return_us", format(BenchResult.median(fromReturn.floor))),
            ("floor_from_return_p99_us", format(BenchResult.percentile(fromReturn.floor, 0.99))),
            ("write_us", format(BenchResult.median(writes))),
            ("idle_s", String(format: "%g", idleSeconds)),
            ("idle_cpu_us", String(idleCPU)),
        ]
        return result
    }

    /// The user and system CPU time, in microseconds, the whole process uses while `body` runs.
    private static func cpuMicroseconds(_ body: () -> Void) -> Int {
        func used() -> Int {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
        }
        let before = used()
        body()
        return used() - before
    }
}
