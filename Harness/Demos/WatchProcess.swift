// The watch of the `share` demo as a child process of the phone, spoken to over pipes.

import Foundation

/// The watch as a child process of the phone, spoken to over its standard input and output.
final class WatchProcess {
    /// What the watch prints when it has opened the suite and waits for its turn.
    static let readyLine = "watch is ready"
    /// What the phone sends when the watch may read the phone's message and answer.
    static let yourTurnLine = "your turn"

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let reader: LineReader

    /// Starts this same executable as `harness share --role watch --paired --directory DIRECTORY`.
    init(directory: String) throws {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["share", "--role", "watch", "--paired", "--directory", directory]
        process.standardInput = input
        process.standardOutput = output
        // Its standard error is ours: its errors reach the user directly.
        do {
            try process.run()
        } catch {
            throw HarnessError.failure("cannot start the watch (\(executable)): \(error.localizedDescription)")
        }
        reader = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
    }

    deinit {
        // If the phone failed midway, the watch must not be left waiting for its turn.
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.waitUntilExit() }
    }

    /// Shows the watch's lines until it prints `marker`.
    func relayLines(until marker: String) throws {
        while let line = reader.nextLine() {
            if line == marker { return }
            Console.say(line)
        }
        throw HarnessError.failure("the watch ended before it was ready (exit status \(finish()))")
    }

    /// Tells the watch to take its turn, shows what it prints, and waits for it to finish.
    func takeTurn() throws {
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((Self.yourTurnLine + "\n").utf8))
            try input.fileHandleForWriting.close()
        } catch {
            throw HarnessError.failure("the watch went away before its turn (exit status \(finish()))")
        }
        while let line = reader.nextLine() { Console.say(line) }
        let status = finish()
        guard status == 0 else { throw HarnessError.failure("the watch failed (exit status \(status))") }
    }

    /// Waits for the watch to end and returns its exit status.
    private func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
