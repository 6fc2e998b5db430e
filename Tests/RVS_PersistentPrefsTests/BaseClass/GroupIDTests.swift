import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A subclass exactly as the Quick start writes it: no injected suite, so it uses the default
/// `userDefaults` that `groupID` and the other process-wide settings select.
final class BaseClassDefaultSuitePrefs: RVS_PersistentPrefs, BaseClassWriteTarget {
    override var keys: [String] { ["launchCount", "appearance"] }
    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }
}

/// A second such subclass, to see that `groupID` affects every subclass.
final class BaseClassOtherDefaultSuitePrefs: RVS_PersistentPrefs {
    override var keys: [String] { ["launchCount", "appearance"] }
}

/// Points the process-wide settings into a private directory (application domain `<tmp>/prefs/app.plist`,
/// group container `<tmp>/group`, `groupID` nil) for `body`.
///
/// Only ever called in an exit test's child process: `groupID`, `groupContainerDirectory`,
/// `applicationDomainName` and `$RVS_PREFS_DIRECTORY` are process-wide, and changing them (or the
/// environment, which `setenv` may reallocate under a concurrent `getenv`) in the test process would
/// disturb the tests running beside these.
private func withPrivateConfiguration(_ body: (TemporaryDirectory) throws -> Void) throws {
    // The same directory for every call in the exit test's child process, made afresh and removed after:
    // the library reads the environment once, at its first operation, so a directory named later would
    // not be seen.
    let directory = TemporaryDirectory(path: NSTemporaryDirectory() + "/rvs-prefs-group-tests-\(getpid())")
    setenv(DefaultsLocations.directoryVariable, directory.appending("prefs"), 1)
    RVS_PersistentPrefs.groupContainerDirectory = directory.appending("group")
    RVS_PersistentPrefs.applicationDomainName = "app"
    RVS_PersistentPrefs.groupID = nil
    try body(directory)
}

private func contents(_ path: String) -> [String: PropertyListValue]? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    return try? FileDomainStorage.parse(fileBytes(path) ?? [], path: path).contents
}

