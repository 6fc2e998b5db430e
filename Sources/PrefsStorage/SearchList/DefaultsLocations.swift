import Foundation
import PrefsPropertyList
import Glibc

/// Where the defaults domains of this process live.
///
/// - The preferences directory is `$RVS_PREFS_DIRECTORY` when set and not empty (a relative path is
///   taken relative to the current directory); otherwise `RVS_PersistentPrefs` under
///   `$XDG_CONFIG_HOME` (when set to an absolute path, per the XDG Base Directory specification), else
///   under `~/.config`, with the home directory from `$HOME`, else from the user database.
/// - The application domain is `<preferences directory>/<applicationDomainName>.plist`.
/// - The global domain is `<preferences directory>/.GlobalPreferences.plist`.
/// - A group suite is `<group container>/<groupID>.plist`; the group container is the directory set in
///   code, else `$RVS_PREFS_GROUP_CONTAINER`, else the preferences directory.
///
/// Computing locations creates nothing; a domain's directory is created by its first write.
///
/// ## Topics
///
/// ### Finding the Locations
/// - ``current(groupContainer:applicationDomainName:environment:)``
/// - ``preferencesDirectory(environment:)``
/// - ``init(preferencesDirectory:groupContainer:applicationDomainName:)``
///
/// ### The Locations
/// - ``preferencesDirectory``
/// - ``groupContainer``
/// - ``applicationDomainName``
///
/// ### Getting Domains and Suites
/// - ``applicationDomain(durable:)``
/// - ``globalDomain(durable:)``
/// - ``applicationSuite(durable:)``
/// - ``groupSuite(_:durable:)``
///
/// ### Names
/// - ``directoryVariable``
/// - ``groupContainerVariable``
/// - ``globalDomainName``
/// - ``executableName``
public struct DefaultsLocations: Sendable, Hashable {
    /// The environment variable that sets the preferences directory.
    public static let directoryVariable = "RVS_PREFS_DIRECTORY"
    /// The environment variable that sets the group container.
    public static let groupContainerVariable = "RVS_PREFS_GROUP_CONTAINER"
    /// The folder made under the XDG configuration directory (`$XDG_CONFIG_HOME` or `~/.config`).
    static let folderName = "RVS_PersistentPrefs"
    /// The name of the global domain, shared by all of a user's programs: its file is
    /// `<preferences directory>/.GlobalPreferences.plist`.
    public static let globalDomainName = ".GlobalPreferences"

    /// The directory of the application and global domains; an absolute path.
    public var preferencesDirectory: String
    /// The directory of group suites; an absolute path.
    public var groupContainer: String
    /// The name of the application domain: its file is `<preferencesDirectory>/<name>.plist`.
    public var applicationDomainName: String

    /// Makes locations from explicit values, reading no environment.
    ///
    /// Paths are used as given: a directory that is not an absolute path, or a name that cannot be a
    /// file name, makes the domains built from it unavailable (their getters throw
    /// ``PrefsError/userDefaultsUnavailable(reason:)``).
    /// - Parameters:
    ///   - preferencesDirectory: The directory of the application and global domains.
    ///   - groupContainer: The directory of group suites; `nil` means `preferencesDirectory`.
    ///   - applicationDomainName: The name of the application domain.
    public init(preferencesDirectory: String, groupContainer: String? = nil, applicationDomainName: String) {
        self.preferencesDirectory = preferencesDirectory
        self.groupContainer = groupContainer ?? preferencesDirectory
        self.applicationDomainName = applicationDomainName
    }

    /// The locations the environment selects, with optional settings from code taking precedence.
    ///
    /// Reads the environment each time it is called. (``RVS_PersistentPrefs`` resolves its default suite
    /// once, and reads the environment only then: see <doc:Storage>.) Relative directories, from the
    /// environment or from `groupContainer`, are made absolute against the current directory.
    /// - Parameters:
    ///   - groupContainer: The group container set in code; `nil` or empty defers to the environment.
    ///   - applicationDomainName: The application domain's name; `nil` or empty means the executable's name.
    ///   - environment: The environment to read instead of the process's own, or `nil` for the process's.
    /// - Returns: The locations; nothing is created or checked on disk.
    public static func current(
        groupContainer: String? = nil,
        applicationDomainName: String? = nil,
        environment: [String: String]? = nil
    ) -> DefaultsLocations {
        let lookup = Environment(overrides: environment)
        let directory = preferencesDirectory(lookup)
        let container = groupContainer.flatMap { $0.isEmpty ? nil : $0 }.map(absolute)
            ?? lookup[groupContainerVariable].map(absolute)
            ?? directory
        let name = applicationDomainName.flatMap { $0.isEmpty ? nil : $0 } ?? executableName
        return DefaultsLocations(preferencesDirectory: directory, groupContainer: container, applicationDomainName: name)
    }

    /// The preferences directory the environment selects (see the type's description).
    /// - Parameter environment: The environment to read instead of the process's own, or `nil`.
    /// - Returns: An absolute path, which need not exist yet.
    public static func preferencesDirectory(environment: [String: String]? = nil) -> String {
        preferencesDirectory(Environment(overrides: environment))
    }

