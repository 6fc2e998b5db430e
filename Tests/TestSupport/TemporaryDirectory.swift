import Foundation
import Glibc

/// A private directory for one test, removed with everything in it when the value goes away.
package final class TemporaryDirectory: @unchecked Sendable {
    package let path: String

    /// A private directory made in ``testDirectoryBase``.
    package convenience init() {
        self.init(under: testDirectoryBase)
    }

    /// A private directory made under `base` (mode 0700).
    package init(under base: String) {
        var template = Array(((base as NSString).appendingPathComponent("rvs-prefs-test-XXXXXX")).utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
        path = String(cString: created!)
    }

    /// A private directory at a path chosen by the caller (one that is the same every time a process
    /// asks), made now with mode 0700; whatever was there is removed first.
    package init(path: String) {
        try? FileManager.default.removeItem(atPath: path)
        precondition(mkdir(path, 0o700) == 0, "mkdir \(path) failed: \(String(cString: strerror(errno)))")
        self.path = path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/component`.
    package func appending(_ component: String) -> String { path + "/" + component }

    /// The names in the directory (or in `subdirectory`), sorted; empty when it does not exist.
    package func contents(_ subdirectory: String? = nil) -> [String] {
        let directory = subdirectory.map(appending) ?? path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}

/// Where this process makes its test directories: a directory of its own in the system's temporary directory, mode
/// 0711 (a user a test acts as may pass through it to a directory of its own), removed with everything in it when
/// the process exits.
///
/// Not the system's temporary directory itself: every directory on a watched path is watched, and the kernel's
/// cost to add a watch grows with the names the directory has cached, removed ones included. A day of test runs
/// making and removing their directories in /tmp left it costing 9 ms a watch, and every run added to it; a
/// directory removed takes the names cached in it along.
package let testDirectoryBase: String = {
    var template = Array(((NSTemporaryDirectory() as NSString).appendingPathComponent("rvs-prefs-tests-XXXXXX")).utf8CString)
    let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(created != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
    let path = String(cString: created!)
    precondition(chmod(path, 0o711) == 0, "chmod \(path) failed: \(String(cString: strerror(errno)))")
    atexit { try? FileManager.default.removeItem(atPath: testDirectoryBase) }
    return path
}()

/// The bytes of a file, or `nil` when it cannot be read.
package func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Writes `bytes` to `path`, replacing what is there.
package func writeFile(_ path: String, _ bytes: [UInt8]) {
    precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
}

/// The permission bits of a file or directory.
package func permissions(_ path: String) -> Int {
    var info = stat()
    precondition(stat(path, &info) == 0, "cannot stat \(path)")
    return Int(info.st_mode & 0o7777)
}

/// The resident set size of this process in bytes, from /proc.
package func residentMemory() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
          let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
