import Foundation
import Glibc

/// A child process started from an executable built with the tests (the `TestWorker`, the `harness`,
/// `python3`), talked to through pipes.
package final class ChildProcess: @unchecked Sendable {
    package let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer: [UInt8] = []

    /// The directory of the test bundle, where SwiftPM also puts the package's executables.
    package static let buildDirectory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }()

    /// Starts `executable` (a name in the build directory, or an absolute path) with `arguments`.
    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let path = executable.hasPrefix("/") ? executable : Self.buildDirectory + "/" + executable
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Starts the test worker (see Tests/TestWorker/main.swift).
    package static func worker(_ arguments: String...) throws -> ChildProcess {
        try ChildProcess("TestWorker", arguments)
    }

    package var processIdentifier: Int32 { process.processIdentifier }

    /// Sends one line to the child's standard input.
    package func send(_ line: String) {
        writeToChild(Data((line + "\n").utf8))
    }

    /// Sends raw bytes to the child's standard input.
    package func sendBytes(_ bytes: [UInt8]) {
        if !bytes.isEmpty { writeToChild(Data(bytes)) }
    }

    /// Writes to the child's standard input, which it may have closed by exiting already (a program that refuses
    /// its arguments at once): the write then fails, and the test finds out from what it reads next, instead of the
    /// whole test process ending with `SIGPIPE`, as it did once on a loaded machine. The signal is held back on this
    /// thread for the write and dropped if the write raised it; its disposition stays the default, which children
    /// inherit (a test's shell pipeline relies on it).
    private func writeToChild(_ data: Data) {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try? input.fileHandleForWriting.write(contentsOf: data)
        var pending = sigset_t()
        sigpending(&pending)
        if sigismember(&pending, SIGPIPE) == 1 {
            var now = timespec()
            _ = sigtimedwait(&pipeSignal, nil, &now)
        }
    }

    /// The rest of standard output, as bytes.
    package func readAllOutputBytes() -> [UInt8] {
        [UInt8](output.fileHandleForReading.readDataToEndOfFile())
    }

    /// Closes the child's standard input.
    package func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// The next line of the child's standard output, or `nil` at its end.
    package func readLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                if buffer.isEmpty { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The rest of standard output.
    package func readAllOutput() -> String {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    /// All of standard error (call after the child has exited or closed it).
    package func readErrors() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Waits for the child to end.
    /// - Returns: Its exit status, or 128 + the signal that ended it.
    @discardableResult
    package func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Sends `signal` to the child.
    package func kill(_ signal: Int32 = SIGKILL) {
        Glibc.kill(process.processIdentifier, signal)
    }
}

/// The interpreter that `python3` on the `PATH` runs, asked once. A version manager's `python3` (pyenv's
/// is a shell script that runs more programs) costs the tests more than the interpreter itself at every call.
/// - Returns: `python3` itself when the interpreter cannot say where it is.
package let python3: String = {
    guard let child = try? ChildProcess("/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"]) else { return "python3" }
    let path = child.readAllOutput().trimmingCharacters(in: .whitespacesAndNewlines)
    return child.wait() == 0 && path.hasPrefix("/") && access(path, X_OK) == 0 ? path : "python3"
}()

/// Starts python3 (see ``python3``) with `arguments`, without the `site` module: the scripts use the standard
/// library only, and a version manager's site-packages cost more than the interpreter's start (13 of 33 ms).
package func pythonProcess(_ arguments: [String]) throws -> ChildProcess {
    python3.hasPrefix("/") ? try ChildProcess(python3, ["-S"] + arguments) : try ChildProcess("/usr/bin/env", ["python3", "-S"] + arguments)
}

/// Runs python3 with `script`, feeding `input` on standard input (more than a pipe holds only to a script that reads
/// all of its input before it writes).
/// - Returns: What the script wrote to standard output.
package func python(_ script: String, input: [UInt8] = []) throws -> [UInt8] {
    let child = try pythonProcess(["-c", script])
    child.sendBytes(input)
    child.closeInput()
    let output = child.readAllOutputBytes()
    guard child.wait() == 0 else { throw PythonFailed(message: child.readErrors()) }
    return output
}

package struct PythonFailed: Error { package let message: String }
