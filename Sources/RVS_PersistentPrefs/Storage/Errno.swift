import Glibc

/// An error number from a failed system call, in the manner of swift-system's `Errno`.
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
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C `errno` value.
    public let rawValue: Int32

    /// Wraps a C `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The `errno` of the calling thread, read right after a failed call.
    static var current: Errno { Errno(rawValue: Glibc.errno) }

    /// `ENOENT`: no such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `ENOSPC`: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EROFS`: read-only file system.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// `EINTR`: the call was interrupted by a signal; the storage layer retries it.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`: an input/output error.
    public static let ioError = Errno(rawValue: EIO)
    /// `EEXIST`: the file exists.
    public static let fileExists = Errno(rawValue: EEXIST)

    /// The C library's message for the number, for example "No space left on device", or
    /// `errno <number>` for a number it does not know.
    public var description: String {
        guard let message = strerror(rawValue) else { return "errno \(rawValue)" }
        return String(cString: message)
    }
}
