// How every subcommand reports a failure: one line on standard error and an exit status.

import RVS_PersistentPrefs

/// A failure to report: one line on standard error, then exit with `status`.
package struct HarnessError: Error, CustomStringConvertible {
    package let message: String
    package let status: Int32

    package init(message: String, status: Int32) {
        (self.message, self.status) = (message, status)
    }

    /// A library error, said as the library says it, followed by what to do about it when that is clear.
    package init(_ error: PrefsError) {
        self.init(message: error.description + (Self.remedy(for: error).map { "; " + $0 } ?? ""), status: 1)
    }

    /// Bad usage: an unknown verb or option, a missing or extra argument (exit status 2).
    package static func usage(_ message: String) -> HarnessError { HarnessError(message: message, status: 2) }

    /// Bad input or a failed operation (exit status 1).
    package static func failure(_ message: String) -> HarnessError { HarnessError(message: message, status: 1) }

    /// Exit with `status`, the failure having been reported already (by a child process that shares
    /// this process's standard error).
    package static func alreadyReported(status: Int32) -> HarnessError { HarnessError(message: "", status: status) }

    package var description: String { message }

    /// What a person at a shell does about `error`, when one thing obviously helps; the library's own
    /// descriptions say what happened and where, and leave the tool to the tool.
    package static func remedy(for error: PrefsError) -> String? {
        switch error {
        case .domainUnreadable:
            return "replace it with `\(Tool.command) import DOMAIN FILE` (which moves the unreadable file aside), or see \"Repairing deliberately\" in Errors and Recovery"
        case .readFailed(let path, _, let errno) where errno == .permissionDenied,
             .writeFailed(let path, _, let errno) where errno == .permissionDenied:
            return "check the owner and mode of \(path) and of its directory (ls -ld)"
        case .writeFailed(_, _, let errno) where errno == .noSpace:
            return "free some space on that file system, then retry"
        case .writeFailed(_, _, let errno) where errno == .readOnlyFileSystem:
            return "the file system is mounted read-only; use --directory to work on a copy elsewhere"
        case .domainTooLarge:
            return "delete keys that are no longer needed (\(Tool.command) delete DOMAIN KEY)"
        default:
            return nil
        }
    }
}