    private static func preferencesDirectory(_ environment: Environment) -> String {
        if let directory = environment[directoryVariable] { return absolute(directory) }
        if let config = environment["XDG_CONFIG_HOME"], PathBytes.isAbsolute(config) {
            return config + "/" + folderName
        }
        return homeDirectory(environment) + "/.config/" + folderName
    }

    /// Environment variables, from a given dictionary or else from the process. An empty value counts
    /// as unset.
    private struct Environment {
        let overrides: [String: String]?

        subscript(name: String) -> String? {
            let value: String?
            if let overrides {
                value = overrides[name]
            } else {
                value = getenv(name).map { String(cString: $0) }
            }
            return value?.isEmpty == false ? value : nil
        }
    }

    /// The name of the running executable: the default application domain name.
    ///
    /// When the executable's name cannot be a domain name (empty, `.`, `..`, with `/` or NUL, or too long for a file name), this is
    /// `RVS_PersistentPrefs` instead.
    public static let executableName: String = {
        let name = ProcessInfo.processInfo.processName
        return DomainName.problem(with: name) == nil ? name : "RVS_PersistentPrefs"
    }()

    /// A relative directory is taken relative to the current directory, as a shell user means it.
    private static func absolute(_ path: String) -> String {
        if PathBytes.isAbsolute(path) { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    private static func homeDirectory(_ environment: Environment) -> String {
        if let home = environment["HOME"] { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        return "/"
    }

    /// The writable application domain, shared process-wide per file.
    /// - Parameter durable: Whether its writes `fsync` the file and its directory before returning.
    /// - Returns: The shared ``FileDomainStorage``.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the name or directory cannot be used.
    public func applicationDomain(durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        try Self.refuseGlobalDomainName(applicationDomainName)
        return try FileDomainStorage.shared(directory: preferencesDirectory, name: applicationDomainName, durable: durable)
    }

    /// The global domain, `.GlobalPreferences.plist` in the preferences directory.
    ///
    /// A ``DefaultsSuite`` only reads it; a tool such as `harness defaults` may write it directly.
    /// - Parameter durable: Whether its writes `fsync` the file and its directory before returning.
    /// - Returns: The shared ``FileDomainStorage``.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the directory cannot be used.
    public func globalDomain(durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        try FileDomainStorage.shared(directory: preferencesDirectory, name: Self.globalDomainName, durable: durable)
    }

    /// The domain of the group suite `groupID`: `<group container>/<groupID>.plist`.
    /// - Parameters:
    ///   - groupID: The suite's identifier, used as the file's name.
    ///   - durable: Whether its writes `fsync` the file and its directory before returning.
    /// - Returns: The shared ``FileDomainStorage``.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when `groupID` cannot be a file name or
    ///   the container cannot be used.
    func groupDomain(_ groupID: String, durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        try Self.refuseGlobalDomainName(groupID)
        return try FileDomainStorage.shared(directory: groupContainer, name: groupID, durable: durable)
    }

    /// The process-wide suite over the application domain and the global domain.
    /// - Parameter durable: Whether writes to the application domain are durable; see
    ///   ``DefaultsSuite/shared(persistentDomain:globalDomain:)`` for how suites are shared.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the name or directory cannot be used.
    public func applicationSuite(durable: Bool = false) throws(PrefsError) -> DefaultsSuite {
        DefaultsSuite.shared(persistentDomain: try applicationDomain(durable: durable), globalDomain: try globalDomain())
    }

    /// The process-wide suite over the group suite `groupID` and the global domain.
    /// - Parameters:
    ///   - groupID: The suite's identifier, used as the file's name.
    ///   - durable: Whether writes to the group suite are durable; see
    ///     ``DefaultsSuite/shared(persistentDomain:globalDomain:)`` for how suites are shared.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when `groupID` cannot be a file name or
    ///   the container cannot be used.
    public func groupSuite(_ groupID: String, durable: Bool = false) throws(PrefsError) -> DefaultsSuite {
        DefaultsSuite.shared(persistentDomain: try groupDomain(groupID, durable: durable), globalDomain: try globalDomain())
    }

    /// The global domain is read-only for suites (SPEC §2.1): an application domain or group suite of
    /// its name, or of the name `UserDefaults` gives it (`NSGlobalDomain`), would let one program write
    /// what every other program reads as a global default.
    private static func refuseGlobalDomainName(_ name: String) throws(PrefsError) {
        if DomainName.globalDomainNames.contains(name) {
            throw .userDefaultsUnavailable(reason: "the domain name '\(name)' is the global domain's, which suites only read")
        }
    }

    /// The environment variables that decide the locations, read now: what
    /// ``current(groupContainer:applicationDomainName:environment:)`` takes as `environment` to compute
    /// the same locations later without reading the environment again.
    package static func environmentVariables() -> [String: String] {
        var values: [String: String] = [:]
        for name in [directoryVariable, groupContainerVariable, "XDG_CONFIG_HOME", "HOME"] {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }
}
