import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("harness bindings, the prompt with observers")
struct HarnessBindingsTests {
    let sandbox = HarnessSandbox()

    @Test("A piped session prints old → new after each successful write, nothing after rejected ones, and ends at EOF with status 0")
    func pipedSessionShowsObserverLines() throws {
        let run = try sandbox.run(["bindings", "--directory", sandbox.path], input: """
            set userName Ada Lovelace
            set launchCount 3
            set launchCount three
            set colour blue
            set launchCount 3
            set darkMode yes
            remove launchCount
            clear
            set volume 0.25
            """)
        #expect(run.status == 0)
        #expect(run.errors.isEmpty)
        #expect(run.lines == [
            "  ↳ userName: (none) → \"Ada Lovelace\"",
            "  ↳ launchCount: (none) → 3",
            "  rejected: launchCount takes a whole number such as 3, not three; nothing was written",
            "  lastError: Rejected write: entry names not in keys: colour; nothing was written",
            "  ↳ saved; every entry is as it was",
            "  ↳ darkMode: (none) → true",
            "  ↳ launchCount: 3 → (none)",
            "  ↳ darkMode: true → (none)",
            "  ↳ userName: \"Ada Lovelace\" → (none)",
            "  ↳ volume: (none) → 0.25",
            "",
        ])
        #expect(try sandbox.domain("com.example.harness") == ["Bindings": .dictionary(["volume": .real(0.25)])])
    }

    @Test("The constrained volume refuses a value outside 0 to 1, naming the range, and writes nothing")
    func constrainedVolumeRefusesOutOfRange() throws {
        let run = try sandbox.run(["bindings", "--directory", sandbox.path], input: "set volume 0.25\nset volume 2\n")
        #expect(run.status == 0)
        #expect(run.lines.contains("  lastError: Rejected write: the value of the entry 'volume' is not allowed: it must be from 0.0 to 1.0; nothing was written"))
        #expect(try sandbox.domain("com.example.harness") == ["Bindings": .dictionary(["volume": .real(0.25)])])
    }

    @Test("Without a terminal there is no prompt; show prints the typed properties; quit ends the session")
    func showAndQuit() throws {
        let run = try sandbox.run(["bindings", "--directory", sandbox.path], input: "set darkMode on\nshow\nquit\nset userName Never\n")
        #expect(run.status == 0)
        #expect(!run.output.contains("bindings>"))
        #expect(run.lines.contains("  Bindings = {darkMode = true;}"))
        #expect(run.lines.contains("  darkMode    = true"))
        #expect(run.lines.contains { $0.hasPrefix("  userName    = Anonymous") && $0.contains("default") })
        #expect(try sandbox.domain("com.example.harness") == ["Bindings": .dictionary(["darkMode": .bool(true)])])
    }

    @Test("An unknown command is one line on standard error, and the session goes on")
    func unknownCommandContinues() throws {
        let run = try sandbox.run(["bindings", "--directory", sandbox.path], input: "frobnicate\nset launchCount 1\n")
        #expect(run.status == 0)
        #expect(run.errorLines == ["unknown command 'frobnicate'; type help for the commands"])
        #expect(run.lines.first == "  ↳ launchCount: (none) → 1")
    }

    @Test("Without --directory the session works in a temporary directory and leaves nothing behind")
    func temporaryDirectoryIsRemoved() throws {
        let run = try sandbox.run(["bindings"], input: "set userName Ada\n")
        #expect(run.status == 0)
        #expect(run.lines.first == "  ↳ userName: (none) → Ada")
        #expect(sandbox.temporary.contents().isEmpty)
        #expect(sandbox.fallback.contents().isEmpty)
    }
}
