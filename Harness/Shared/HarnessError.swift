// How every subcommand reports a failure: one line on standard error and an exit status.

import RVS_PersistentPrefs

/// A failure to report: one line on standard error, then exit with `status`.
struct HarnessError: Error, CustomStringConvertible {
    let message: String
    let status: Int32

    init(message: String, status: Int32) {
        (self.message, self.status) = (message, status)
    }

    /// A library error, said as the library says it, followed by what to do about it when that is clear.
    init(_ error: PrefsError) {
        self.init(message: error.description + (Self.remedy(for: error).map { "; " + $0 } ?? ""), status: 1)
    }

    /// Bad usage: an unknown verb or option, a missing or extra argument (exit status 2).
    static func usage(_ message: String) -> HarnessError { HarnessError(message: message, status: 2) }

    /// Bad input or a failed operation (exit status 1).
    static func failure(_ message: String) -> HarnessError { HarnessError(message: message, status: 1) }

    /// Exit with `status`, the failure having been reported already (by a child process that shares
    /// this process's standard error).
    static func alreadyReported(status: Int32) -> HarnessError { HarnessError(message: "", status: status) }

    var description: String { message }

    /// What a person at a shell does about `error`, when one thing obviously helps; the library's own
    /// descriptions say what happened and where, and leave the tool to the tool.
    static func remedy(for error: PrefsError) -> String? {
        switch error {
        case .domainUnreadable:
            return "replace it with `harness defaults import DOMAIN FILE` (which moves the unreadable file aside), or see \"Repairing deliberately\" in Errors and Recovery"
        case .readFailed(let path, _, let errno) where errno == .permissionDenied,
             .writeFailed(let path, _, let errno) where errno == .permissionDenied:
            return "check the owner and mode of \(path) and of its directory (ls -ld)"
        case .writeFailed(_, _, let errno) where errno == .noSpace:
            return "free some space on that file system, then retry"
        case .writeFailed(_, _, let errno) where errno == .readOnlyFileSystem:
            return "the file system is mounted read-only; use --directory to work on a copy elsewhere"
        case .domainTooLarge:
            return "delete keys that are no longer needed (harness defaults delete DOMAIN KEY)"
        default:
            return nil
        }
    }
}

extension RVS_PersistentPrefs {
    /// Stops a demo when the library reported an error for the last operation, as it does in
    /// `lastError` rather than by throwing.
    ///
    /// A collection that is not a dictionary may come from another domain than the app's (the global
    /// domain, most often, written with `defaults write -g`): the message then names that domain and
    /// its file, and how to remove the value, instead of leaving the app to be blamed.
    func throwIfFailed() throws(HarnessError) {
        guard let error = lastError else { return }
        if case .invalidStoredValue(let key) = error, let suite = userDefaults,
           let found = try? suite.find(key), found.domain != .persistent,
           let source = suite.sources.first(where: { $0.role == found.domain }) {
            let remedy = found.domain == .global ? "harness defaults delete -g \(key)" : "harness defaults delete DOMAIN \(key) in that domain"
            throw .failure("\(error.description): the \(found.domain) domain (\(source.storage.location)) supplies it, not this app's domain; remove it with `\(remedy)`")
        }
        throw HarnessError(error)
    }
}
