import Foundation

import PrefsStorage
import Synchronization

// The process-wide settings that choose the suite every instance uses by default. They live apart from
// the instance API because they belong to no instance. The suite is resolved when it is first needed
// after a setting changed, and kept: an operation only takes it. The environment variables that decide
// the locations are read once, when the suite is first resolved.

extension RVS_PersistentPrefs {
    struct Configuration {
        var groupID: String? { didSet { settingChanged() } }
        var groupContainerDirectory: String? { didSet { settingChanged() } }
        var applicationDomainName: String? { didSet { settingChanged() } }
        var durableWrites = false { didSet { settingChanged() } }
        /// Changes whenever a setting does, so that a suite resolved from older settings is never kept.
        private(set) var generation = 0
        /// The variables that decide the locations, as the first resolution read them.
        var environment: [String: String]?
        /// The suite the settings select (or why they select none), until a setting changes.
        var resolved: Result<DefaultsSuite, PrefsError>? {
            didSet { RVS_PersistentPrefs.publishResolvedSuite(try? resolved?.get()) }
        }

        private mutating func settingChanged() {
            generation &+= 1
            resolved = nil
        }
    }

    static let configuration = PrefsMutex(initialConfiguration())

    /// The settings before any is set, made by a call the optimizer does not fold: in a release build of a
    /// package that depends on this one, Swift 6.3 initialized `PrefsMutex(Configuration())` statically with
    /// `resolved` reading as a success holding no suite, so every instance of the default suite failed with
    /// "userDefaults is nil" (`.ci/run` now runs the Quick start from a release build to catch it).
    @inline(never)
    private static func initialConfiguration() -> Configuration { Configuration() }

    /// The address of the suite the settings select while it stands (0: none, or not resolved yet), so that
    /// an operation takes it with one load instead of the configuration's lock. Set under that lock only.
    /// A suite published here is retained for good, so the address never dangles: suites are published
    /// only when the settings change, and they are shared for the process's life anyway.
    private static let resolvedSuiteAddress = Atomic<UInt>(0)

    /// The suite the settings select, when it is resolved and stands: one atomic load.
    @inline(__always)
    static var resolvedConfiguredSuite: DefaultsSuite? {
        let address = resolvedSuiteAddress.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        return Unmanaged<DefaultsSuite>.fromOpaque(pointer).takeUnretainedValue()
    }

    fileprivate static func publishResolvedSuite(_ suite: DefaultsSuite?) {
        let address = suite.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        resolvedSuiteAddress.store(address, ordering: .releasing)
    }

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
    /// A relative path is taken relative to the current directory when the suite is resolved: at the
    /// first operation after it is set. A directory that
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

    /// The suite the settings above and the environment select: the default of ``userDefaults``.
    ///
    /// Resolved at the first operation that needs it, and again at the first after a setting above
    /// changed; in between, every operation takes the same suite, at the cost of one atomic load. The
    /// environment (`RVS_PREFS_DIRECTORY`, `RVS_PREFS_GROUP_CONTAINER`, `XDG_CONFIG_HOME`, `HOME`,
    /// `STATE_DIRECTORY`, and the user database's home when it comes to that) is read once, at the first
    /// resolution: a change of it later does not move this process's suite.
    static func configuredSuite() throws(PrefsError) -> DefaultsSuite {
        if let suite = resolvedConfiguredSuite { return suite }
        let found: Result<DefaultsSuite, PrefsError>? = configuration.withLock { $0.resolved }
        if let found { return try found.get() }
        let settings = configuration.withLock { $0 }
        let environment = settings.environment ?? DefaultsLocations.environmentVariables()
        let result = Result { () throws(PrefsError) -> DefaultsSuite in try resolve(settings, environment: environment) }
        configuration.withLock { current in
            if current.environment == nil { current.environment = environment }
            // Kept only if no setting changed meanwhile: a suite of older settings would outlive them.
            if current.generation == settings.generation { current.resolved = result }
        }
        return try result.get()
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
