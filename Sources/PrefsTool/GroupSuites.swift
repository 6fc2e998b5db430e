// Group suites (`RVS_PersistentPrefs.groupID`) kept in a group container of their own: the library puts a suite's
// file at `<group container>/<groupID>.plist`, and the container is `$RVS_PREFS_GROUP_CONTAINER` when a program is
// given one, else the preferences directory. When the tool's environment names another container, its suites are
// domains like the others: listed (marked `group`), read over the administrator's layers, found, exported,
// watched and written, without `--directory` pointing there.

import Foundation
import RVS_PersistentPrefs

extension DomainDirectory {
    /// The group container the environment names, made absolute as the library makes it; `nil` when unset or empty.
    package static func groupContainer(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment[DefaultsLocations.groupContainerVariable].flatMap { $0.isEmpty ? nil : absolutePath($0) }
    }

    /// The group suites with a file in the group container, by name.
    func groupSuiteNames() -> [String] {
        groupContainer.map(Self.domainFiles(in:)) ?? []
    }

    /// Where the file of the domain `name` is: the directory's own when it has one (an application domain and a
    /// group suite of one name are the application domain's, as the directory is searched first), else the group
    /// container's when it has one there, else the directory, where a new domain is made.
    func directory(ofNamed name: String) -> String {
        guard let groupContainer, DomainName.problem(with: name) == nil else { return path }
        let file = DomainName.fileExtension
        if FileManager.default.fileExists(atPath: path + "/" + name + file) { return path }
        return FileManager.default.fileExists(atPath: groupContainer + "/" + name + file) ? groupContainer : path
    }
}
