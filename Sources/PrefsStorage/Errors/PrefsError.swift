import Foundation
import PrefsPropertyList

/// What went wrong in an operation: a rejected write, or storage that could not be read or written.
///
/// Operations of ``RVS_PersistentPrefs`` never throw; they report through
/// ``RVS_PersistentPrefs/lastError``. The storage types (``DefaultsSuite`` and the
/// ``DomainStorage`` backends) throw these same errors, as typed throws. Every case says what
/// happened and where: the rejected entry names, the storage key, or the file's path with the
/// failed system call. No case ever carries a stored value, so an error can be logged or shown
/// without leaking preferences.
///
/// The failed operation changed nothing, with two exceptions: a durable-mode write whose final
/// `fsync` of the directory fails (see ``writeFailed(path:step:errno:)``), and a write to a domain
/// kept by a server whose outcome could not be learnt (see ``outcomeUnknown(location:reason:)``):
/// it may have been applied, once.
///
/// The type is not `Equatable`; match its cases with patterns, and give a `switch` over it a
/// `default`, since later versions may add cases:
///
/// ```swift
/// if case .incorrectKeys(let names)? = prefs.lastError {
///     print("Rejected entry names: \(names)")
/// }
/// ```
///
/// ## Topics
///
/// ### Rejected Writes
/// - ``incorrectKeys(invalidElements:)``
/// - ``valuesNotPlistCompatible(invalidElements:)``
/// - ``valueNotAllowed(entry:reason:)``
///
/// ### Storage That Cannot Be Used or Read
/// - ``userDefaultsUnavailable(reason:)``
/// - ``invalidStoredValue(key:)``
/// - ``invalidStoredEntry(entry:reason:)``
/// - ``domainUnreadable(path:reason:)``
/// - ``readFailed(path:step:errno:)``
/// - ``storageUnreachable(location:reason:)``
///
/// ### Failed Writes
/// - ``outcomeUnknown(location:reason:)``
/// - ``writeFailed(path:step:errno:)``
/// - ``domainTooLarge(path:size:limit:)``
/// - ``collectionFromNewerVersion(stored:supported:)``
/// - ``Step``
///
/// ### Settings an Administrator Keeps
/// - ``forcedByAdministrator(entries:path:)``
/// - ``administratorFileIgnored(path:reason:)``
///
/// ### Kept for Compatibility
/// - ``noStoredPrefsForKey(key:)``
/// - ``unknownError(error:)``
///
/// ### Describing an Error
/// - ``description``
/// - ``errorDescription``
public enum PrefsError: Error, CustomStringConvertible {
    /// A write names entries that are not in ``RVS_PersistentPrefs/keys``.
    ///
    /// `invalidElements` lists the rejected names, sorted. Nothing from the write was saved.
    ///
    /// A subscript write or an initializer merge checks the whole collection that would result, so
    /// it also names an entry already stored under a name no longer in `keys` (left by an older
    /// version, for example), until that entry is removed with `prefs["name"] = nil`, which is
    /// allowed whatever the name.
    case incorrectKeys(invalidElements: [String])

    /// A write holds values that are not property-list values.
    ///
    /// `invalidElements` lists the top-level entry names, sorted, whose value is or contains
    /// something else (`NSNull`, `URL`, `UUID`, a struct, a dictionary with non-string keys,
    /// `nil` inside a container, an integer outside the `Int64` range, a nesting deeper than a
    /// domain file may hold, …). Nothing from the write was saved. Encode such values first, for
    /// example a `Codable` value to `Data` with `PropertyListEncoder`.
    case valuesNotPlistCompatible(invalidElements: [String])

    /// A write gave the typed entry `entry` a value its declaration does not allow (SPEC §14: an
    /// `@Entry(…, range:)` or `@Entry(…, allowed:)`); `reason` names the constraint, never the value.
    /// Nothing from the write was saved, whichever path made it: the property, the subscript,
    /// ``RVS_PersistentPrefs/values`` or `modify`.
    case valueNotAllowed(entry: String, reason: String)

    /// The selected defaults domain cannot be used: its name cannot be a file name (empty, `.`, `..`,
    /// with `/` or NUL, too long, or the global domain's own name), its directory is not an absolute
    /// path, or an override of ``RVS_PersistentPrefs/userDefaults`` returned `nil`. `reason` says
    /// which name or directory, and why. Nothing was read from or written to any other place instead.
    ///
    /// A directory that cannot be created is not this case: the first write reports it as
    /// ``writeFailed(path:step:errno:)`` at ``Step/createDirectory(_:)``.
    ///
    /// With no preferences directory at all (see ``DefaultsLocations``), writes fail with it, and reads,
    /// which still return an administrator's system defaults and forced entries, carry it as a warning
    /// (``RVS_PersistentPrefs/lastWarnings``).
    case userDefaultsUnavailable(reason: String)

