import Foundation

// The process-wide settings that choose the suite every instance uses by default. They live apart from
// the instance API because they belong to no instance: one lock guards them all, and the suite is
// resolved from them (and the environment) at each operation, so a change applies to later operations.

extension RVS_PersistentPrefs {
    struct Configuration {
        var groupID: String? { didSet { generation &+= 1 } }
        var groupContainerDirectory: String? { didSet { generation &+= 1 } }
        var applicationDomainName: String? { didSet { generation &+= 1 } }
        var durableWrites = false { didSet { generation &+= 1 } }
        /// Changes whenever a setting does, so that a suite resolved from the settings can be reused
        /// for as long as it has not changed.
        private(set) var generation = 0
        /// Whether the group container comes from `$RVS_PREFS_GROUP_CONTAINER`: a group suite with no
        /// container set in code.
        var readsGroupContainerVariable: Bool {
            !(groupID ?? "").isEmpty && (groupContainerDirectory ?? "").isEmpty
        }
        /// The suite last resolved, and what it was resolved from.
        var resolved: (generation: Int, environment: DefaultsLocations.EnvironmentStamp, suite: DefaultsSuite)?
    }

    static let configuration = Locked(Configuration())

    /// Selects a group suite for every instance of every subclass.
    ///
    /// `nil` or empty selects the application domain. A non-empty identifier selects the suite file
    /// `<group container>/<groupID>.plist` (see ``groupContainerDirectory``); an identifier that cannot
    /// be a file name makes every operation fail with ``PrefsError/userDefaultsUnavailable(reason:)``,
    /// with nothing written anywhere. Set it once, before creating instances: changing it redirects
    /// later operations without migrating data.
    public static var groupID: String? {
        get { configuration.withLock { $0.groupID } }
        set { configuration.withLock { $0.groupID = newValue } }
    }

    /// The directory of group suites, set in code; `nil` or empty defers to `$RVS_PREFS_GROUP_CONTAINER`,
    /// then to the preferences directory.
    ///
    /// A relative path is taken relative to the current directory, at each operation. A directory that
    /// cannot be created makes the first write fail with ``PrefsError/writeFailed(path:step:errno:)``
    /// at ``PrefsError/Step/createDirectory(_:)``. Processes that configure the same container and
    /// ``groupID`` share their values if they run as the same user: the library creates its files with
    /// mode 0600 and its directories with mode 0700.
    public static var groupContainerDirectory: String? {
        get { configuration.withLock { $0.groupContainerDirectory } }
        set { configuration.withLock { $0.groupContainerDirectory = newValue } }
    }

    /// The name of the application domain; `nil` or empty means the executable's name. Its file is
    /// `<preferences directory>/<name>.plist`.
    ///
    /// A name that cannot be a file name (`.`, `..`, one containing `/` or NUL, one too long, or
    /// the global domain's own name) makes every operation fail with
    /// ``PrefsError/userDefaultsUnavailable(reason:)``.
    public static var applicationDomainName: String? {
        get { configuration.withLock { $0.applicationDomainName } }
        set { configuration.withLock { $0.applicationDomainName = newValue } }
    }

    /// Opt-in durable mode: when `true`, each write waits for the disk (an `fsync` of the domain file
    /// and of its directory) before it returns, so that it survives a power failure. Off by default (a
    /// write then survives a crash of the process, not of the machine).
    ///
    /// It takes effect for every operation that starts after it is set, on instances old and new.
    /// Durable and ordinary operations use different suites, each with its own registration domain,
    /// so set it before registering defaults.
    public static var durableWrites: Bool {
        get { configuration.withLock { $0.durableWrites } }
        set { configuration.withLock { $0.durableWrites = newValue } }
    }

    /// The suite the settings above and the environment select now: the default of ``userDefaults``.
    ///
    /// Every read and write asks for it, so the suite last resolved is reused while neither the
    /// settings nor the environment variables that decided it have changed: the check is a lock and a
    /// few `getenv` calls, where resolving again builds paths and looks up two registries.
    static func configuredSuite() throws(PrefsError) -> DefaultsSuite {
        let (settings, stamp, reused) = configuration.withLock { current in
            let stamp = DefaultsLocations.EnvironmentStamp.current(includingGroupContainer: current.readsGroupContainerVariable)
            if let resolved = current.resolved, resolved.generation == current.generation, resolved.environment == stamp {
                return (Configuration?.none, stamp, Optional(resolved.suite))
            }
            return (current, stamp, nil)
        }
        if let reused { return reused }
        guard let settings else { preconditionFailure("settings are copied whenever no suite is reused") }
        // Resolved from the very values the stamp recorded, so that a concurrent `setenv` cannot pair this
        // stamp with a suite built from another environment.
        let suite = try resolve(settings, environment: stamp.environment)
        let reusable = !stamp.dependsOnCurrentDirectory && !(settings.groupContainerDirectory.map { !$0.isEmpty && !PathBytes.isAbsolute($0) } ?? false)
        if reusable {
            configuration.withLock { current in
                if current.generation == settings.generation { current.resolved = (settings.generation, stamp, suite) }
            }
        }
        return suite
    }

    private static func resolve(_ settings: Configuration, environment: [String: String]) throws(PrefsError) -> DefaultsSuite {
        let locations = DefaultsLocations.current(
            groupContainer: settings.groupContainerDirectory,
            applicationDomainName: settings.applicationDomainName,
            environment: environment
        )
        if let groupID = settings.groupID, !groupID.isEmpty {
            return try locations.groupSuite(groupID, durable: settings.durableWrites)
        }
        return try locations.applicationSuite(durable: settings.durableWrites)
    }
}
