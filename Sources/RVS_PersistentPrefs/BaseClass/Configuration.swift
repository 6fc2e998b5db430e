import Foundation

// The process-wide settings that choose the suite every instance uses by default. They live apart from
// the instance API because they belong to no instance: one lock guards them all, and the suite is
// resolved from them (and the environment) at each operation, so a change applies to later operations.

extension RVS_PersistentPrefs {
    struct Configuration {
        var groupID: String?
        var groupContainerDirectory: String?
        var applicationDomainName: String?
        var durableWrites = false
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
    /// A name that cannot be a file name (empty, `.`, `..`, one containing `/` or NUL, one too long, or
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
    static func configuredSuite() throws(PrefsError) -> DefaultsSuite {
        let settings = configuration.withLock { $0 }
        let locations = DefaultsLocations.current(
            groupContainer: settings.groupContainerDirectory,
            applicationDomainName: settings.applicationDomainName
        )
        if let groupID = settings.groupID, !groupID.isEmpty {
            return try locations.groupSuite(groupID, durable: settings.durableWrites)
        }
        return try locations.applicationSuite(durable: settings.durableWrites)
    }
}
