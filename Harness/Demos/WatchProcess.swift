// The watch of the `share` demo as a child process of the phone, spoken to over pipes.

import Foundation

/// The watch as a child process of the phone, spoken to over its standard input and output.
final class WatchProcess {
    /// What the watch prints when it has opened the suite and waits for its turn.
    static let readyLine = "watch is ready"
    /// What the phone sends when the watch may read the phone's message and answer.
    static let yourTurnLine = "your turn"

    private let child: HarnessChild

    /// Starts this same executable as `harness share --role watch --paired --directory DIRECTORY`, with
    /// `--etcd ENDPOINTS` when the two share the suite through etcd.
    init(directory: String, etcd: String? = nil) throws {
        child = try HarnessChild(["share", "--role", "watch", "--paired", "--directory", directory]
                                 + (etcd.map { ["--etcd", $0] } ?? []), role: "the watch")
    }

    /// Shows the watch's lines until it prints `marker`.
    func relayLines(until marker: String) throws {
        while let line = child.nextLine() {
            if line == marker { return }
            Console.say(line)
        }
        throw HarnessError.failure("the watch ended before it was ready (exit status \(child.finish()))")
    }

    /// Tells the watch to take its turn, shows what it prints, and waits for it to finish.
    func takeTurn() throws {
        do {
            try child.send(Self.yourTurnLine)
            try child.closeInput()
        } catch {
            throw HarnessError.failure("the watch went away before its turn (exit status \(child.finish()))")
        }
        while let line = child.nextLine() { Console.say(line) }
        let status = child.finish()
        guard status == 0 else { throw HarnessError.failure("the watch failed (exit status \(status))") }
    }
}
