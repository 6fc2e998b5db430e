// How every subcommand reports a failure: one line on standard error and an exit status.

import RVS_PersistentPrefs

/// A failure to report: one line on standard error, then exit with `status`.
struct HarnessError: Error, CustomStringConvertible {
    let message: String
    let status: Int32

    /// Bad usage: an unknown verb or option, a missing or extra argument (exit status 2).
    static func usage(_ message: String) -> HarnessError { HarnessError(message: message, status: 2) }

    /// Bad input or a failed operation (exit status 1).
    static func failure(_ message: String) -> HarnessError { HarnessError(message: message, status: 1) }

    /// Exit with `status`, the failure having been reported already (by a child process that shares
    /// this process's standard error).
    static func alreadyReported(status: Int32) -> HarnessError { HarnessError(message: "", status: status) }

    var description: String { message }
}

extension RVS_PersistentPrefs {
    /// Stops a demo when the library reported an error for the last operation, as it does in
    /// `lastError` rather than by throwing.
    func throwIfFailed() throws(HarnessError) {
        if let error = lastError { throw .failure(error.description) }
    }
}
