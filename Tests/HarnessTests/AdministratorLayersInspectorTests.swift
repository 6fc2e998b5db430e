import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("The inspector and the administrator's layers: read --sources, marked domains, forced entries")
struct AdministratorLayersInspectorTests {
    let sandbox = HarnessSandbox()
    let layers = TemporaryDirectory()

    private var systemDirectory: String { layers.appending("xdg/RVS_PersistentPrefs") }
    private var managedDirectory: String { layers.appending("managed") }

    private var environment: [String: String] {
        ["XDG_CONFIG_DIRS": layers.appending("xdg"), "RVS_PREFS_MANAGED_DIRECTORY": managedDirectory]
    }

    init() {
        mkdir(layers.appending("xdg"), 0o700)
        mkdir(systemDirectory, 0o700)
        mkdir(managedDirectory, 0o700)
    }

    private func install(_ root: [String: PropertyListValue], at path: String) {
        writeFile(path, BinaryPropertyList.encode(.dictionary(root)))
        chmod(path, 0o600)
    }

    private func defaults(_ arguments: String...) throws -> HarnessRun {
        try sandbox.run(["defaults", "--directory", sandbox.path] + arguments, environment: environment)
    }

    private func prepare() throws {
        install(["settings": .dictionary(["appearance": .string("light"), "volume": .integer(5)])],
                at: systemDirectory + "/com.example.app.plist")
        install(["settings": .dictionary(["appearance": .string("dark")])], at: managedDirectory + "/com.example.app.plist")
        install(["settings": .dictionary(["policy": .string("strict")])], at: managedDirectory + "/com.example.locked.plist")
        let written = try defaults("write", "com.example.app", "settings", "-dict-add", "launchCount", "-int", "3")
        #expect(written.status == 0, "\(written.errors)")
    }

    @Test("read --sources shows each entry of a collection with the layer and file that supply it")
    func readSources() throws {
        try prepare()
        let run = try defaults("read", "--sources", "com.example.app")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.lines.filter { !$0.isEmpty } == [
            "settings:",
            "    appearance = dark;  (managed: \(managedDirectory)/com.example.app.plist)",
            "        shadows light;  (system: \(systemDirectory)/com.example.app.plist)",
            "    launchCount = 3;  (persistent: \(sandbox.path)/com.example.app.plist)",
            "    volume = 5;  (system: \(systemDirectory)/com.example.app.plist)",
        ])
        let one = try defaults("read", "--sources", "com.example.app", "missing")
        #expect(one.status != 0 && one.errors.contains("does not exist in any layer"))
    }

    @Test("domains marks the domains with system or managed files, listing those only an administrator's files hold")
    func domainsMarked() throws {
        try prepare()
        let run = try defaults("domains")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.lines.first == "com.example.app (system, managed), com.example.locked (managed)")
    }

    @Test("Writing a forced entry with the inspector is refused with the library's message, and changes nothing")
    func forcedWriteRefused() throws {
        try prepare()
        let before = try sandbox.domain("com.example.app")
        for arguments in [["write", "com.example.app", "settings", "-dict-add", "appearance", "light"],
                          ["write", "com.example.app", "settings", "appearance", "dark"],
                          ["write", "com.example.app", "settings", "{appearance = dark;}"]] {
            let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments, environment: environment)
            #expect(run.status == 1, "\(arguments)")
            #expect(run.errors.contains("Rejected write: appearance is forced by the administrator in \(managedDirectory)/com.example.app.plist"),
                    "\(run.errors)")
        }
        #expect(try sandbox.domain("com.example.app") == before)
        let other = try defaults("write", "com.example.app", "settings", "-dict-add", "launchCount", "-int", "4")
        #expect(other.status == 0, "\(other.errors)")
    }
}
