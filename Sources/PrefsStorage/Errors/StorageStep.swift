import Foundation

extension PrefsError {
    /// The step of a read or write of a domain file that failed, with the file it concerned.
    ///
    /// Carried by ``PrefsError/readFailed(path:step:errno:)`` and
    /// ``PrefsError/writeFailed(path:step:errno:)`` beside the ``PrefsErrno`` that says why, so that a
    /// program can tell, for example, a lock file it may not open from a full disk, without parsing text.
    ///
    /// ## Topics
    ///
    /// ### Reading the Domain File
    /// - ``stat``
    /// - ``open``
    /// - ``fstat``
    /// - ``read``
    /// - ``close``
    ///
    /// ### Writing the Domain File, in Order
    /// - ``createDirectory(_:)``
    /// - ``openLockFile(_:)``
    /// - ``lock(_:)``
    /// - ``keepUnreadableFileAside(_:)``
    /// - ``createTemporaryFile(_:)``
    /// - ``writeTemporaryFile(_:)``
    /// - ``syncTemporaryFile(_:)``
    /// - ``closeTemporaryFile(_:)``
    /// - ``renameOverDomainFile(_:)``
    /// - ``syncDirectory(_:)``
    /// - ``removeDomainFile(_:)``
    ///
    /// ### Describing a Step
    /// - ``isAfterReplacement``
    /// - ``description``
    public enum Step: Sendable, Hashable, CustomStringConvertible {
        /// `stat` of the domain file, to see whether it changed.
        case stat
        /// Opening the domain file for reading.
        case open
        /// `fstat` of the opened domain file.
        case fstat
        /// Reading the opened domain file.
        case read
        /// Closing the domain file after reading it.
        case close
        /// Creating the directory at this path (or one of its parents) with mode 0700.
        case createDirectory(String)
        /// Opening or creating the lock file at this path.
        case openLockFile(String)
        /// Taking the exclusive `flock` on the lock file at this path.
        case lock(String)
        /// Giving an unreadable domain file this second name before a repair replaces it.
        case keepUnreadableFileAside(String)
        /// Creating the temporary file at this path.
        case createTemporaryFile(String)
        /// Writing the temporary file at this path.
        case writeTemporaryFile(String)
        /// `fsync` of the temporary file at this path (durable mode).
        case syncTemporaryFile(String)
        /// Closing the temporary file at this path.
        case closeTemporaryFile(String)
        /// Renaming the temporary file at this path over the domain file.
        case renameOverDomainFile(String)
        /// `fsync` of the directory at this path (durable mode), after the rename.
        case syncDirectory(String)
        /// Removing the domain file at this path (a tool deleting the whole domain).
        case removeDomainFile(String)

        /// Whether the step comes after the new file replaced the old one: only ``syncDirectory(_:)``.
        /// A write that fails there has changed the file, though the change may not survive a power
        /// failure; a write that fails at any other step left the previous file as it was.
        public var isAfterReplacement: Bool {
            if case .syncDirectory = self { return true }
            return false
        }

        /// The step in a few words, naming its file: for example `rename /p/.app.plist.tmp over the domain file`.
        public var description: String {
            switch self {
            case .stat: return "stat"
            case .open: return "open"
            case .fstat: return "fstat"
            case .read: return "read"
            case .close: return "close"
            case .createDirectory(let path): return "create directory \(path)"
            case .openLockFile(let path): return "open lock file \(path)"
            case .lock(let path): return "lock \(path)"
            case .keepUnreadableFileAside(let path): return "keep the unreadable file aside as \(path)"
            case .createTemporaryFile(let path): return "create temporary file \(path)"
            case .writeTemporaryFile(let path): return "write temporary file \(path)"
            case .syncTemporaryFile(let path): return "fsync temporary file \(path)"
            case .closeTemporaryFile(let path): return "close temporary file \(path)"
            case .renameOverDomainFile(let path): return "rename \(path) over the domain file"
            case .syncDirectory(let path): return "fsync directory \(path)"
            case .removeDomainFile(let path): return "remove \(path)"
            }
        }
    }
}
