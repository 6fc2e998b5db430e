import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The inspector given hostile paths and input: what it writes, what it refuses, and the verbs of
/// `defaults(1)` it had been missing.
@Suite("harness defaults with hostile paths and input, and the rest of the defaults verbs")
struct HarnessDefaultsSafetyTests {
    let sandbox = HarnessSandbox()

    /// Runs `harness defaults --directory SANDBOX ARGUMENTS` and requires it to succeed silently on standard error.
    @discardableResult
    func succeed(_ arguments: String..., input: String = "") throws -> HarnessRun {
        try sandbox.defaultsSucceeding(arguments, input: input)
    }

    /// Runs `harness defaults --directory SANDBOX ARGUMENTS` through `sh -c SCRIPT`, where the script
    /// runs the harness as `"$0" "$@"` (to redirect its streams or limit its memory).
    func shell(_ script: String, _ arguments: String...) throws -> HarnessRun {
        let harness = ChildProcess.buildDirectory + "/harness"
        let child = try ChildProcess("/bin/sh", ["-c", script, harness, "defaults", "--directory", sandbox.path] + arguments,
                                     environment: sandbox.environment)
        child.closeInput()
        let output = String(decoding: child.readAllOutputBytes(), as: UTF8.self)
        let errors = child.readErrors()
        return HarnessRun(status: child.wait(), output: output, errors: errors)
    }

