import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("harness settings-bridge, flat settings and the nested collection")
struct HarnessSettingsBridgeTests {
    let sandbox = HarnessSandbox()

    @Test("The bridge copies both ways, refuses values that do not fit the schema, and a removed value falls back to the registered default")
    func bridgesBothWays() throws {
        let run = try sandbox.run(["settings-bridge", "--directory", sandbox.path])
        #expect(run.status == 0, "standard error: \(run.errors)")
        #expect(run.errors.isEmpty)
        // The schema was loaded from the resource bundle beside the executable.
        #expect(run.lines.contains("    textSize  Text size  one of 12, 14, 18, default 14"))
        // Before anything is stored, and after the app clears its collection: the registered defaults.
        let registered = "    AppSettings = {darkMode = false; textSize = 14; userName = Anonymous; volume = 0.5;} (from the registration domain, the schema's default)"
        #expect(run.lines.filter { $0 == registered }.count == 2)
        // flat → nested, with the schema's check.
        #expect(run.lines.contains("    userName  Ada from the file: copied"))
        #expect(run.lines.contains("    textSize  huge from the file: refused, not one of 12, 14, 18; the collection keeps 14"))
        // nested → flat.
        #expect(run.lines.contains("    volume: 0.5 (the registration domain, the schema's default) → 0.8 (the file)"))
        // The removed flat value falls back visibly.
        #expect(run.lines.contains("    darkMode = false (from the registration domain, the schema's default)"))
        // On disk: the flat keys only; the registration domain is never written, the collection was cleared.
        #expect(try sandbox.domain("com.example.harness") == ["userName": .string("Ada"), "volume": .real(0.8), "textSize": .integer(18)])
    }

    @Test("-KEY VALUE arguments go into the argument domain, which wins over the file")
    func argumentDomainWins() throws {
        let run = try sandbox.run(["settings-bridge", "--directory", sandbox.path, "-userName", "Grace"])
        #expect(run.status == 0, "standard error: \(run.errors)")
        #expect(run.lines.contains("    userName  Grace from the argument domain, the command line: copied"))
        #expect(try sandbox.domain("com.example.harness")["userName"] == .string("Ada"))
    }
}
