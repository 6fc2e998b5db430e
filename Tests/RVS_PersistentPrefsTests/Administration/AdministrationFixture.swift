import Foundation
import Glibc
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An app's settings with typed and untyped entries, over a given suite.
final class AdministeredSettings: RVS_PersistentPrefs {
    @Entry("appearance") var appearance = "system"
    @Entry("launchCount") var launchCount = 0
    override var keys: [String] { super.keys + ["flag", "volume"] }
}

/// A user's preferences directory, two system directories (as `$CONFIGURATION_DIRECTORY` and
/// `$XDG_CONFIG_DIRS` give them) and a managed directory, all in a temporary directory, never `/etc`.
final class AdministrationFixture {
    let directory = TemporaryDirectory()
    let domainName = "com.example.app"
    let storageKey = "settings"

    var preferences: String { directory.appending("home/.config/RVS_PersistentPrefs") }
    var serviceConfiguration: String { directory.appending("etc/myservice") }
    var xdgDirectory: String { directory.appending("etc/xdg") }
    var managed: String { directory.appending("etc/managed") }

    /// The environment a process with these directories would have.
    var environment: [String: String] {
        ["HOME": directory.appending("home"), "CONFIGURATION_DIRECTORY": serviceConfiguration,
         "XDG_CONFIG_DIRS": xdgDirectory, "RVS_PREFS_MANAGED_DIRECTORY": managed]
    }

    init() {
        for path in [serviceConfiguration, xdgDirectory, managed] {
            mkdir(directory.appending("etc"), 0o700)
            mkdir(path, 0o700)
        }
        mkdir(serviceConfiguration + "/RVS_PersistentPrefs", 0o700)
        mkdir(xdgDirectory + "/RVS_PersistentPrefs", 0o700)
    }

    var locations: DefaultsLocations {
        DefaultsLocations.current(applicationDomainName: domainName, environment: environment)
    }

    /// A new suite over the fixture's domains, with `arguments` as the process's.
    func suite(arguments: [String] = []) throws -> DefaultsSuite {
        let locations = self.locations
        return DefaultsSuite(persistentDomain: try locations.applicationDomain(), globalDomain: try locations.globalDomain(),
                             systemDomains: locations.systemDomains(named: domainName),
                             managedDomains: locations.managedDomains(named: domainName),
                             argumentDomain: DefaultsSuite.parseArgumentDomain(["app"] + arguments))
    }

    var userFile: String { preferences + "/\(domainName).plist" }
    var serviceFile: String { serviceConfiguration + "/RVS_PersistentPrefs/\(domainName).plist" }
    var xdgFile: String { xdgDirectory + "/RVS_PersistentPrefs/\(domainName).plist" }
    var xdgGlobalFile: String { xdgDirectory + "/RVS_PersistentPrefs/.GlobalPreferences.plist" }
    var managedFile: String { managed + "/\(domainName).plist" }

    /// Writes `entries` as the collection of `storageKey` in the file at `path`, mode 0600, replacing it by
    /// rename as an administrator's tool would.
    func install(_ entries: [String: PropertyListValue], at path: String, mode: mode_t = 0o600) {
        installRaw(BinaryPropertyList.encode(.dictionary([storageKey: .dictionary(entries)])), at: path, mode: mode)
    }

    func installRaw(_ bytes: [UInt8], at path: String, mode: mode_t = 0o600) {
        let temporary = path + ".new"
        writeFile(temporary, bytes)
        chmod(temporary, mode)
        rename(temporary, path)
    }

    /// The user's own collection as stored in their file (what a write put there), or `nil`.
    func userCollection() -> [String: PropertyListValue]? {
        guard let bytes = fileBytes(userFile),
              case .dictionary(let root) = try? bytes.withUnsafeBytes({ try PropertyListText.decodeFile($0) }) else { return nil }
        return root[storageKey]?.dictionaryValue
    }
}
