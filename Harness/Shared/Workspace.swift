// The directory a demo works in.

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

/// The directory a demo writes into, with the library pointed at it.
///
/// It is the `--directory` the user gave, or else a fresh private temporary directory (mode 0700, made with
/// `mkdtemp`) that ``finish()`` removes: without `--directory` a demo leaves nothing behind and never
/// touches the user's real preferences under `~/.config`.
final class Workspace {
    /// The preferences directory: the application and global domains live here.
    let path: String
    /// Whether the directory was made for this run, and is removed by ``finish()``.
    let isTemporary: Bool

    /// The application domain's name in every demo, so that its file has a recognizable name.
    static let applicationDomainName = "com.example.harness"

    /// The group container of the `share` demo, a subdirectory of the workspace.
    var groupContainer: String { path + "/GroupContainer" }

    private init(path: String, isTemporary: Bool) {
        self.path = path
        self.isTemporary = isTemporary
    }

    /// The `--directory` in `context`, or a fresh temporary directory.
    static func make(_ context: HarnessContext) throws(HarnessError) -> Workspace {
        if let directory = context.directory { return Workspace(path: directory, isTemporary: false) }
        return Workspace(path: try makeTemporaryDirectory(), isTemporary: true)
    }

    /// A workspace in a directory chosen by the caller, which is never removed.
    static func existing(_ path: String) -> Workspace {
        Workspace(path: path, isTemporary: false)
    }

    private static func makeTemporaryDirectory() throws(HarnessError) -> String {
        var template = Array((NSTemporaryDirectory() + "/rvs-harness-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .failure("cannot make a temporary directory: \(SystemError.current)")
        }
        return String(cString: made).replacingOccurrences(of: "//", with: "/")
    }

    /// Points the library at this directory: `RVS_PREFS_DIRECTORY` (read by the library once, at its
    /// first operation, so this comes before any) for the application and global domains, and the
    /// static configuration for the rest.
    func pointLibraryHere() {
        setenv(DefaultsLocations.directoryVariable, path, 1)
        RVS_PersistentPrefs.applicationDomainName = Self.applicationDomainName
        RVS_PersistentPrefs.groupContainerDirectory = groupContainer
        RVS_PersistentPrefs.groupID = nil
    }

    /// The application domain's file.
    var applicationDomainFile: String { path + "/" + Self.applicationDomainName + DomainName.fileExtension }

    /// Removes the directory if it was made for this run.
    func finish() {
        if isTemporary { try? FileManager.default.removeItem(atPath: path) }
    }
}
