import Foundation
import Glibc

/// An error number from a failed system call, in the manner of swift-system's `PrefsErrno`.
///
/// Storage errors carry one of these, so that a caller can tell a full disk (``noSpace``) from a
/// permission problem (``permissionDenied``) without parsing text:
///
/// ```swift
/// if case .writeFailed(_, _, let errno)? = prefs.lastError, errno == .noSpace {
///     print("The disk is full")
/// }
/// ```
///
/// ## Topics
///
/// ### Error Numbers the Storage Layer Meets
/// - ``noSpace``
/// - ``permissionDenied``
/// - ``readOnlyFileSystem``
/// - ``ioError``
/// - ``noSuchFileOrDirectory``
/// - ``fileExists``
/// - ``interrupted``
///
/// ### Any Error Number
/// - ``init(rawValue:)``
/// - ``rawValue``
/// - ``description``
/// - ``errorDescription``
public struct PrefsErrno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C `errno` value.
    public let rawValue: Int32

    /// Wraps a C `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The `errno` of the calling thread, read right after a failed call.
    static var current: PrefsErrno { PrefsErrno(rawValue: Glibc.errno) }

    /// `ENOENT`: no such file or directory.
    public static let noSuchFileOrDirectory = PrefsErrno(rawValue: ENOENT)
    /// `ENOSPC`: no space left on the device.
    public static let noSpace = PrefsErrno(rawValue: ENOSPC)
    /// `EACCES`: permission denied.
    public static let permissionDenied = PrefsErrno(rawValue: EACCES)
    /// `EROFS`: read-only file system.
    public static let readOnlyFileSystem = PrefsErrno(rawValue: EROFS)
    /// `EINTR`: the call was interrupted by a signal; the storage layer retries it.
    public static let interrupted = PrefsErrno(rawValue: EINTR)
    /// `EIO`: an input/output error.
    public static let ioError = PrefsErrno(rawValue: EIO)
    /// `EEXIST`: the file exists.
    public static let fileExists = PrefsErrno(rawValue: EEXIST)

    /// The C library's message for the number, for example "No space left on device", or
    /// `errno <number>` for a number it does not know.
    public var description: String {
        guard let message = strerror(rawValue) else { return "errno \(rawValue)" }
        return String(cString: message)
    }
}

extension PrefsErrno: LocalizedError {
    /// The same text as ``description``, the system's message, so that `localizedDescription` gives it too.
    public var errorDescription: String? { description }
}
