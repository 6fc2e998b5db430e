// Writing a file that a user named, without harming what is already there.

import Foundation
import Glibc

/// Writes `data` to `path` as a whole: a reader never sees half of it, a new file is private to its
/// owner, and nothing but a regular file is ever replaced.
///
/// - A new file gets mode 0600 (preferences are nobody else's business); an existing regular file keeps
///   its mode.
/// - Anything else at `path` (a symbolic link, dangling or not, a FIFO, a device, a directory, a socket)
///   is refused before anything is created: renaming over it would replace the link or node itself.
/// - The data goes to a temporary file in the same directory, created with `O_EXCL` and mode 0600, and
///   is renamed over `path` only when completely written.
///
/// - Parameter what: The operation, for the error: "export" makes "cannot export to PATH: ...".
/// - Throws: A failure naming `path` and the reason; then nothing was changed.
package func replaceRegularFile(at path: String, with data: Data, for what: String) throws(HarnessError) {
    let failure = { (reason: String) in HarnessError.failure("cannot \(what) to \(path): \(reason)") }
    var mode: mode_t = 0o600
    var info = stat()
    if lstat(path, &info) == 0 {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw failure("it is \(fileKind(info.st_mode)), not a regular file; \(what) replaces only a regular file")
        }
        mode = info.st_mode & 0o777
    } else if errno != ENOENT {
        throw failure(SystemError.current.description)
    }

    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let temporary = (directory.isEmpty ? "." : directory) + "/.\(name).harness-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw failure("cannot create a temporary file beside it: \(SystemError.current)") }
    var isOpen = true
    do throws(SystemError) {
        // fchmod, unlike the mode given to open, is not narrowed by the umask.
        if fchmod(descriptor, mode) != 0 { throw .current }
        try PosixIO.writeAll(data, to: descriptor)
        isOpen = false
        if close(descriptor) != 0 { throw .current }
        if rename(temporary, path) != 0 { throw .current }
    } catch {
        if isOpen { close(descriptor) }
        unlink(temporary)
        throw failure(error.description)
    }
}

/// What `lstat` found, in words: "a symbolic link", "a directory", ...
package func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFLNK: return "a symbolic link"
    case S_IFDIR: return "a directory"
    case S_IFIFO: return "a FIFO"
    case S_IFCHR, S_IFBLK: return "a device"
    case S_IFSOCK: return "a socket"
    default: return "not a regular file"
    }
}
