import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `harness defaults edit`, driven by scripted editors: small shell scripts given as `$EDITOR`.
@Suite("harness defaults edit, with a scripted editor")
struct HarnessDefaultsEditTests {
    let sandbox = HarnessSandbox()
    /// Where the editor scripts live, and what they record.
    let scripts = TemporaryDirectory()

    @discardableResult
    func succeed(_ arguments: String...) throws -> HarnessRun {
        try sandbox.defaultsSucceeding(arguments)
    }

    /// A shell script that edits the file given as `$1`; its path, to give as `$EDITOR`.
    func editor(_ name: String, _ body: String) -> String {
        let path = scripts.appending(name)
        writeFile(path, Array("#!/bin/sh\n\(body)\n".utf8))
        chmod(path, 0o700)
        return path
    }

    func edit(_ arguments: String..., editor: String, variable: String = "EDITOR") throws -> HarnessRun {
        try sandbox.run(["defaults", "--directory", sandbox.path, "edit"] + arguments, environment: [variable: editor, "VISUAL": variable == "VISUAL" ? editor : ""])
    }

    @Test("edit writes what the editor saved, from a private temporary file that is removed afterwards")
    func editWritesTheSavedText() throws {
        try succeed("write", "app", "settings", "-dict", "level", "info", "port", "-int", "80")
        let script = editor("change.sh", """
            stat -c %a "$1" > "\(scripts.path)/mode"
            printf %s "$1" > "\(scripts.path)/path"
            sed -i 's/>info</>debug</; s/>80</>81</' "$1"
            """)
        let run = try edit("app", editor: script)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try sandbox.domain("app") == ["settings": .dictionary(["level": .string("debug"), "port": .integer(81)])])
        #expect(String(decoding: fileBytes(scripts.appending("mode")) ?? [], as: UTF8.self) == "600\n")
        let edited = String(decoding: fileBytes(scripts.appending("path")) ?? [], as: UTF8.self)
        #expect(edited.hasPrefix(sandbox.temporary.path + "/"))
        #expect(!FileManager.default.fileExists(atPath: edited))
        #expect(sandbox.temporary.contents().isEmpty)
    }

    @Test("edit runs $VISUAL before $EDITOR")
    func visualComesFirst() throws {
        try succeed("write", "app", "word", "before")
        let visual = editor("visual.sh", "sed -i 's/before/visual/' \"$1\"")
        let other = editor("other.sh", "sed -i 's/before/editor/' \"$1\"")
        let run = try sandbox.run(["defaults", "--directory", sandbox.path, "edit", "app"], environment: ["VISUAL": visual, "EDITOR": other])
        #expect(run.status == 0, "\(run.errors)")
        #expect(try sandbox.domain("app") == ["word": .string("visual")])
    }

    @Test("edit of text that does not parse changes nothing and names the line", arguments: ["xml", "openstep"])
    func garbageChangesNothing(_ format: String) throws {
        try succeed("write", "app", "word", "kept")
        let before = sandbox.files()
        let script = editor("garbage.sh", "printf '{\\n  a = b;\\n  c = (d, e\\n}\\n<strin>' > \"$1\"")
        let run = try edit("app", "--format", format, editor: script)
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1, "\(run.errors)")
        #expect(run.errors.contains("line "), "\(run.errors)")
        #expect(run.errors.contains("nothing was changed"))
        #expect(sandbox.files() == before)
        try expectEditKept(run, containing: "<strin>")
    }

    /// The edited text was kept, in the one file of the temporary directory, which the error names.
    func expectEditKept(_ run: HarnessRun, containing text: String) throws {
        let kept = sandbox.temporary.contents()
        #expect(kept.count == 1, "\(kept)")
        let path = try #require(kept.first.map { sandbox.temporary.appending($0) })
        #expect(run.errors.contains("your edited text is kept in \(path)"), "\(run.errors)")
        #expect(String(decoding: try #require(fileBytes(path)), as: UTF8.self).contains(text))
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test("edit whose editor exits non-zero changes nothing, even if it saved")
    func failedEditorChangesNothing() throws {
        try succeed("write", "app", "word", "kept")
        let before = sandbox.files()
        let run = try edit("app", editor: editor("fail.sh", "sed -i 's/kept/lost/' \"$1\"; exit 3"))
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.errors.contains("exited with status 3; nothing was changed"))
        #expect(sandbox.files() == before)
    }

    @Test("edit refuses when the domain changed while the editor was open, and --force writes anyway")
    func concurrentChangeIsRefused() throws {
        try succeed("write", "app", "word", "before")
        let harness = ChildProcess.buildDirectory + "/harness"
        // The editor itself plays the other writer: the change lands while the edit is open.
        let script = editor("race.sh", """
            "\(harness)" defaults --directory "\(sandbox.path)" write app other "$$"
            sed -i 's/before/mine/' "$1"
            """)
        let refused = try edit("app", editor: script)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("was changed by someone else while the editor was open"), "\(refused.errors)")
        #expect(try sandbox.domain("app")["word"] == .string("before"))
        try expectEditKept(refused, containing: "mine")
        for name in sandbox.temporary.contents() { unlink(sandbox.temporary.appending(name)) }

        let forced = try edit("app", "--force", editor: script)
        #expect(forced.status == 0, "\(forced.errors)")
        #expect(try sandbox.domain("app")["word"] == .string("mine"))
    }

    @Test("edit DOMAIN KEY --format openstep keeps the types of entries whose text still reads as them")
    func openStepKeepsTypes() throws {
        try succeed("write", "app", "settings", "-dict", "port", "-int", "80", "on", "-bool", "yes", "blob", "-data", "0a0b", "name", "Ada")
        try succeed("write", "app", "other", "stays")
        let script = editor("openstep.sh", "sed -i 's/= 80;/= 8080;/; s/Ada/Grace/; s/^}/    added = 5;\\n}/' \"$1\"")
        let run = try edit("app", "settings", "--format", "openstep", editor: script)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try sandbox.domain("app") == [
            "settings": .dictionary(["port": .integer(8080), "on": .bool(true), "blob": .data(Data([0x0a, 0x0b])), "name": .string("Grace"), "added": .string("5")]),
            "other": .string("stays"),
        ])
    }
}
