import Foundation
import Glibc
import Testing
import TestSupport

/// The watch engine's drain takes what is queued when it starts, not what keeps arriving: a drain that
/// read until the queue was empty never ended while something wrote in a watched directory without pause,
/// and every read of the process waited for it.
@Suite("Reads while events never stop arriving")
struct EventStormTests {
    /// strace, whose trace written into the watched directory makes an event of every system call the
    /// process makes, and so of every read of its own events: the storm never stops.
    /// (Only where it can trace: a container may refuse ptrace.)
    static let strace: String? = {
        guard let path = ["/usr/bin/strace", "/bin/strace"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
              let probe = try? ChildProcess(path, ["-qq", "-o", "/dev/null", "/bin/true"]) else { return nil }
        return probe.wait() == 0 ? path : nil
    }()

    @Test("Reads finish while every system call of the process adds an event in a directory it watches",
          .enabled(if: strace != nil, "strace is not installed or cannot trace here: apt-get install strace"))
    func readsFinishDuringAnEventStorm() throws {
        let directory = TemporaryDirectory()
        // The administrators' directories do not exist, so their watches are on the nearest existing
        // ancestor: the directory the trace is written in.
        let missing = directory.appending("none/RVS_PersistentPrefs")
        let harness = ChildProcess.buildDirectory + "/harness"
        let traced = try ChildProcess(Self.strace!, ["-f", "-qq", "-o", directory.appending("trace"), harness, "bench",
                                                "--count-reads", "read:200", "--directory", directory.appending("work")],
                                      environment: ["XDG_CONFIG_DIRS": missing, "RVS_PREFS_MANAGED_DIRECTORY": missing])
        // A hang fails the test instead of stopping the suite.
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            if finished.wait(timeout: .now() + 60) == .timedOut { traced.kill() }
        }
        let output = traced.readAllOutput()
        let status = traced.wait()
        finished.signal()
        #expect(status == 0, "harness under strace: \(traced.readErrors())")
        #expect(output.contains("reads=200"), "\(output)")
    }
}
