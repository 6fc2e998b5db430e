import Foundation
import PrefsPropertyList
import Glibc

/// Where the defaults domains of this process live.
///
/// - The preferences directory is the first of these that is usable (SPEC §12):
///   1. `$RVS_PREFS_DIRECTORY`, when set and not empty (a relative path is taken relative to the current
///      directory);
///   2. `$XDG_CONFIG_HOME/RVS_PersistentPrefs`, when `XDG_CONFIG_HOME` is an absolute path (the XDG Base
///      Directory specification says to ignore a relative one);
///   3. `$HOME/.config/RVS_PersistentPrefs`, when `HOME` is usable: set, an absolute path, and not `/`;
///   4. the first directory of `$STATE_DIRECTORY` (systemd's `StateDirectory=`, a colon-separated list),
///      for a service with no usable home (`DynamicUser=` gives `HOME=/`);
///   5. `<home>/.config/RVS_PersistentPrefs`, with the home of the process's user (`geteuid()`) in the
///      user database (`getpwuid_r`), when that home is usable and an existing directory (GLib's
///      `g_get_home_dir` falls back the same way; `nobody`'s `/nonexistent` is never created);
///
///   with none of these, there is no preferences directory (``preferencesDirectory`` is `nil`): the
///   application and global domains are unavailable, and ``applicationSuite(durable:)`` is a suite whose
///   reads still return the system-wide defaults and forced entries below, and whose writes fail with
///   ``PrefsError/userDefaultsUnavailable(reason:)`` naming the variables that would fix it.
/// - System-wide defaults, read-only: `<dir>/RVS_PersistentPrefs/<domain>.plist` for each directory of
///   `$CONFIGURATION_DIRECTORY` (systemd's `ConfigurationDirectory=`), then of `$XDG_CONFIG_DIRS`
///   (default `/etc/xdg`); see ``systemDirectories``.
/// - Entries an administrator forces: `<managed directory>/<domain>.plist`, the managed directory being
///   `$RVS_PREFS_MANAGED_DIRECTORY`, else `/etc/RVS_PersistentPrefs/managed`; see ``managedDirectory``.
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
/// - ``init(preferencesDirectory:groupContainer:applicationDomainName:systemDirectories:managedDirectory:)``
///
/// ### The Locations
/// - ``preferencesDirectory``
/// - ``groupContainer``
/// - ``applicationDomainName``
/// - ``systemDirectories``
/// - ``managedDirectory``
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
/// - ``managedDirectoryVariable``
/// - ``stateDirectoryVariable``
/// - ``defaultManagedDirectory``
/// - ``globalDomainName``
/// - ``executableName``
public struct DefaultsLocations: Sendable, Hashable {
    /// The environment variable that sets the preferences directory.
    public static let directoryVariable = "RVS_PREFS_DIRECTORY"
    /// The environment variable that sets the group container.
    public static let groupContainerVariable = "RVS_PREFS_GROUP_CONTAINER"
    /// The environment variable that sets the directory of forced (managed) domain files.
    public static let managedDirectoryVariable = "RVS_PREFS_MANAGED_DIRECTORY"
    /// The directory systemd's `StateDirectory=` sets: the preferences directory of a service with no home.
    public static let stateDirectoryVariable = "STATE_DIRECTORY"
    /// The directory of forced (managed) domain files when ``managedDirectoryVariable`` is not set.
    public static let defaultManagedDirectory = "/etc/RVS_PersistentPrefs/managed"
    /// The folder made under the XDG configuration directory (`$XDG_CONFIG_HOME` or `~/.config`).
    static let folderName = "RVS_PersistentPrefs"
    /// The name of the global domain, shared by all of a user's programs: its file is
    /// `<preferences directory>/.GlobalPreferences.plist`.
    public static let globalDomainName = ".GlobalPreferences"