private func everything(_ directory: TemporaryDirectory) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// Every test that relies on the default `userDefaults` and the process-wide settings that select it. Each
/// runs in a child process of its own (an exit test), where changing those settings disturbs no other test.
@Suite("groupID and the default suite (process-wide settings, each test in a process of its own)")
struct BaseClassGroupIDTests {
    @Test("groupID nil or empty selects the application domain, <preferences directory>/<domain name>.plist")
    func nilOrEmptyGroupSelectsTheApplicationDomain() async {
        await #expect(processExitsWith: .success) {
            for groupID in [nil, ""] as [String?] {
                try withPrivateConfiguration { directory in
                    RVS_PersistentPrefs.groupID = groupID
                    let prefs = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "dark"])
                    #expect(prefs.baseClassOutcome == .success)
                    #expect(contents(directory.appending("prefs/app.plist")) == ["settings": .dictionary(["appearance": .string("dark")])])
                    #expect(!FileManager.default.fileExists(atPath: directory.appending("group")), "the group container was used")
                    #expect(BaseClassDefaultSuitePrefs(key: "settings").appearance == "dark")
                }
            }
        }
    }

    @Test("A non-empty groupID selects <group container>/<groupID>.plist, and leaves the application domain alone")
    func groupIDSelectsTheGroupSuite() async {
        await #expect(processExitsWith: .success) {
            try withPrivateConfiguration { directory in
                RVS_PersistentPrefs.groupID = "group.com.example.shared"
                let prefs = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "dark"])
                #expect(prefs.baseClassOutcome == .success)
                #expect(contents(directory.appending("group/group.com.example.shared.plist"))
                    == ["settings": .dictionary(["appearance": .string("dark")])])
                #expect(!FileManager.default.fileExists(atPath: directory.appending("prefs")), "the application domain was used")
                prefs.clear()
                #expect(contents(directory.appending("group/group.com.example.shared.plist")) == [:])
            }
        }
    }

    @Test("groupID affects every subclass: instances of two subclasses share the group suite")
    func groupIDAffectsEverySubclass() async {
        await #expect(processExitsWith: .success) {
            try withPrivateConfiguration { directory in
                RVS_PersistentPrefs.groupID = "group.shared"
                let first = BaseClassDefaultSuitePrefs(key: "shared", values: ["appearance": "dark"])
                let second = BaseClassOtherDefaultSuitePrefs(key: "shared", values: ["launchCount": 2])
                #expect(first.baseClassOutcome == .success && second.baseClassOutcome == .success)
                #expect(second["appearance"] as? String == "dark")
                #expect(first["launchCount"] as? Int == 2)
                #expect(everything(directory).filter { $0.hasSuffix(".plist") } == ["group/group.shared.plist"])
            }
        }
    }

    @Test("A groupID that cannot be a suite name is userDefaultsUnavailable for every operation, and nothing is written anywhere")
    func unusableGroupIDIsUnavailable() async {
        await #expect(processExitsWith: .success) {
            for groupID in ["a/b", "..", ".", "../escape", "nested/dir/id", String(repeating: "g", count: 300)] {
                try withPrivateConfiguration { directory in
                    RVS_PersistentPrefs.groupID = groupID
                    let merged = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "dark"])
                    #expect(merged.baseClassOutcome == .userDefaultsUnavailable)
                    let prefs = BaseClassDefaultSuitePrefs()
                    #expect(prefs.baseClassOutcome == .userDefaultsUnavailable)
                    for operation in BaseClassOperation.allCases {
                        prefs.lastError = nil
                        operation.perform(on: prefs)
                        #expect(prefs.baseClassOutcome == .userDefaultsUnavailable, "\(operation.testDescription)")
                    }
                    #expect(everything(directory).isEmpty, "written: \(everything(directory))")
                }
            }
        }
    }

    @Test("An application domain or groupID named like the global domain is unavailable, and the global domain stays unwritten")
    func globalDomainNameCannotBeWritten() async {
        await #expect(processExitsWith: .success) {
            // `NSGlobalDomain` too: the name UserDefaults gives the global domain.
            for (name, asGroupID) in [DefaultsLocations.globalDomainName, "NSGlobalDomain"].flatMap({ name in [(name, true), (name, false)] }) {
                try withPrivateConfiguration { directory in
                    RVS_PersistentPrefs.groupContainerDirectory = nil  // the default container: the preferences directory
                    if asGroupID {
                        RVS_PersistentPrefs.groupID = name
                    } else {
                        RVS_PersistentPrefs.applicationDomainName = name
                    }
                    let prefs = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "injected"])
                    #expect(prefs.baseClassOutcome == .userDefaultsUnavailable)
                    prefs["appearance"] = "injected"
                    #expect(prefs.baseClassOutcome == .userDefaultsUnavailable)
                    if case .userDefaultsUnavailable(let reason)? = prefs.lastError {
                        #expect(reason.contains(name))
                    }
                    #expect(everything(directory).isEmpty, "written: \(everything(directory))")
                }
            }
        }
    }

    @Test("The environment is read once, at the first operation: changing it later moves nothing, while a setting changed in code redirects the next operation")
    func environmentIsReadOnceSettingsRedirect() async {
        await #expect(processExitsWith: .success) {
            try withPrivateConfiguration { directory in
                let prefs = BaseClassDefaultSuitePrefs()
                prefs.appearance = "first"
                #expect(contents(directory.appending("prefs/app.plist"))?["BaseClassDefaultSuitePrefs"] == .dictionary(["appearance": .string("first")]))
                // Another directory through the environment, after the first operation: not seen.
                setenv(DefaultsLocations.directoryVariable, directory.appending("moved"), 1)
                #expect(prefs.appearance == "first")
                prefs.appearance = "second"
                #expect(contents(directory.appending("prefs/app.plist"))?["BaseClassDefaultSuitePrefs"] == .dictionary(["appearance": .string("second")]))
                #expect(!FileManager.default.fileExists(atPath: directory.appending("moved")))
                // A setting changed in code: the very next operation follows it, in the directory the
                // environment named at first.
                RVS_PersistentPrefs.applicationDomainName = "renamed"
                prefs.appearance = "third"
                #expect(contents(directory.appending("prefs/renamed.plist"))?["BaseClassDefaultSuitePrefs"] == .dictionary(["appearance": .string("third")]))
                #expect(!FileManager.default.fileExists(atPath: directory.appending("moved")))
                #expect(prefs.lastError == nil)
            }
        }
    }

    @Test("Changing groupID redirects later operations of an existing instance, without migrating anything")
    func changingGroupIDRedirects() async {
        await #expect(processExitsWith: .success) {
            try withPrivateConfiguration { directory in
                let prefs = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "app"])
                let applicationFile = directory.appending("prefs/app.plist")
                let applicationBytes = try #require(fileBytes(applicationFile))

                RVS_PersistentPrefs.groupID = "group.one"
                #expect(prefs.values.isEmpty, "the group suite must not show the application domain's collection")
                #expect(prefs.baseClassOutcome == .success)
                prefs.appearance = "one"
                #expect(contents(directory.appending("group/group.one.plist")) == ["settings": .dictionary(["appearance": .string("one")])])

                RVS_PersistentPrefs.groupID = "group.two"
                #expect(prefs.appearance == "system")
                prefs["launchCount"] = 2
                #expect(contents(directory.appending("group/group.two.plist")) == ["settings": .dictionary(["launchCount": .integer(2)])])

                RVS_PersistentPrefs.groupID = nil
                #expect(prefs.appearance == "app")
                #expect(fileBytes(applicationFile) == applicationBytes)
                #expect(contents(directory.appending("group/group.one.plist")) == ["settings": .dictionary(["appearance": .string("one")])])
            }
        }
    }

    @Test("The group container set in code is where the group suite lives")
    func groupContainerDirectoryIsUsed() async {
        await #expect(processExitsWith: .success) {
            try withPrivateConfiguration { directory in
                RVS_PersistentPrefs.groupContainerDirectory = directory.appending("elsewhere/container")
                RVS_PersistentPrefs.groupID = "group.placed"
                let prefs = BaseClassDefaultSuitePrefs(key: "settings", values: ["appearance": "placed"])
                #expect(prefs.baseClassOutcome == .success)
                #expect(everything(directory).filter { $0.hasSuffix(".plist") } == ["elsewhere/container/group.placed.plist"])
            }
        }
    }
}
