import Foundation

extension RVS_PersistentPrefs {
    /// What went wrong in an operation: a rejected write, or storage that could not be read or written.
    ///
    /// Operations of ``RVS_PersistentPrefs`` never throw; they report through
    /// ``RVS_PersistentPrefs/lastError``. The storage types (``DefaultsSuite`` and the
    /// ``DomainStorage`` backends) throw these same errors. Every case says what happened and where:
    /// the rejected entry names, the storage key, or the file's path with the failed system call.
    /// No case ever carries a stored value.
    ///
    /// Whatever the case, the failed operation changed nothing on disk.
    public enum PrefsError: Error, CustomStringConvertible {
        /// A write names entries that are not in ``RVS_PersistentPrefs/keys``.
        ///
        /// `invalidElements` lists the rejected names, sorted. Nothing from the write was saved.
        case incorrectKeys(invalidElements: [String])

        /// A write holds values that are not property-list values.
        ///
        /// `invalidElements` lists the top-level entry names, sorted, whose value is or contains
        /// something else (`NSNull`, `URL`, `UUID`, a struct, a dictionary with non-string keys,
        /// `nil` inside a container, …). Nothing from the write was saved.
        case valuesNotPlistCompatible(invalidElements: [String])

        /// The selected defaults domain cannot be used: its name cannot be a file name, or its
        /// directory cannot be created. `reason` says which name or directory, and why.
        ///
        /// Nothing was read from or written to any other place instead.
        case userDefaultsUnavailable(reason: String)

        /// The value stored under the storage key `key` is not a string-keyed dictionary.
        ///
        /// Reads return an empty collection. Merges and in-place changes write nothing; assigning a
        /// whole ``RVS_PersistentPrefs/values`` or calling ``RVS_PersistentPrefs/clear()`` replaces it.
        case invalidStoredValue(key: String)

        /// The domain file at `path` is not a property list whose root is a string-keyed dictionary.
        ///
        /// The file is left as it is. A deliberate whole replacement (assigning
        /// ``RVS_PersistentPrefs/values`` or calling ``RVS_PersistentPrefs/clear()``) first moves it
        /// aside to a name beginning with the file's own name and `.unreadable-`, and never deletes it.
        case domainUnreadable(path: String, reason: String)

        /// A system call failed while reading the domain file at `path`.
        case readFailed(path: String, operation: String, errno: Errno)

        /// A system call failed while writing the domain at `path` (for example `write` with
        /// ``Errno/noSpace``). The previous file is intact, byte for byte.
        case writeFailed(path: String, operation: String, errno: Errno)

        /// Kept for source compatibility with the Apple-platform library; never produced, since a
        /// missing collection is simply empty.
        case noStoredPrefsForKey(key: String)

        /// An error that fits no other case, with its cause when there is one.
        case unknownError(error: Error?)

        /// One sentence saying what happened and where.
        public var description: String {
            switch self {
            case .incorrectKeys(let names):
                return "Rejected write: entry names not in keys: \(names.joined(separator: ", "))"
            case .valuesNotPlistCompatible(let names):
                return "Rejected write: values that are not property-list values under: \(names.joined(separator: ", "))"
            case .userDefaultsUnavailable(let reason):
                return "Defaults domain unavailable: \(reason)"
            case .invalidStoredValue(let key):
                return "The value stored under the storage key '\(key)' is not a string-keyed dictionary"
            case .domainUnreadable(let path, let reason):
                return "Unreadable domain file \(path): \(reason)"
            case .readFailed(let path, let operation, let errno):
                return "Could not read \(path): \(operation) failed: \(errno)"
            case .writeFailed(let path, let operation, let errno):
                return "Could not write \(path): \(operation) failed: \(errno); the previous file is unchanged"
            case .noStoredPrefsForKey(let key):
                return "No stored preferences for the storage key '\(key)'"
            case .unknownError(let error):
                return "Unknown error" + (error.map { ": \($0)" } ?? "")
            }
        }
    }
}

/// The errors of the library and its storage types; the same type as ``RVS_PersistentPrefs/PrefsError``.
public typealias PrefsError = RVS_PersistentPrefs.PrefsError