    /// The directory of the application and global domains, an absolute path; `nil` when the environment
    /// and the user database give none (see the type's description).
    public var preferencesDirectory: String?
    /// The directory of group suites, an absolute path; `nil` when none is configured and there is no
    /// ``preferencesDirectory``.
    public var groupContainer: String?
    /// The name of the application domain: its file is `<preferencesDirectory>/<name>.plist`.
    public var applicationDomainName: String
    /// The directories of system-wide defaults, in order of precedence (the first that supplies an entry
    /// wins): `RVS_PersistentPrefs` in each directory of `$CONFIGURATION_DIRECTORY`, then of
    /// `$XDG_CONFIG_DIRS`. Each may hold `<domain>.plist` and the global domain's file, read-only.
    public var systemDirectories: [String]
    /// The directory of forced (managed) domain files, or `nil` for none.
    public var managedDirectory: String?

    /// Makes locations from explicit values, reading no environment: with no system or managed
    /// directories unless given.
    ///
    /// Paths are used as given: a directory that is not an absolute path, or a name that cannot be a
    /// file name, makes the domains built from it unavailable (their getters throw
    /// ``PrefsError/userDefaultsUnavailable(reason:)``).
    /// - Parameters:
    ///   - preferencesDirectory: The directory of the application and global domains, or `nil` for none:
    ///     the application and global domains are then unavailable.
    ///   - groupContainer: The directory of group suites; `nil` means `preferencesDirectory`.
    ///   - applicationDomainName: The name of the application domain.
    ///   - systemDirectories: The directories of system-wide defaults, first wins (see ``systemDirectories``).
    ///   - managedDirectory: The directory of forced domain files, or `nil` for none.
    public init(preferencesDirectory: String?, groupContainer: String? = nil, applicationDomainName: String,
                systemDirectories: [String] = [], managedDirectory: String? = nil) {
        self.preferencesDirectory = preferencesDirectory
        self.groupContainer = groupContainer ?? preferencesDirectory
        self.applicationDomainName = applicationDomainName
        self.systemDirectories = systemDirectories
        self.managedDirectory = managedDirectory
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
        let directory = preferencesDirectory(lookup, userDatabaseHome: userDatabaseHome)
        let container = groupContainer.flatMap { $0.isEmpty ? nil : $0 }.map(absolute)
            ?? lookup[groupContainerVariable].map(absolute)
            ?? directory
        let name = applicationDomainName.flatMap { $0.isEmpty ? nil : $0 } ?? executableName
        let searched = directories(lookup["CONFIGURATION_DIRECTORY"]) + directories(lookup["XDG_CONFIG_DIRS"] ?? "/etc/xdg")
        let managed = lookup[managedDirectoryVariable].map(absolute) ?? defaultManagedDirectory
        return DefaultsLocations(preferencesDirectory: directory, groupContainer: container, applicationDomainName: name,
                                 systemDirectories: searched.map { PathBytes.joined($0, folderName) }, managedDirectory: managed)
    }

    /// The absolute directories of a colon-separated list (relative ones are ignored, as the XDG Base
    /// Directory specification asks), duplicates dropped.
    private static func directories(_ list: String?) -> [String] {
        var seen = Set<String>()
        return (list ?? "").split(separator: ":").map { PathBytes.trimmed(String($0)) }
            .filter { PathBytes.isAbsolute($0) && seen.insert($0).inserted }
    }

    /// The preferences directory the environment and the user database select (see the type's description).
    ///
    /// ```swift
    /// if let directory = DefaultsLocations.preferencesDirectory() {
    ///     print("preferences live in", directory)
    /// }
    /// ```
    /// - Parameter environment: The environment to read instead of the process's own, or `nil`.
    /// - Returns: An absolute path, which need not exist yet; `nil` when there is none (a service with no
    ///   usable home and no `STATE_DIRECTORY`).
    public static func preferencesDirectory(environment: [String: String]? = nil) -> String? {
        preferencesDirectory(Environment(overrides: environment), userDatabaseHome: userDatabaseHome)
    }

    /// ``preferencesDirectory(environment:)`` with the user database's home given, for tests of the order.
    package static func preferencesDirectory(environment: [String: String], userDatabaseHome: () -> String?) -> String? {
        preferencesDirectory(Environment(overrides: environment), userDatabaseHome: userDatabaseHome)
    }

