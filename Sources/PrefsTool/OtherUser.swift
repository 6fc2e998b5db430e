// `--user NAME`: another user's domains, as that user's programs see them, with that user's rights, the way
// `crontab -u` works. The process becomes the user (groups, group, user) before anything is read or written, so
// every file and lock file it makes is the user's own, and it can reach no more than the user could; the
// preferences directory is the default one under the user's home (their own $RVS_PREFS_DIRECTORY or
// $XDG_CONFIG_HOME cannot be known from here), unless --directory names another.

import Glibc
import RVS_PersistentPrefs

/// Becoming another user for the rest of the process.
package enum OtherUser {
    /// Becomes the user called `name`, and points the environment at that user's home.
    /// - Throws: A usage error when there is no such user; a failure when this process may not become it.
    package static func become(_ name: String) throws(HarnessError) {
        guard let entry = getpwnam(name) else { throw .usage("--user: there is no user '\(name)'") }
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        let home = String(cString: entry.pointee.pw_dir)
        if geteuid() != uid {
            guard geteuid() == 0 else { throw .failure("--user \(name) needs root (sudo), to act with that user's rights") }
            // Supplementary groups first, then the group, then the user: after setuid nothing else may change.
            guard initgroups(name, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
                throw .failure("cannot become the user \(name): \(SystemError.current)")
            }
        }
        setenv("HOME", home, 1)
        setenv("USER", name, 1)
        setenv("LOGNAME", name, 1)
        unsetenv("XDG_CONFIG_HOME")
        unsetenv(DefaultsLocations.directoryVariable)
    }
}

