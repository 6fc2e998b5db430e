import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `prefsctl` sees every layer a program reads (SPEC §13, "Every layer, everywhere"): the user's file, system
/// defaults, forced entries and group suites, through the library's own search list.
@Suite("prefsctl shows every layer a program reads")
struct PrefsctlLayersTests {
    let sandbox = HarnessSandbox()
    static let domain = "com.example.app"
    static let key = "com.example.app.preferences"

    /// Where the sandbox's environment puts the system layer and the managed directory.
    var systemDirectory: String { sandbox.fallback.appending("xdg") + "/RVS_PersistentPrefs" }
    var managedDirectory: String { sandbox.fallback.appending("managed") }
    var here: [String] { ["--directory", sandbox.path] }
    var userFile: String { sandbox.path + "/\(Self.domain).plist" }
    var systemFile: String { systemDirectory + "/\(Self.domain).plist" }
    var managedFile: String { managedDirectory + "/\(Self.domain).plist" }

    func prefsctl(_ arguments: [String], environment: [String: String] = [:]) throws -> HarnessRun {
        try sandbox.prefsctl(arguments, environment: environment)
    }

    /// Runs prefsctl and requires success with nothing on standard error.
    @discardableResult
    func succeed(_ arguments: [String], environment: [String: String] = [:]) throws -> HarnessRun {
        let run = try prefsctl(arguments, environment: environment)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty, "prefsctl \(arguments.joined(separator: " "))")
        return run
    }

    /// The user's file, a system default file and a managed file, all holding entries of one collection:
    /// appearance in all three (forced dark), launchCount in the user's only, volume in the system's only.
    func threeLayers() throws {
        try succeed(here + ["write", Self.domain, Self.key, "-dict", "appearance", "blue", "launchCount", "-int", "3"])
        try succeed(["--system", "write", Self.domain, Self.key, "-dict", "appearance", "light", "volume", "-int", "5"])
        try succeed(["--managed", "write", Self.domain, Self.key, "appearance", "dark"])
    }

    /// `text` parsed as JSON.
    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test("read DOMAIN [KEY [ENTRY]] shows what a program reads: forced entries over the user's over system defaults")
    func readCombinesLayers() throws {
        try threeLayers()
        #expect(try succeed(here + ["read", Self.domain]).output == """
            {
                \(Self.key) = {
                    appearance = dark;
                    launchCount = 3;
                    volume = 5;
                };
            }

            """)
        #expect(try succeed(here + ["read", Self.domain, Self.key, "appearance"]).output == "dark\n")
        #expect(try succeed(here + ["read", Self.domain, Self.key, "volume"]).output == "5\n")
        let parsed = try #require(try json(succeed(here + ["read", Self.domain, Self.key, "--json"]).output) as? [String: Any])
        #expect(parsed["appearance"] as? String == "dark")
        #expect(parsed["volume"] as? Int == 5)
        // The user's file itself is unchanged: nothing of the other layers was copied into it.
        #expect(try sandbox.domain(Self.domain) == [Self.key: .dictionary(["appearance": .string("blue"), "launchCount": .integer(3)])])
    }

    @Test("keys and read-type see the layers as read does")
    func keysAndTypesCombineLayers() throws {
        try threeLayers()
        #expect(try succeed(here + ["keys", Self.domain, Self.key]).output == "appearance\nlaunchCount\nvolume\n")
        #expect(try succeed(here + ["read-type", Self.domain, Self.key, "volume"]).output == "Type is integer\n")
    }

    @Test("A domain that only the system or managed layer holds is read, found and listed like the user's own")
    func administratorOnlyDomain() throws {
        try succeed(["--system", "write", "com.example.service", "settings", "-dict", "port", "-int", "8080"])
        try succeed(["--managed", "write", "com.example.locked", "settings", "-dict", "telemetry", "-bool", "NO"])
        #expect(try succeed(here + ["domains"]).output == "com.example.locked (managed), com.example.service (system)\n")
        #expect(try succeed(here + ["read", "com.example.service", "settings", "port"]).output == "8080\n")
        #expect(try succeed(here + ["read", "com.example.locked", "settings", "telemetry"]).output == "0\n")
        let absent = try prefsctl(here + ["read", "com.example.absent"])
        #expect(absent.status == 1)
        #expect(absent.errors.contains("Domain com.example.absent does not exist"))
    }

    @Test("find searches the system and managed layers too, with the value a program reads")
    func findSearchesEveryLayer() throws {
        try threeLayers()
        try succeed(["--system", "write", "com.example.service", "mode", "fromSystemOnly"])
        let run = try succeed(here + ["find", "fromsystem"])
        #expect(run.output == "Found 1 keys in domain 'com.example.service': {\n    mode = fromSystemOnly;\n}\n")
        // A forced value is what matches, not the user's value it hides.
        #expect(try prefsctl(here + ["find", "blue"]).status == 1)
        let forced = try #require(try json(succeed(here + ["find", "dark", "--json"]).output) as? [String: [String: Any]])
        #expect(Set(forced.keys) == [Self.domain])
        #expect((forced[Self.domain]?[Self.key] as? [String: Any])?["volume"] as? Int == 5)
    }

    @Test("export writes the domain as a program reads it; the user's file alone when given by its path")
    func exportEffectiveDomain() throws {
        try threeLayers()
        let effective = try #require(try json(succeed(here + ["export", Self.domain, "-", "--json"]).output) as? [String: [String: Any]])
        #expect(effective[Self.key]?["appearance"] as? String == "dark")
        #expect(effective[Self.key]?["volume"] as? Int == 5)
        #expect(effective[Self.key]?["launchCount"] as? Int == 3)
        let own = try #require(try json(succeed(here + ["export", userFile, "-", "--json"]).output) as? [String: [String: Any]])
        #expect(own[Self.key]?["appearance"] as? String == "blue")
        #expect(own[Self.key]?["volume"] == nil)
    }

    @Test("Group suites of $RVS_PREFS_GROUP_CONTAINER are listed, read over the layers, found and written as domains")
    func groupSuites() throws {
        let container = sandbox.directory.appending("group")
        #expect(mkdir(container, 0o700) == 0)
        let environment = ["RVS_PREFS_GROUP_CONTAINER": container]
        try FileDomainStorage(directory: container, name: "group.example.shared").modify(repairing: .failIfUnreadable) {
            $0["shared"] = .dictionary(["colour": .string("teal")])
        }
        try succeed(["--system", "write", "group.example.shared", "shared", "-dict", "size", "-int", "2"])
        try succeed(here + ["write", Self.domain, "k", "v"], environment: environment)
        #expect(try succeed(here + ["domains"], environment: environment).output == "\(Self.domain), group.example.shared (group, system)\n")
        #expect(try succeed(here + ["read", "group.example.shared", "shared", "colour"], environment: environment).output == "teal\n")
        #expect(try succeed(here + ["read", "group.example.shared", "shared", "size"], environment: environment).output == "2\n")
        #expect(try succeed(here + ["find", "teal"], environment: environment).output.contains("domain 'group.example.shared'"))
        try succeed(here + ["write", "group.example.shared", "shared", "colour", "plum"], environment: environment)
        #expect(try FileDomainStorage(directory: container, name: "group.example.shared").snapshot().contents["shared"]
                == .dictionary(["colour": .string("plum")]))
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/group.example.shared.plist"))
    }

    @Test("An administrator's file the library ignores is reported once on standard error as a warning; read, find and export show the other layers and exit 0")
    func ignoredFileIsAWarning() throws {
        try threeLayers()
        #expect(chmod(managedFile, 0o666) == 0)
        for verb in [["read", Self.domain, Self.key, "appearance"], ["find", "blue"], ["export", Self.domain, "-", "--json"]] {
            let run = try prefsctl(here + verb)
            #expect(run.status == 0, "\(verb): \(run.errors)")
            #expect(run.errorLines.count == 1, "\(verb): \(run.errors)")
            #expect(run.errors.hasPrefix("prefsctl: warning: "), "\(verb): \(run.errors)")
            #expect(run.errors.contains(managedFile), "\(verb): \(run.errors)")
            #expect(run.output.contains("blue"), "\(verb): \(run.output)")
        }
        // A system file that is not a property list at all: the same.
        writeFile(systemFile, Array("garbage".utf8))
        let run = try prefsctl(here + ["read", Self.domain, Self.key])
        #expect(run.status == 0)
        #expect(run.errorLines.count == 2, "\(run.errors)")
        #expect(run.errors.contains(systemFile))
        #expect(run.output == "{\n    appearance = blue;\n    launchCount = 3;\n}\n")
    }

    @Test("read --sources shows a system value that is not a dictionary with its file, and warns that collections ignore it")
    func sourcesOfNonDictionarySystemValue() throws {
        try succeed(["--system", "write", Self.domain, Self.key, "not a dictionary"])
        let run = try prefsctl(here + ["read", "--sources", Self.domain])
        #expect(run.status == 0)
        #expect(run.output == "\(Self.key) = \"not a dictionary\";  (system: \(systemFile))\n")
        #expect(run.errorLines.count == 1)
        #expect(run.errors.contains("\(systemFile): the value under '\(Self.key)' is a string, not a dictionary"), "\(run.errors)")
        let parsed = try #require(try json(prefsctl(here + ["read", "--sources", Self.domain, "--json"]).output) as? [String: [String: Any]])
        #expect(parsed[Self.key]?["layer"] as? String == "system")
        #expect(parsed[Self.key]?["file"] as? String == systemFile)
    }

    @Test("read --sources of a domain that no layer holds fails instead of printing an empty line")
    func sourcesOfAbsentDomain() throws {
        let run = try prefsctl(here + ["read", "--sources", "com.example.absent"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains("Domain com.example.absent does not exist"))
    }

    @Test("read --sources lists the domain's own keys, not the global domain's under every domain")
    func sourcesLeaveOutGlobalKeys() throws {
        try succeed(here + ["write", "-g", "AppleLanguages", "-array", "en"])
        try succeed(here + ["write", Self.domain, "k", "v"])
        let run = try succeed(here + ["read", "--sources", Self.domain])
        #expect(run.output == "k = v;  (persistent: \(userFile))\n")
        // Asked for by name, a key only the global domain holds is shown with its layer.
        #expect(try succeed(here + ["read", "--sources", Self.domain, "AppleLanguages"]).output.contains("(global: "))
    }

    @Test("read --sources of a --system or --managed domain, the global domain or a file shows its one layer and file instead of refusing")
    func sourcesOfOneLayer() throws {
        try threeLayers()
        try succeed(here + ["write", "-g", "AppleLanguages", "-array", "en"])
        #expect(try succeed(["--system", "read", "--sources", Self.domain]).output == """
            \(Self.key):
                appearance = light;  (system: \(systemFile))
                volume = 5;  (system: \(systemFile))

            """)
        #expect(try succeed(["--managed", "read", "--sources", Self.domain, Self.key, "appearance"]).output
                == "\(Self.key):\n    appearance = dark;  (managed: \(managedFile))\n")
        #expect(try succeed(here + ["read", "--sources", "-g"]).output == "AppleLanguages = (en);  (global: \(sandbox.path)/.GlobalPreferences.plist)\n")
        let file = try #require(try json(succeed(here + ["read", "--sources", userFile, "--json"]).output) as? [String: [String: Any]])
        let launchCount = try #require((file[Self.key]?["entries"] as? [String: Any])?["launchCount"] as? [String: Any])
        #expect(launchCount["layer"] as? String == "file")
        #expect(launchCount["file"] as? String == userFile)
        #expect(launchCount["value"] as? Int == 3)
    }

    @Test("watch hears a managed file that was ignored when it started as soon as it is fixed, and reads it from then on")
    func watchHearsFixedManagedFile() throws {
        try threeLayers()
        #expect(chmod(managedFile, 0o666) == 0)
        let watcher = try ChildProcess("prefsctl", here + ["watch", Self.domain, "--json"], environment: sandbox.environment)
        defer {
            watcher.kill()
            _ = watcher.wait()
        }
        #expect(watcher.readLine() == #"{"key":"\#(Self.key)","value":{"appearance":"blue","launchCount":3,"volume":5}}"#)
        #expect(chmod(managedFile, 0o644) == 0)
        // A change of the user's own afterwards, printed in any case: a watch that missed the fix fails here, not hangs.
        try succeed(here + ["write", Self.domain, "other", "x"])
        var lines: [String] = []
        while let line = watcher.readLine() {
            lines.append(line)
            if line.contains(#""key":"other""#) { break }
        }
        #expect(lines == [#"{"key":"\#(Self.key)","value":{"appearance":"dark","launchCount":3,"volume":5}}"#, #"{"key":"other","value":"x"}"#])
    }

    @Test("watch reports a change to a group suite and a system default of it, not the global domain's keys")
    func watchGroupSuite() throws {
        let container = sandbox.directory.appending("group")
        #expect(mkdir(container, 0o700) == 0)
        let environment = ["RVS_PREFS_GROUP_CONTAINER": container]
        try succeed(here + ["write", "-g", "AppleLanguages", "-array", "en"])
        try FileDomainStorage(directory: container, name: "group.example.shared").modify(repairing: .failIfUnreadable) { $0["count"] = .integer(1) }
        let watcher = try ChildProcess("prefsctl", here + ["watch", "group.example.shared"],
                                       environment: sandbox.environment.merging(environment) { _, new in new })
        defer {
            watcher.kill()
            _ = watcher.wait()
        }
        #expect(watcher.readLine() == "count = 1;")
        try succeed(here + ["write", "group.example.shared", "count", "-int", "2"], environment: environment)
        #expect(watcher.readLine() == "count = 2;")
        try succeed(["--system", "write", "group.example.shared", "fromSystem", "yes"])
        #expect(watcher.readLine() == "fromSystem = yes;")
    }
}
