import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Where domain files live")
struct LocationTests {
    @Test("RVS_PREFS_DIRECTORY, when set and not empty, is the preferences directory")
    func environmentDirectoryWins() {
        let environment = ["RVS_PREFS_DIRECTORY": "/srv/prefs", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"]
        #expect(DefaultsLocations.preferencesDirectory(environment: environment) == "/srv/prefs")
    }

    @Test("Without RVS_PREFS_DIRECTORY, the folder under an absolute XDG_CONFIG_HOME is used")
    func xdgConfigHomeIsTheFallback() {
        #expect(DefaultsLocations.preferencesDirectory(environment: ["RVS_PREFS_DIRECTORY": "", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"])
            == "/xdg/RVS_PersistentPrefs")
    }

    @Test("Without either, or with a relative XDG_CONFIG_HOME, ~/.config is used, as the XDG spec says")
    func homeConfigIsTheLastFallback() {
        #expect(DefaultsLocations.preferencesDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.config/RVS_PersistentPrefs")
        #expect(DefaultsLocations.preferencesDirectory(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"])
            == "/home/u/.config/RVS_PersistentPrefs")
    }

    @Test("The preferences directory is, in order: RVS_PREFS_DIRECTORY, XDG_CONFIG_HOME, a usable HOME, STATE_DIRECTORY, the user database's usable home; else none")
    func directoryOrder() {
        let cases: [(environment: [String: String], userDatabaseHome: String?, expected: String?)] = [
            (["RVS_PREFS_DIRECTORY": "/p", "XDG_CONFIG_HOME": "/x", "HOME": "/h", "STATE_DIRECTORY": "/s"], "/db", "/p"),
            (["XDG_CONFIG_HOME": "/x", "HOME": "/h", "STATE_DIRECTORY": "/s"], "/db", "/x/RVS_PersistentPrefs"),
            (["HOME": "/h", "STATE_DIRECTORY": "/s"], "/db", "/h/.config/RVS_PersistentPrefs"),
            (["HOME": "/", "STATE_DIRECTORY": "/s:/t"], "/db", "/s"),
            (["HOME": "", "STATE_DIRECTORY": "/s"], "/db", "/s"),
            (["STATE_DIRECTORY": "/s"], "/db", "/s"),
            ([:], "/db", "/db/.config/RVS_PersistentPrefs"),
            (["HOME": "/"], "/db/", "/db/.config/RVS_PersistentPrefs"),
            (["HOME": "relative", "STATE_DIRECTORY": "relative"], "/db", "/db/.config/RVS_PersistentPrefs"),
            (["HOME": "/"], "/", nil),
            (["HOME": "//"], nil, nil),
            ([:], nil, nil),
        ]
        for (environment, home, expected) in cases {
            let directory = DefaultsLocations.preferencesDirectory(environment: environment, userDatabaseHome: { home })
            #expect(directory == expected, "\(environment), user database home \(home ?? "none")")
        }
    }

    @Test("With no preferences directory, the application suite keeps the administrator's domains and refuses writes, and the locations say so with nil")
    func noDirectoryKeepsAdministratorsDomains() throws {
        let directory = TemporaryDirectory()
        let system = directory.appending("xdg")
        mkdir(system, 0o700)
        mkdir(system + "/RVS_PersistentPrefs", 0o700)
        writeFile(system + "/RVS_PersistentPrefs/app.plist", BinaryPropertyList.encode(.dictionary(["volume": .integer(5)])))
        let locations = DefaultsLocations(preferencesDirectory: nil, applicationDomainName: "app",
                                          systemDirectories: [system + "/RVS_PersistentPrefs"])
        #expect(locations.groupContainer == nil)
        #expect(throws: PrefsError.self) { try locations.applicationDomain() }
        let suite = try locations.applicationSuite()
        #expect(try suite.value(forKey: "volume") == .integer(5))
        #expect(suite.integer(forKey: "volume") == 5 && suite.lastError == nil)
        do {
            try suite.setValue(.integer(6), forKey: "volume")
            Issue.record("a write with no preferences directory succeeded")
        } catch {
            if case .userDefaultsUnavailable(let reason) = error { #expect(reason == DefaultsLocations.noDirectoryReason) } else {
                Issue.record("\(error)")
            }
        }
        suite.setPersistentDomain(["volume": 7], forName: "other")
        if case .userDefaultsUnavailable? = suite.lastError {} else { Issue.record("\(String(describing: suite.lastError))") }
        #expect(suite.persistentDomain(forName: "other") == nil)
        let group = try locations.groupSuite("group.example")
        #expect(group.globalDomain == nil)
        #expect(throws: PrefsError.self) { try group.setValue(.integer(1), forKey: "k") }
    }

    @Test("A relative RVS_PREFS_DIRECTORY is taken relative to the current directory")
    func relativeDirectoryIsMadeAbsolute() {
        let directory = DefaultsLocations.preferencesDirectory(environment: ["RVS_PREFS_DIRECTORY": "prefs"])
        #expect(directory == FileManager.default.currentDirectoryPath + "/prefs")
    }

    @Test("The group container is the one set in code, else RVS_PREFS_GROUP_CONTAINER, else the preferences directory")
    func groupContainerPrecedence() {
        let environment = ["RVS_PREFS_DIRECTORY": "/prefs", "RVS_PREFS_GROUP_CONTAINER": "/group"]
        #expect(DefaultsLocations.current(groupContainer: "/code", environment: environment).groupContainer == "/code")
        #expect(DefaultsLocations.current(groupContainer: nil, environment: environment).groupContainer == "/group")
        #expect(DefaultsLocations.current(groupContainer: "", environment: environment).groupContainer == "/group")
        #expect(DefaultsLocations.current(environment: ["RVS_PREFS_DIRECTORY": "/prefs"]).groupContainer == "/prefs")
    }

    @Test("The application domain is named by a settable identifier, by default the executable's name")
    func applicationDomainName() throws {
        let environment = ["RVS_PREFS_DIRECTORY": "/prefs"]
        #expect(DefaultsLocations.current(environment: environment).applicationDomainName == ProcessInfo.processInfo.processName)
        let named = DefaultsLocations.current(applicationDomainName: "com.example.tool", environment: environment)
        let domain = try named.applicationDomain()
        #expect(domain.path == "/prefs/com.example.tool.plist")
        let global = try named.globalDomain()
        #expect(global.path == "/prefs/.GlobalPreferences.plist")
    }

    @Test("A group suite is <group container>/<groupID>.plist, and processes configuring the same ones share it")
    func groupSuiteFile() throws {
        let directory = TemporaryDirectory()
        let locations = DefaultsLocations(preferencesDirectory: "/unused", groupContainer: directory.path, applicationDomainName: "app")
        let suite = try locations.groupSuite("group.example.shared")
        #expect((suite.persistentDomain as? FileDomainStorage)?.path == directory.appending("group.example.shared.plist"))
        #expect(try locations.groupSuite("group.example.shared") === suite, "one suite per file in a process")
        try suite.setValue(.integer(1), forKey: "k")
        #expect(directory.contents().contains("group.example.shared.plist"))
    }

    @Test("Durable mode takes effect even after an ordinary suite over the same file was used")
    func durableSuiteIsDistinctFromOrdinary() throws {
        let directory = TemporaryDirectory()
        let locations = DefaultsLocations(preferencesDirectory: directory.path, applicationDomainName: "app")
        let ordinary = try locations.applicationSuite()
        try ordinary.setValue(.integer(1), forKey: "k")
        let durable = try locations.applicationSuite(durable: true)
        #expect(durable !== ordinary)
        #expect((durable.persistentDomain as? FileDomainStorage)?.durable == true)
        #expect((try locations.applicationSuite().persistentDomain as? FileDomainStorage)?.durable == false)
        #expect(try durable.value(forKey: "k") == .integer(1))
    }

    @Test("A group ID that cannot be one file name makes the suite unavailable, and nothing is written anywhere",
          arguments: ["../escape", "a/b", "..", "."])
    func unusableGroupIDsAreUnavailable(groupID: String) {
        let directory = TemporaryDirectory()
        let container = directory.appending("container")
        let locations = DefaultsLocations(preferencesDirectory: directory.appending("prefs"), groupContainer: container, applicationDomainName: "app")
        #expect {
            try locations.groupSuite(groupID)
        } throws: { error in
            guard case .userDefaultsUnavailable? = error as? PrefsError else { return false }
            return true
        }
        #expect(directory.contents().isEmpty)
    }
}