    func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode : nil
    }

    // MARK: export

    @Test("export creates a new file with mode 0600, whatever the umask")
    func exportCreatesPrivateFile() throws {
        try succeed("write", "app", "secret", "value")
        let path = sandbox.temporary.appending("new.xml")
        let run = try shell("umask 022; exec \"$0\" \"$@\"", "export", "app", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(permissions(path) == 0o600)
        #expect(try PropertyListValue(propertyListData: Data(fileBytes(path) ?? [])) == .dictionary(["secret": .string("value")]))
    }

    @Test("export over an existing regular file keeps that file's mode")
    func exportKeepsExistingMode() throws {
        try succeed("write", "app", "key", "value")
        let path = sandbox.temporary.appending("shared.xml")
        writeFile(path, Array("old contents".utf8))
        chmod(path, 0o640)
        try succeed("export", "app", path)
        #expect(permissions(path) == 0o640)
        #expect(fileBytes(path) != Array("old contents".utf8))
    }

    /// Something that is not a regular file, made at a path by a test.
    struct NotAFile: CustomTestStringConvertible, Sendable {
        let what: String
        let make: @Sendable (_ path: String, _ sandbox: String) -> Void
        var testDescription: String { what }
    }

    static let notFiles: [NotAFile] = [
        NotAFile(what: "a symbolic link to a file") { path, sandbox in
            writeFile(sandbox + "/target.txt", Array("the link's target".utf8))
            symlink(sandbox + "/target.txt", path)
        },
        NotAFile(what: "a dangling symbolic link") { path, sandbox in symlink(sandbox + "/nowhere", path) },
        NotAFile(what: "a FIFO") { path, _ in mkfifo(path, 0o600) },
        NotAFile(what: "a directory") { path, _ in mkdir(path, 0o700) },
        NotAFile(what: "a symbolic link to a device") { path, _ in symlink("/dev/null", path) },
    ]

    @Test("export refuses to replace anything that is not a regular file: one line, non-zero exit, nothing changed", arguments: notFiles)
    func exportRefusesNonFiles(_ notFile: NotAFile) throws {
        try succeed("write", "app", "key", "value")
        // Not in the sandbox directory: reading a FIFO there to compare it would block.
        let place = TemporaryDirectory()
        let path = place.appending("out.xml")
        notFile.make(path, place.path)
        let domainsBefore = sandbox.files()
        let placeBefore = place.contents().sorted()
        let modeBefore = mode(path)
        let linkBefore = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
        let targetBefore = fileBytes(place.appending("target.txt"))

        let run = try sandbox.defaults("export", "app", path)
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.errorLines.first?.hasPrefix("harness defaults: cannot export to \(path): it is ") == true, "\(run.errors)")
        #expect(sandbox.files() == domainsBefore)
        #expect(place.contents().sorted() == placeBefore)
        #expect(mode(path) == modeBefore)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == linkBefore)
        #expect(fileBytes(place.appending("target.txt")) == targetBefore)
    }

    // A device node of its own, never /dev/null itself: a regressed export run as root would replace
    // the real one. Making a device node needs root.
    @Test("export refuses to replace a device node", .enabled(if: geteuid() == 0, "needs root, to make a device node of its own"))
    func exportRefusesDevice() throws {
        try succeed("write", "app", "key", "value")
        let place = TemporaryDirectory()
        let path = place.appending("null")
        #expect(mknod(path, S_IFCHR | 0o600, dev_t(0x103)) == 0)  // 1, 3: what /dev/null is
        let run = try sandbox.defaults("export", "app", path)
        #expect(run.status == 1)
        #expect(run.errorLines == ["harness defaults: cannot export to \(path): it is a device, not a regular file; export replaces only a regular file"])
        #expect(mode(path).map { $0 & S_IFMT } == S_IFCHR)
    }

    @Test("export to a full standard output fails with a message")
    func exportToFullOutputFails() throws {
        try succeed("write", "app", "key", "value")
        let run = try shell("exec \"$0\" \"$@\" > /dev/full", "export", "app", "-")
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.errorLines.first?.hasPrefix("harness defaults: cannot write to standard output") == true)
    }

    // MARK: import

    @Test("import refuses input larger than the library's domain-file limit, naming the limit")
    func importRefusesHugeFile() throws {
        let path = sandbox.temporary.appending("huge.plist")
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        ftruncate(fd, off_t(FileDomainStorage.maximumFileSize + 1))
        close(fd)
        let before = sandbox.files()
        let run = try sandbox.defaults("import", "app", path)
        #expect(run.status == 1)
        #expect(run.errorLines == ["harness defaults: cannot import \(path): it is larger than \(FileDomainStorage.maximumFileSize) bytes, the largest domain file the library reads"])
        #expect(sandbox.files() == before)
    }

    @Test("import of endless standard input (a pipe from /dev/zero) stops at the limit", arguments: [
        "ulimit -v 2000000; cat /dev/zero | \"$0\" \"$@\" -",
    ])
    func importStopsAtLimit(_ script: String) throws {
        // The memory limit turns a regression into a failed allocation rather than an exhausted machine.
        let run = try shell(script, "import", "app")
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(run.errors.contains("larger than \(FileDomainStorage.maximumFileSize) bytes"))
        #expect(sandbox.files().isEmpty)
    }

    @Test("import takes OpenStep text as well as XML and binary")
    func importTakesOpenStepText() throws {
        let path = sandbox.temporary.appending("openstep.txt")
        writeFile(path, Array("  {appearance = dark; sizes = (small, \"extra large\"); nested = {on = YES;};}\n".utf8))
        try succeed("import", "app", path)
        #expect(try sandbox.domain("app") == [
            "appearance": .string("dark"),
            "sizes": .array([.string("small"), .string("extra large")]),
            "nested": .dictionary(["on": .string("YES")]),
        ])
        try succeed("import", "other", "-", input: "{fromStdin = yes;}")
        #expect(try sandbox.domain("other") == ["fromStdin": .string("yes")])
    }

    // MARK: The missing verbs

    @Test("rename moves a value to a new key in one write, and with -f replaces what the new key held")
    func renameMovesValue() throws {
        try succeed("write", "app", "old", "-int", "5")
        try succeed("write", "app", "taken", "before")
        try succeed("write", "app", "other", "stays")
        try succeed("rename", "app", "old", "new")
        #expect(try sandbox.domain("app") == ["new": .integer(5), "taken": .string("before"), "other": .string("stays")])
        try succeed("rename", "-f", "app", "new", "taken")
        #expect(try sandbox.domain("app") == ["taken": .integer(5), "other": .string("stays")])
    }

    @Test("rename of a missing key or domain is one line on standard error and changes nothing", arguments: [
        ["rename", "app", "missing", "new"],
        ["rename", "com.example.missing", "a", "b"],
        ["rename", "app", "only-one"],
    ])
    func renameMissingChangesNothing(_ arguments: [String]) throws {
        try succeed("write", "app", "key", "value")
        let before = sandbox.files()
        let run = try sandbox.run(["defaults", "--directory", sandbox.path] + arguments)
        #expect(run.status != 0)
        #expect(run.errorLines.count == 1, "standard error: \(run.errors)")
        #expect(sandbox.files() == before)
    }

    @Test("find searches every domain's keys and values, case-insensitively, and prints the matches")
    func findSearchesKeysAndValues() throws {
        try succeed("write", "com.example.a", "Appearance", "dark")
        try succeed("write", "com.example.a", "unrelated", "-int", "3")
        try succeed("write", "com.example.b", "theme", "-array", "light", "DARKER")
        try succeed("write", "com.example.c", "nothing", "here")
        try succeed("write", "-g", "AppleInterfaceStyle", "Dark")
        let run = try succeed("find", "dark")
        #expect(run.output == """
            Found 1 keys in domain 'NSGlobalDomain': {
                AppleInterfaceStyle = Dark;
            }
            Found 1 keys in domain 'com.example.a': {
                Appearance = dark;
            }
            Found 1 keys in domain 'com.example.b': {
                theme = (
                    light,
                    DARKER
                );
            }

            """)
        #expect(try succeed("find", "APPEARANCE").output.hasPrefix("Found 1 keys in domain 'com.example.a'"))
        // Nothing found is exit status 1, as grep, with the reason on standard error and nothing on standard output.
        let none = try sandbox.defaults("find", "absent")
        #expect(none.status == 1)
        #expect(none.output.isEmpty)
        #expect(none.errors == "harness defaults: no domain, key, nor value containing 'absent'\n")
    }

    @Test("delete DOMAIN removes the domain file, so domains no longer lists it")
    func deleteRemovesDomainFile() throws {
        try succeed("write", "app", "key", "value")
        try succeed("write", "kept", "key", "value")
        try succeed("delete", "app")
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.appending("app.plist")))
        #expect(try succeed("domains").output == "kept\n")
        let read = try sandbox.defaults("read", "app")
        #expect(read.status == 1)
        #expect(read.errorLines == ["harness defaults: Domain app does not exist in \(sandbox.path); `harness defaults domains` lists those that do"])
    }

    @Test("help as a verb prints the usage, as --help does")
    func helpVerb() throws {
        let verb = try succeed("help")
        #expect(verb.output.hasPrefix("usage: harness defaults "))
        #expect(verb.output == (try succeed("--help")).output)
    }
}
