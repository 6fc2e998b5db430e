import Foundation

// Names kept so that code written for the Apple-platform RVS_PersistentPrefs 1.7 compiles unchanged on
// Linux. Nothing here adds behaviour; each is another name for something the library already has.
// (`PrefsError.noStoredPrefsForKey(key:)` belongs here too, but an enum case cannot move out of its
// enum: it is declared, and documented as never produced, in PrefsError.swift.)

extension RVS_PersistentPrefs {
    /// The error type of ``lastError``: ``PrefsError``, under the name the Apple-platform library nests it.
    public typealias PrefsError = PrefsStorage.PrefsError

    /// The error numbers of failed system calls: ``PrefsErrno``, nameable through the class, since the
    /// class shadows the module's name (`RVS_PersistentPrefs.X` always means a member of the class).
    public typealias Errno = PrefsErrno

    /// Removes this collection; the same as ``clear()``, kept for compatibility. It does not erase
    /// the domain, other collections or other suites (except that, as with ``clear()``, an unreadable
    /// domain file is moved aside first, taking the other collections with it).
    public func deleteAll() {
        clear()
    }
}

/// The Apple-platform name of the observation token, so that code written for it compiles unchanged.
public typealias NSKeyValueObservation = PrefsObservation
/// The Apple-platform name of the observing options.
public typealias NSKeyValueObservingOptions = PrefsObservingOptions
/// The Apple-platform name of a change notification.
public typealias NSKeyValueObservedChange<Value> = PrefsObservedChange<Value>
