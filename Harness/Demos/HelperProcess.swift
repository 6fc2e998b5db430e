// The helper of the `share` demo as a child process of the app, spoken to over pipes.

import Foundation
import PrefsTool

/// The helper as a child process of the app, spoken to over its standard input and output.
final class HelperProcess {
    /// What the helper prints when it has opened the suite and waits for its turn.
    static let readyLine = "helper is ready"
    /// What the app sends when the helper may read the app's message and answer.
    static let yourTurnLine = "your turn"

    private let child: HarnessChild

    /// Starts this same executable as `harness share --role helper --paired --directory DIRECTORY`, with
    /// `--etcd ENDPOINTS` when the two share the suite through etcd.
    init(directory: String, etcd: String? = nil) throws {
        child = try HarnessChild(["share", "--role", "helper", "--paired", "--directory", directory]
                                 + (etcd.map { ["--etcd", $0] } ?? []), role: "the helper")
    }

    /// Shows the helper's lines until it prints `marker`.
    func relayLines(until marker: String) throws {
        while let line = child.nextLine() {
            if line == marker { return }
            Console.say(line)
        }
        throw HarnessError.failure("the helper ended before it was ready (exit status \(child.finish()))")
    }

    /// Tells the helper to take its turn, shows what it prints, and waits for it to finish.
    func takeTurn() throws {
        do {
            try child.send(Self.yourTurnLine)
            try child.closeInput()
        } catch {
            throw HarnessError.failure("the helper went away before its turn (exit status \(child.finish()))")
        }
        while let line = child.nextLine() { Console.say(line) }
        let status = child.finish()
        guard status == 0 else { throw HarnessError.failure("the helper failed (exit status \(status))") }
    }
}