    private static func preferencesDirectory(_ environment: Environment, userDatabaseHome: () -> String?) -> String? {
        if let directory = environment[directoryVariable] { return absolute(directory) }
        if let config = environment["XDG_CONFIG_HOME"], PathBytes.isAbsolute(config) {
            return PathBytes.joined(config, folderName)
        }
        if let home = environment["HOME"], isUsableHome(home) {
            return PathBytes.joined(PathBytes.joined(home, ".config"), folderName)
        }
        // A service with no home (systemd's DynamicUser=, HOME=/): its state directory, when systemd gives one.
        if let state = environment[stateDirectoryVariable]?.split(separator: ":").first.map(String.init),
           PathBytes.isAbsolute(state) {
            return PathBytes.trimmed(state)
        }
        // Started with no HOME at all (`env -i`, some init systems): the home the user database gives.
        if let home = userDatabaseHome(), isUsableHome(home) {
            return PathBytes.joined(PathBytes.joined(home, ".config"), folderName)
        }
        return nil
    }

    /// A home that may hold `.config`: absolute and not `/` (the home of services that have none).
    private static func isUsableHome(_ home: String) -> Bool {
        PathBytes.isAbsolute(home) && PathBytes.trimmed(home) != "/"
    }

    /// The home directory of the process's effective user in the user database, when it is an existing
    /// directory: a home that does not exist (`/nonexistent`, as `nobody` has) is no place to create one.
    package static func userDatabaseHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let status = getpwuid_r(geteuid(), &entry, &buffer, size, &result)
            if status == ERANGE && size < 1 << 20 {
                size *= 4
                continue
            }
            guard status == 0, result != nil, let directory = entry.pw_dir else { return nil }
            let home = String(cString: directory)
            guard !home.isEmpty, let info = try? SystemCalls.live.stat(home), info.st_mode & S_IFMT == S_IFDIR else { return nil }
            return home
        }
    }

    /// Why there is no preferences directory, for a ``preferencesDirectory`` of `nil`.
    package static let noDirectoryReason = "there is no preferences directory: \(directoryVariable) is not set, XDG_CONFIG_HOME "
        + "and \(stateDirectoryVariable) are not set to absolute paths (relative ones are ignored), HOME is unset, empty or '/', "
        + "and the user database gives no usable home; "
        + "set \(directoryVariable), or give a systemd service StateDirectory= (which sets \(stateDirectoryVariable))"

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
    /// `path` made absolute (relative to the current directory) and written with single slashes (SPEC §7.5).
    private static func absolute(_ path: String) -> String {
        PathBytes.trimmed(PathBytes.isAbsolute(path) ? path : FileManager.default.currentDirectoryPath + "/" + path)
    }

    /// The writable application domain, shared process-wide per file.
    /// - Parameter durable: Whether its writes `fsync` the file and its directory before returning.
    /// - Returns: The shared ``FileDomainStorage``.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the name or directory cannot be used.
    public func applicationDomain(durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        let directory = try existingDirectory(preferencesDirectory)
        try Self.refuseGlobalDomainName(applicationDomainName)
        return try FileDomainStorage.shared(directory: directory, name: applicationDomainName, durable: durable)
    }

    /// The global domain, `.GlobalPreferences.plist` in the preferences directory.
    ///
    /// A ``DefaultsSuite`` only reads it; a tool such as `harness defaults` may write it directly.
    /// - Parameter durable: Whether its writes `fsync` the file and its directory before returning.
    /// - Returns: The shared ``FileDomainStorage``.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the directory cannot be used.
    public func globalDomain(durable: Bool = false) throws(PrefsError) -> FileDomainStorage {
        try FileDomainStorage.shared(directory: try existingDirectory(preferencesDirectory), name: Self.globalDomainName, durable: durable)
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
        return try FileDomainStorage.shared(directory: try existingDirectory(groupContainer), name: groupID, durable: durable)
    }

    /// The process-wide suite over the application domain and the global domain.
    ///
    /// With no ``preferencesDirectory`` (a service with no usable home and no `STATE_DIRECTORY`), the suite
    /// still has the administrator's domains: its reads return the system-wide defaults and the forced
    /// entries, and its writes fail with ``PrefsError/userDefaultsUnavailable(reason:)`` saying what would
    /// give it a directory.
    /// - Parameter durable: Whether writes to the application domain are durable; see
    ///   ``DefaultsSuite/shared(persistentDomain:globalDomain:)`` for how suites are shared.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when the name cannot be used, or the
    ///   directory is not an absolute path.
    public func applicationSuite(durable: Bool = false) throws(PrefsError) -> DefaultsSuite {
        let system = systemDomains(named: applicationDomainName)
        let managed = managedDomains(named: applicationDomainName)
        guard preferencesDirectory != nil else {
            try Self.refuseUnusableName(applicationDomainName)
            try Self.refuseGlobalDomainName(applicationDomainName)
            return DefaultsSuite.shared(persistentDomain: NoDirectoryDomainStorage.shared(reason: Self.noDirectoryReason),
                                        globalDomain: nil, systemDomains: system, managedDomains: managed)
        }
        return DefaultsSuite.shared(persistentDomain: try applicationDomain(durable: durable), globalDomain: try globalDomain(),
                                    systemDomains: system, managedDomains: managed)
    }

    /// The process-wide suite over the group suite `groupID` and the global domain.
    /// - Parameters:
    ///   - groupID: The suite's identifier, used as the file's name.
    ///   - durable: Whether writes to the group suite are durable; see
    ///     ``DefaultsSuite/shared(persistentDomain:globalDomain:)`` for how suites are shared.
    /// - Throws: ``PrefsError/userDefaultsUnavailable(reason:)`` when `groupID` cannot be a file name or
    ///   the container cannot be used.
    ///
    /// With no group container (none configured, and no ``preferencesDirectory``), the suite keeps the
    /// administrator's domains as ``applicationSuite(durable:)`` does, and its writes fail.
    public func groupSuite(_ groupID: String, durable: Bool = false) throws(PrefsError) -> DefaultsSuite {
        let system = systemDomains(named: groupID)
        let managed = managedDomains(named: groupID)
        // The global domain lives in the preferences directory, which a configured group container does not need.
        let global = preferencesDirectory == nil ? nil : try globalDomain()
        guard groupContainer != nil else {
            try Self.refuseUnusableName(groupID)
            try Self.refuseGlobalDomainName(groupID)
            return DefaultsSuite.shared(persistentDomain: NoDirectoryDomainStorage.shared(reason: Self.noDirectoryReason),
                                        globalDomain: global, systemDomains: system, managedDomains: managed)
        }
        return DefaultsSuite.shared(persistentDomain: try groupDomain(groupID, durable: durable), globalDomain: global,
                                    systemDomains: system, managedDomains: managed)
    }

    /// The system-wide defaults of the domain `name`: its file in each system directory, then the global
    /// domain's file in each (a default for this domain wins over a system-wide global default).
    package func systemDomains(named name: String) -> [any DomainStorage] {
        let files = systemDirectories.map { ($0, name) } + systemDirectories.map { ($0, Self.globalDomainName) }
        return files.compactMap { directory, file in
            (try? FileDomainStorage.shared(directory: directory, name: file)).map { AdministratorDomainStorage.shared($0, verifiesOwnership: false) }
        }
    }

    /// The managed (forced) domain `name`, when there is a managed directory.
    package func managedDomains(named name: String) -> [any DomainStorage] {
        guard let managedDirectory, let file = try? FileDomainStorage.shared(directory: managedDirectory, name: name) else { return [] }
        return [AdministratorDomainStorage.shared(file, verifiesOwnership: true)]
    }

    /// The application and global domains need a preferences directory, and group suites a container.
    private func existingDirectory(_ directory: String?) throws(PrefsError) -> String {
        guard let directory else { throw .userDefaultsUnavailable(reason: Self.noDirectoryReason) }
        return directory
    }

    /// A name that cannot be a file name makes the domain unavailable, even with no directory to put it in.
    private static func refuseUnusableName(_ name: String) throws(PrefsError) {
        if let problem = DomainName.problem(with: name) { throw .userDefaultsUnavailable(reason: problem) }
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
        for name in [directoryVariable, groupContainerVariable, "XDG_CONFIG_HOME", "HOME", stateDirectoryVariable,
                     managedDirectoryVariable, "CONFIGURATION_DIRECTORY", "XDG_CONFIG_DIRS"] {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }
}
