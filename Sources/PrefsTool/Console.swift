// Output to standard output and standard error, shared by every subcommand.

import Foundation
import Glibc
import PrefsStorage
import Synchronization

/// Output without C stdio buffering: every line reaches the terminal or pipe at once, in order, even when
/// standard output is a pipe to the other process of the `share` demo or to a test.
///
/// A failed write to standard output (a full disk, `> /dev/full`, a closed pipe) does not stop the
/// subcommand midway; it is remembered, and the harness reports it and exits non-zero at the end (see
/// ``outputFailure``), so that output that never arrived is never reported as a success.
package enum Console {
    private static let failure = PrefsMutex<SystemError?>(nil)

    /// The first failed write to standard output in this process, if any.
    package static var outputFailure: SystemError? { failure.withLock { $0 } }

    /// Writes `text` and a newline to standard output.
    package static func say(_ text: String = "") {
        write(text + "\n")
    }

    /// Writes `text` to standard output as it is.
    package static func write(_ text: String) {
        write(Data(text.utf8))
    }

    /// Writes raw bytes to standard output.
    package static func write(_ data: Data) {
        do {
            try PosixIO.writeAll(data, to: 1)
        } catch {
            failure.withLock { if $0 == nil { $0 = error } }
        }
    }

    /// Writes `text` and a newline to standard error. A failure there has nowhere left to be told.
    package static func complain(_ text: String) {
        try? PosixIO.writeAll(Data((text + "\n").utf8), to: 2)
    }

    /// Whether standard input is a terminal (then a prompt helps; for piped input it would be noise).
    package static var inputIsTerminal: Bool { isatty(0) == 1 }

    /// Runs `body` with standard error sent to /dev/null.
    ///
    /// Foundation's text property-list parser prints its own diagnostics on standard error for some
    /// malformed input; the harness reports the failure itself, in one line, so those must not leak.
    package static func withErrorsSilenced<Result>(_ body: () throws -> Result) rethrows -> Result {
        let saved = dup(2)
        let null = open("/dev/null", O_WRONLY)
        if saved >= 0 && null >= 0 { dup2(null, 2) }
        if null >= 0 { close(null) }
        defer {
            if saved >= 0 {
                dup2(saved, 2)
                close(saved)
            }
        }
        return try body()
    }
}
