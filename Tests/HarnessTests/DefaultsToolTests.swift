import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The inspector as an administrator's tool: JSON, entry paths, help and manual, completion, and the
/// messages that say what to do.
@Suite("harness defaults as an administrator's tool")
struct HarnessDefaultsToolTests {
    let sandbox = HarnessSandbox()

    @discardableResult
    func succeed(_ arguments: String..., input: String = "") throws -> HarnessRun {
        try sandbox.defaultsSucceeding(arguments, input: input)
    }

    func fail(_ arguments: String...) throws -> HarnessRun {
        let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments)
        #expect(run.status != 0)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        return run
    }

    /// The repository's root, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let verbs = ["domains", "read", "keys", "read-type", "write", "rename", "delete", "find", "export", "import", "edit", "watch", "verify", "list-keys", "describe", "range", "completion", "help"]

    // MARK: JSON

    @Test("read --json and export --format json print JSON that Python reads, dates as ISO 8601 and data as base64")
    func jsonOutput() throws {
        try succeed("write", "app", "count", "-int", "7")
        try succeed("write", "app", "ratio", "-float", "2")
        try succeed("write", "app", "on", "-bool", "yes")
        try succeed("write", "app", "when", "-date", "2024-05-01 12:30:00 +0000")
        try succeed("write", "app", "bytes", "-data", "0a0b0c")
        try succeed("write", "app", "list", "-array", "a", "-int", "2")
        let exported = try succeed("export", "app", "-", "--format", "json").output
        let seen = try python("import json, sys; d = json.load(sys.stdin); print(repr((d['count'], d['ratio'], d['on'], d['when'], d['bytes'], d['list'])))", input: Array(exported.utf8))
        #expect(String(decoding: seen, as: UTF8.self) == "(7, 2.0, True, '2024-05-01T12:30:00Z', 'CgsM', ['a', 2])\n")
        #expect(try succeed("read", "app", "--json").output == exported)
        #expect(try succeed("read", "app", "list", "--json").output == "[\n  \"a\",\n  2\n]\n")
    }

    @Test("export refuses a domain whose file holds keys that differ only in Unicode normalization, which an export would drop, and writes nothing")
    func exportRefusesNormalizationTwins() throws {
        let file = sandbox.path + "/twins.plist"
        writeFile(file, try python("import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({'s': {'caf\\u00e9': 1, 'cafe\\u0301': 2}}, fmt=plistlib.FMT_BINARY))"))
        let backup = sandbox.temporary.appending("backup.plist")
        for destination in ["-", backup] {
            let run = try sandbox.defaults("export", "twins", destination, "--format", "binary")
            #expect(run.status == 1, "\(run.output)")
            #expect(run.errors.contains("holds 1 entry whose key differs from another's only in Unicode normalization"), "\(run.errors)")
            #expect(run.output.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: backup))
    }

    @Test("edit keeps an untouched date's fraction of a second, in XML and in OpenStep text, which show dates to the second", arguments: ["xml", "openstep"])
    func editKeepsExactDates(format: String) throws {
        let exact = Date(timeIntervalSinceReferenceDate: 735_913_800.25)
        try FileDomainStorage(directory: sandbox.path, name: "d").modify(repairing: .failIfUnreadable) {
            $0 = ["c": .dictionary(["when": .date(exact), "list": .array([.date(exact)]), "name": .string("a")])]
        }
        let editor = sandbox.temporary.appending("editor-\(format).sh")
        let change = format == "xml" ? "s|<string>a</string>|<string>b</string>|" : "s/name = a;/name = b;/"
        writeFile(editor, Array("#!/bin/sh\nsed -i '\(change)' \"$1\"\n".utf8))
        chmod(editor, 0o700)
        let run = try sandbox.run(["defaults", "--directory", sandbox.path, "edit", "d", "--format", format],
                                  environment: ["EDITOR": editor, "VISUAL": ""])
        #expect(run.status == 0, "\(run.errors)")
        #expect(try sandbox.domain("d") == ["c": .dictionary(["when": .date(exact), "list": .array([.date(exact)]), "name": .string("b")])])
    }

    @Test("edit --format openstep keeps an untouched unsigned integer above Int64.max as one")
    func openStepEditKeepsLargeUnsigned() throws {
        try FileDomainStorage(directory: sandbox.path, name: "o").modify(repairing: .failIfUnreadable) {
            $0 = ["c": .dictionary(["big": .unsignedInteger(.max), "x": .integer(1)])]
        }
        let editor = sandbox.temporary.appending("editor.sh")
        writeFile(editor, Array("#!/bin/sh\nsed -i 's/x = 1;/x = 2;/' \"$1\"\n".utf8))
        chmod(editor, 0o700)
        let run = try sandbox.run(["defaults", "--directory", sandbox.path, "edit", "o", "--format", "openstep"],
                                  environment: ["EDITOR": editor, "VISUAL": ""])
        #expect(run.status == 0, "\(run.errors)")
        #expect(try sandbox.domain("o") == ["c": .dictionary(["big": .unsignedInteger(.max), "x": .integer(2)])])
    }

    @Test("write -date takes dates before 1582 in the proleptic Gregorian calendar, as it prints them and Python reads them")
    func datesBeforeTheGregorianReform() throws {
        // Seconds from 2001-01-01 to each, as Python's datetime (proleptic Gregorian) counts them.
        let dates = ["1000-01-01 00:00:00 +0000": -31_588_531_200.0, "0001-01-01T00:00:00Z": -63_113_904_000.0,
                     "1582-10-04": -13_198_550_400.0, "2024-05-01 12:30:00 +0000": 736_259_400.0]
        for (text, seconds) in dates {
            try succeed("write", "old", "when", "-date", text)
            #expect(try sandbox.domain("old")["when"] == .date(Date(timeIntervalSinceReferenceDate: seconds)), "\(text)")
        }
        try succeed("write", "old", "when", "-date", "1000-01-01 00:00:00 +0000")
        #expect(try succeed("read", "old", "when").output == "1000-01-01 00:00:00 +0000\n")
    }

    @Test("import takes JSON with its types; dates and data come back as strings, the documented loss")
    func jsonImport() throws {
        try succeed("write", "app", "when", "-date", "2024-05-01 12:30:00 +0000")
        try succeed("write", "app", "count", "-int", "3")
        let json = try succeed("export", "app", "-", "--format", "json").output
        try succeed("import", "copy", "-", input: json)
        #expect(try sandbox.domain("copy") == ["when": .string("2024-05-01T12:30:00Z"), "count": .integer(3)])
        try succeed("import", "typed", "-", input: #"{"i": -5, "r": 1.5, "e": 1e3, "b": false, "s": "\u00e9\n", "a": [], "d": {"x": [true]}}"#)
        #expect(try sandbox.domain("typed") == [
            "i": .integer(-5), "r": .real(1.5), "e": .real(1000), "b": .bool(false), "s": .string("é\n"),
            "a": .array([]), "d": .dictionary(["x": .array([.bool(true)])]),
        ])
        // An unsigned integer above Int64.max, as its own export writes it, comes back whole; beyond UInt64 is refused.
        try FileDomainStorage(directory: sandbox.path, name: "big").modify(repairing: .failIfUnreadable) {
            $0 = ["big": .unsignedInteger(.max), "small": .integer(.min)]
        }
        let big = try succeed("export", "big", "-", "--json").output
        try succeed("import", "big2", "-", input: big)
        #expect(try sandbox.domain("big2") == ["big": .unsignedInteger(.max), "small": .integer(.min)])
        let tooBig = try sandbox.defaults("import", "big3", "-", input: #"{"n": 18446744073709551616}"#)
        #expect(tooBig.status == 1 && tooBig.errors.contains("is not a 64-bit integer"), "\(tooBig.errors)")
    }

    @Test("import of JSON with null, or malformed JSON, changes nothing and names the line")
    func jsonImportRefusals() throws {
        try succeed("write", "app", "kept", "yes")
        let before = sandbox.files()
        for text in ["{\"a\": null}", "{\"a\": 1,\n \"b\": }"] {
            let run = try sandbox.defaults("import", "app", "-", input: text)
            #expect(run.status == 1)
            #expect(run.errors.contains("line "), "\(run.errors)")
        }
        #expect(sandbox.files() == before)
    }

    @Test("export --format binary writes the bytes of a domain file")
    func exportBinary() throws {
        try succeed("write", "app", "count", "-int", "7")
        let path = sandbox.temporary.appending("app.bplist")
        try succeed("export", "app", path, "--format", "binary")
        let bytes = fileBytes(path) ?? []
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(try PropertyListValue(propertyListData: Data(bytes)) == .dictionary(["count": .integer(7)]))
    }

    // MARK: Entry paths

    @Test("read and write reach entries inside a stored collection, one argument per entry, dots and all")
    func entryPaths() throws {
        let key = "com.example.app.preferences"
        try succeed("write", "app", key, "-dict", "port", "-int", "80", "level", "info")
        try succeed("write", "app", key, "level", "debug")
        try succeed("write", "app", key, "servers", "-array", "a", "b")
        try succeed("write", "app", key, "servers", "1", "c")
        try succeed("write", "app", key, "servers", "2", "-int", "4")
        try succeed("write", "app", key, "nested", "deeper", "x.y", "-bool", "yes")
        #expect(try sandbox.domain("app") == [key: .dictionary([
            "port": .integer(80), "level": .string("debug"), "servers": .array([.string("a"), .string("c"), .integer(4)]),
            "nested": .dictionary(["deeper": .dictionary(["x.y": .bool(true)])]),
        ])])
        #expect(try succeed("read", "app", key, "port").output == "80\n")
        #expect(try succeed("read", "app", key, "servers", "1").output == "c\n")
        #expect(try succeed("read-type", "app", key, "nested", "deeper", "x.y").output == "Type is boolean\n")
        try succeed("delete", "app", key, "servers", "0")
        #expect(try succeed("read", "app", key, "servers", "--json").output == "[\n  \"c\",\n  4\n]\n")

        let before = sandbox.files()
        #expect(try fail("read", "app", key, "missing").errors.contains("no entry 'missing'"))
        #expect(try fail("write", "app", key, "level", "inner", "x").errors.contains("inside a string"))
        #expect(try fail("write", "app", key, "servers", "9", "x").errors.contains("not an index of the array"))
        #expect(sandbox.files() == before)
    }

    // MARK: Help, version, manual, completion

    @Test("help VERB and VERB --help print the verb's usage with an example, for every verb", arguments: verbs)
    func verbHelp(_ verb: String) throws {
        let help = try succeed("help", verb)
        #expect(help.output.hasPrefix("usage: harness defaults \(verb)"))
        #expect(help.output.contains("\nExample"))
        #expect(try succeed(verb, "--help").output == help.output)
        #expect(sandbox.files().isEmpty)
    }

    @Test("--version on harness and on harness defaults prints the version CHANGELOG.md names")
    func version() throws {
        let changelog = try String(contentsOfFile: Self.repository + "/CHANGELOG.md", encoding: .utf8)
        let number = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") }?.split(separator: " ")[1])
        for arguments in [["--version"], ["defaults", "--version"]] {
            let run = try sandbox.run(arguments)
            #expect(run.status == 0)
            #expect(run.output == "harness \(number) (RVS_PersistentPrefs \(number))\n")
        }
    }

    @Test("The committed man/harness-defaults.1 is what help --man generates")
    func manualPageIsGenerated() throws {
        let committed = try String(contentsOfFile: Self.repository + "/man/harness-defaults.1", encoding: .utf8)
        let generated = try succeed("help", "--man").output
        #expect(generated == committed, "regenerate it: swift run harness defaults help --man > man/harness-defaults.1")
        for verb in Self.verbs {
            #expect(generated.contains(".B " + verb.replacingOccurrences(of: "-", with: "\\-")), "\(verb) is not in the manual")
        }
    }

    /// The completions bash offers for the words of `line`, the last one being completed.
    func bashCompletions(_ words: [String]) throws -> [String] {
        let script = try sandbox.run(["completion", "bash"]).output
        let scriptPath = sandbox.temporary.appending("completion.bash")
        writeFile(scriptPath, Array(script.utf8))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        // `harness` on the PATH is the one built, as the completion calls it for domain names.
        let child = try ChildProcess("/bin/bash", ["-c", """
            PATH="\(ChildProcess.buildDirectory):$PATH"; source '\(scriptPath)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _harness; printf '%s\\n' "${COMPREPLY[@]}"
            """], environment: sandbox.environment)
        child.closeInput()
        let output = child.readAllOutput()
        #expect(child.wait() == 0, "\(child.readErrors())")
        return output.split(separator: "\n").map(String.init).sorted()
    }

    @Test("harness completion bash completes subcommands, verbs, options and domain names")
    func bashCompletion() throws {
        try succeed("write", "com.example.b", "k", "v")
        try succeed("write", "com.example.a", "k", "v")
        #expect(try bashCompletions(["harness", "def"]) == ["defaults"])
        #expect(try bashCompletions(["harness", "defaults", "re"]) == ["read", "read-type", "rename"])
        #expect(try bashCompletions(["harness", "defaults", "export", "app", "-", "--f"]) == ["--format"])
        #expect(try bashCompletions(["harness", "defaults", "--directory", sandbox.path, "read", "com.ex"]) == ["com.example.a", "com.example.b"])
        #expect(try sandbox.run(["completion", "zsh"]).output.hasPrefix("#compdef harness\n"))
    }

    /// What the zsh completion offers for `words`, the last being completed. Outside a completion
    /// widget `compadd` cannot run, so it is replaced by a function that prints its candidates: zsh
    /// itself would then keep those that start with the word typed.
    func zshCandidates(_ words: [String]) throws -> [String] {
        let scriptPath = sandbox.temporary.appending("_harness")
        writeFile(scriptPath, Array(try sandbox.run(["completion", "zsh"]).output.utf8))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let child = try ChildProcess("/usr/bin/zsh", ["-f", "-c", """
            PATH="\(ChildProcess.buildDirectory):$PATH"; source '\(scriptPath)' >/dev/null 2>&1
            compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }; _files() { print FILES }
            words=(\(quoted)); CURRENT=\(words.count); _harness
            """], environment: sandbox.environment)
        child.closeInput()
        let output = child.readAllOutput()
        #expect(child.wait() == 0, "\(child.readErrors())")
        return output.split(separator: "\n").map(String.init)
    }

    @Test("harness completion zsh offers verbs, a verb's options and domain names", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed: apt-get install zsh to run it"))
    func zshCompletion() throws {
        try succeed("write", "com.example.a", "k", "v")
        #expect(try zshCandidates(["harness", "defaults", ""]).starts(with: Self.verbs))
        #expect(try zshCandidates(["harness", "defaults", "export", "app", "-", "--f"]) == ["--format", "--json", "--help"])
        #expect(try zshCandidates(["harness", "defaults", "--directory", sandbox.path, "read", ""]) == ["-g", "com.example.a"])
    }

    // MARK: Messages and refusals

    @Test("Per-host domains and -app are refused with what to do instead", arguments: [
        ["-currentHost", "read", "app"], ["-host", "box", "read", "app"], ["read", "-app", "Safari"],
    ])
    func macOnlyOptions(_ arguments: [String]) throws {
        let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments)
        #expect(run.status == 2)
        #expect(run.errorLines.count == 1)
        #expect(run.errors.contains("Linux"), "\(run.errors)")
        #expect(sandbox.files().isEmpty)
    }

    @Test("write .GlobalPreferences is refused: -g is the way to the global domain")
    func globalFileNameIsRefused() throws {
        let run = try fail("write", ".GlobalPreferences", "k", "v")
        #expect(run.errors.contains("-g"))
        #expect(sandbox.files().isEmpty)
    }

    @Test("rename onto an existing key is refused without -f, and nothing changes")
    func renameRefusesExistingKey() throws {
        try succeed("write", "app", "old", "1")
        try succeed("write", "app", "new", "2")
        let before = sandbox.files()
        #expect(try fail("rename", "app", "old", "new").errors.contains("add -f to replace it"))
        #expect(sandbox.files() == before)
    }

    @Test("import of a FIFO without a writer is refused at once instead of blocking")
    func importRefusesFIFO() throws {
        let place = TemporaryDirectory()
        let fifo = place.appending("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // `timeout` turns a regression (a blocked open) into a failure rather than a hung test; SIGKILL, since the
        // child inherits the test process's blocked signals.
        let child = try ChildProcess("/usr/bin/timeout", ["-s", "KILL", "20", ChildProcess.buildDirectory + "/harness", "defaults", "--directory", sandbox.path, "import", "app", fifo],
                                     environment: sandbox.environment)
        child.closeInput()
        let errors = child.readErrors()
        #expect(child.wait() == 1)
        #expect(errors == "harness defaults: cannot read \(fifo): it is a FIFO, not a regular file; give a file, or - to read standard input (cat \(fifo) | ...)\n")
        #expect(sandbox.files().isEmpty)
    }

    @Test("A domain given as a property-list file's absolute path is read and written")
    func fileAsDomain() throws {
        let place = TemporaryDirectory()
        let file = place.appending("other.plist")
        try succeed("write", file, "k", "-int", "1")
        #expect(try succeed("read", String(file.dropLast(6)), "k").output == "1\n")
        #expect(try FileDomainStorage(directory: place.path, name: "other").snapshot().contents == ["k": .integer(1)])
        #expect(sandbox.files().isEmpty)
    }

    @Test("-array-add on an integer says 'an integer'")
    func articleOfTypeName() throws {
        try succeed("write", "app", "i", "-int", "3")
        #expect(try fail("write", "app", "i", "-array-add", "5").errorLines == ["harness defaults: cannot add to (app, i): it holds an integer, not an array"])
    }

    @Test("A non-dictionary collection supplied by the global domain is blamed on it, with the command that removes it")
    func globalValueIsNamed() throws {
        try succeed("write", "-g", "AppSettings", "not a dictionary")
        let run = try sandbox.run(["settings-bridge", "--directory", sandbox.path])
        #expect(run.status == 1)
        #expect(run.errorLines.last == "harness settings-bridge: The value stored under the storage key 'AppSettings' is not a string-keyed dictionary: the global domain (\(sandbox.path)/.GlobalPreferences.plist) supplies it, not this app's domain; remove it with `harness defaults delete -g AppSettings`")
    }
}