    /// The value stored under the storage key `key` is not a string-keyed dictionary.
    ///
    /// Reads return an empty collection. Merges, subscript writes and in-place changes write
    /// nothing and keep the stored value; assigning a whole ``RVS_PersistentPrefs/values`` or
    /// calling ``RVS_PersistentPrefs/clear()`` replaces it, leaving other storage keys alone.
    case invalidStoredValue(key: String)

    /// The value stored for the typed entry `entry` (an `@Entry` property) does not decode as the
    /// entry's type. `reason` says what was expected, what kind of value was found, and where inside
    /// the value, without quoting it.
    ///
    /// The entry reads as its default; the stored value is kept, untouched, until the app writes that
    /// entry. Other entries are unaffected. The entry's throwing read reports this error instead of
    /// falling back to the default.
    case invalidStoredEntry(entry: String, reason: String)

    /// The domain file at `path` is not a binary or XML property list whose root is a
    /// string-keyed dictionary. `reason` describes the fault without quoting the file.
    ///
    /// The file is left as it is, and read again once it changes. Reads return an empty
    /// collection; merges, subscript writes and in-place changes write nothing. A deliberate whole
    /// replacement (assigning ``RVS_PersistentPrefs/values`` or calling
    /// ``RVS_PersistentPrefs/clear()``) first renames it to `<path>.unreadable-<seconds>` (with a
    /// `-<n>` suffix when taken), never deleting it, and then writes a domain file holding only
    /// that collection: collections of other storage keys stay in the moved-aside file.
    case domainUnreadable(path: String, reason: String)

    /// A system call failed while reading the domain file at `path`: `step` names it (`stat`,
    /// `open`, `read`, …) and `errno` says why, for example ``PrefsErrno/permissionDenied``.
    ///
    /// Nothing was written, and a deliberate replacement does not override this error: fix the
    /// file's permissions or the file system, then retry.
    case readFailed(path: String, step: Step, errno: PrefsErrno)

    /// A step of a write to the domain at `path` failed: `step` names the step and the file it
    /// concerned (creating the directory, opening or locking the lock file, writing the temporary
    /// file, renaming it over the domain file, moving an unreadable file aside, `fsync`), and `errno`
    /// says why, for example ``PrefsErrno/noSpace`` or ``PrefsErrno/readOnlyFileSystem``.
    ///
    /// The previous file is intact, byte for byte, and the temporary file is removed. The one
    /// exception is durable mode's last step, ``Step/syncDirectory(_:)`` (see
    /// ``Step/isAfterReplacement``): the new file is already in place, but may not survive a power failure.
    case writeFailed(path: String, step: Step, errno: PrefsErrno)

    /// A write was refused because the domain file it would produce, `size` bytes, is larger than
    /// `limit`, the most a read accepts: writing it would make every collection of the domain at
    /// `path` unreadable. Nothing was written; other collections are untouched.
    case domainTooLarge(path: String, size: Int, limit: Int)

    /// A domain kept by a server (an etcd cluster, through `PrefsEtcd`) could not be reached within the
    /// operation's timeout: `location` names the domain and its endpoints, `reason` what was tried at each
    /// endpoint and how it failed (never a credential or a value).
    ///
    /// Nothing was changed by the failed operation: it is safe to repeat, and the next operation tries
    /// again, so the domain recovers by itself when the server does. A write that may have been applied
    /// is never reported so; it is ``outcomeUnknown(location:reason:)``.
    case storageUnreachable(location: String, reason: String)

    /// A write to a domain kept by a server (an etcd cluster, through `PrefsEtcd`) reached the server, but
    /// the server became unreachable (it lost its quorum, or the member died) before the client could learn
    /// whether the change was applied: `location` names the domain and its endpoints, `reason` what was
    /// tried at each endpoint (never a credential or a value).
    ///
    /// The change is applied at most once: exactly as asked, as the change that directly follows the state
    /// it was computed from, or not at all; never twice, and never over another writer's change. Once the
    /// server answers again, a read shows which. What a caller may safely do:
    /// - read the entry again once the server answers, and decide from what is stored;
    /// - repeat a change that sets a value (an assignment, `prefs["mode"] = "dark"`): applying it twice
    ///   stores the same thing;
    /// - never repeat blindly a change that depends on the old value, such as an increment through
    ///   `modify`: if the first was applied, the repetition applies it a second time. Make such a change
    ///   idempotent instead (record in the same collection an identifier of the change, and have the
    ///   transform do nothing when it is already there), or accept that it may have happened once.
    case outcomeUnknown(location: String, reason: String)

