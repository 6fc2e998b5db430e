import Foundation
import PrefsPropertyList

/// The rules for a domain name: it becomes part of file names, so it must be one file name.
///
/// Package access: users meet these rules through the reason of
/// ``PrefsError/userDefaultsUnavailable(reason:)`` and the documentation of ``DefaultsLocations``.
package enum DomainName {
    /// The extension of every domain file.
    package static let fileExtension = ".plist"

    /// The longest name the file system takes for one directory entry.
    static let fileNameLimit = 255

    /// The longest file name made from a domain name, beyond the name itself: the name of an
    /// unreadable file moved aside, `<name>.plist.unreadable-<seconds>-<n>`, with room to spare.
    static let longestSuffix = ".plist.unreadable-".utf8.count + 20 + 1 + 10

    /// The longest domain name accepted, in UTF-8 bytes: every file derived from it must fit too.
    package static var maximumLength: Int { fileNameLimit - longestSuffix }

    /// The names of the global domain: its file's, and the one `UserDefaults` calls it
    /// (`UserDefaults.globalDomain`). Neither can be a writable domain: the global domain is read-only
    /// for suites (SPEC §2.1).
    package static let globalDomainNames: Set<String> = [DefaultsLocations.globalDomainName, "NSGlobalDomain"]

    /// Why `name` cannot name a domain, or `nil` when it can.
    ///
    /// A name must be usable as one file name: not empty, no `/` or NUL, not `.` or `..`, and at most
    /// ``maximumLength`` bytes of UTF-8.
    /// - Returns: A sentence naming the problem, used as the reason of
    ///   ``PrefsError/userDefaultsUnavailable(reason:)``; `nil` for a usable name.
    package static func problem(with name: String) -> String? {
        if name.isEmpty { return "the domain name is empty" }
        if name == "." || name == ".." { return "the domain name '\(name)' is not a file name" }
        if name.utf8.contains(UInt8(ascii: "/")) { return "the domain name '\(name)' contains '/'" }
        if name.utf8.contains(0) { return "the domain name contains a NUL character" }
        let length = name.utf8.count
        if length > maximumLength {
            return "the domain name is \(length) bytes long; at most \(maximumLength) fit in a file name"
        }
        return nil
    }
}
