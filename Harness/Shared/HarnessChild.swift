// This same executable run as a child process, spoken to line by line over pipes (the helper of the
// `share` demo, the writer of the bench's `external-change` case).

import Foundation
import PrefsTool

/// The harness run again as a child process, spoken to over its standard input and output. Its standard
/// error is ours, so that its errors reach the user directly.
final class HarnessChild {
    /// This executable, as the kernel knows it.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let reader: LineReader

    /// Starts `harness ARGUMENTS`; `role` names the child in the error when it cannot start.
    init(_ arguments: [String], role: String) throws {
        let executable = Self.executable
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw HarnessError.failure("cannot start \(role) (\(executable)): \(error.localizedDescription)")
        }
        reader = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
    }

    deinit {
        // If this process failed midway, the child must not be left waiting for input.
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.waitUntilExit() }
    }

    /// Sends one line to the child's standard input; throws when the child has gone.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Ends the child's standard input: it reads end of file.
    func closeInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// The next line the child printed, or `nil` when its output ended.
    func nextLine() -> String? { reader.nextLine() }

    /// Ends the child's input, waits for it to end, and returns its exit status.
    func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