    /// A write was refused because the collection was stored by a newer version of the app: its schema
    /// version, `stored`, is above `supported`, the ``RVS_PersistentPrefs/schemaVersion`` of this
    /// instance's class. The collection is read as it is; no write of this version changes it, so that
    /// an older app never overwrites what it does not understand (see <doc:SchemaEvolution>).
    case collectionFromNewerVersion(stored: Int, supported: Int)

    /// A write was refused because it would set or remove `entries`, which an administrator forces in
    /// the managed domain file at `path` (see <doc:Administration>). Refused as a whole, even when it
    /// writes the forced values: nothing was written and nobody was notified.
    case forcedByAdministrator(entries: [String], path: String)

    /// A system-wide or managed domain file at `path`, which an administrator keeps, was ignored:
    /// `reason` says why (not a property list, a value that is not a dictionary, or, for a managed file,
    /// an owner or mode that anyone but root or this user could have changed).
    ///
    /// The operation itself succeeded with the other domains' values, so an instance reports it among
    /// its warnings (``RVS_PersistentPrefs/lastWarnings``), never as its ``RVS_PersistentPrefs/lastError``:
    /// the ignored file supplies nothing until it is fixed, and the library never repairs or moves it.
    case administratorFileIgnored(path: String, reason: String)

    /// Kept for source compatibility with the Apple-platform library; never produced, since a
    /// missing collection is simply empty, without error.
    case noStoredPrefsForKey(key: String)

    /// An error that fits no other case, with its cause when there is one.
    ///
    /// The library produces it only for an unexpected failure. Subclasses may set it in
    /// ``RVS_PersistentPrefs/lastError`` for failures of their own, such as a value that could not
    /// be encoded.
    case unknownError(error: Error?)

    /// One sentence saying what happened and where: the entry names, storage key, or path and
    /// failed step. It never contains a stored value.
    public var description: String {
        switch self {
        case .incorrectKeys(let names):
            return "Rejected write: entry names not in keys: \(names.joined(separator: ", "))"
        case .valuesNotPlistCompatible(let names):
            return "Rejected write: values that are not property-list values under: \(names.joined(separator: ", "))"
        case .valueNotAllowed(let entry, let reason):
            return "Rejected write: the value of the entry '\(entry)' is not allowed: \(reason)"
        case .userDefaultsUnavailable(let reason):
            return "Defaults domain unavailable: \(reason)"
        case .invalidStoredValue(let key):
            return "The value stored under the storage key '\(key)' is not a string-keyed dictionary"
        case .invalidStoredEntry(let entry, let reason):
            return "The value stored for the entry '\(entry)' does not decode: \(reason); it reads as the entry's default until the entry is written"
        case .domainUnreadable(let path, let reason):
            return "Unreadable domain file \(path): \(reason)"
        case .readFailed(let path, let step, let errno):
            return "Could not read \(path): \(step) failed: \(errno)"
        case .writeFailed(let path, let step, let errno):
            if step.isAfterReplacement {
                return "Could not make the write of \(path) durable: \(step) failed: \(errno); the new contents are in place but may not survive a power failure"
            }
            return "Could not write \(path): \(step) failed: \(errno); nothing was changed"
        case .domainTooLarge(let path, let size, let limit):
            return "Rejected write: \(path) would be \(size) bytes, more than the \(limit) bytes a read accepts; nothing was written"
        case .storageUnreachable(let location, let reason):
            return "Could not reach \(location): \(reason)"
        case .outcomeUnknown(let location, let reason):
            return "Could not learn whether a write to \(location) was applied: \(reason); it was applied at most once (read again before repeating it)"
        case .collectionFromNewerVersion(let stored, let supported):
            return "Rejected write: the collection was stored by schema version \(stored), newer than the \(supported) this app supports; it is read as it is and never written over by this version"
        case .forcedByAdministrator(let entries, let path):
            return "Rejected write: \(entries.joined(separator: ", ")) \(entries.count == 1 ? "is" : "are") forced by the administrator in \(path); nothing was written"
        case .administratorFileIgnored(let path, let reason):
            return "Ignored the administrator's file \(path): \(reason); the other domains' values are used (ask the administrator to fix the file)"
        case .noStoredPrefsForKey(let key):
            return "No stored preferences for the storage key '\(key)'"
        case .unknownError(let error):
            return "Unknown error" + (error.map { ": \($0)" } ?? "")
        }
    }
}

extension PrefsError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` says what happened and where
    /// (Foundation on Linux otherwise gives "The operation could not be completed" and a number).
    public var errorDescription: String? { description }
}
