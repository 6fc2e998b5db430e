import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `prefsctl`, the installable administrator's tool (SPEC §13): its own executable on the code of `harness defaults`.
@Suite("prefsctl, the administrator's tool")
struct PrefsctlTests {
    let sandbox = HarnessSandbox()

    /// The repository's root, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Runs `prefsctl --directory SANDBOX ARGUMENTS` and requires success with nothing on standard error.
    @discardableResult
    func succeed(_ arguments: String..., input: String = "") throws -> HarnessRun {
        let run = try sandbox.prefsctl(["--directory", sandbox.path] + arguments, input: input)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }

    @Test("prefsctl --version prints its name and the version CHANGELOG.md names")
    func version() throws {
        let changelog = try String(contentsOfFile: Self.repository + "/CHANGELOG.md", encoding: .utf8)
        let number = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") }?.split(separator: " ")[1])
        let run = try sandbox.prefsctl(["--version"])
        #expect(run.status == 0)
        #expect(run.output == "prefsctl \(number) (RVS_PersistentPrefs \(number))\n")
    }

    @Test("prefsctl and harness defaults run the same verbs on the same files, each naming itself")
    func sameCodeAsTheAlias() throws {
        try succeed("write", "com.example.app", "com.example.app.preferences", "port", "-int", "8080")
        let viaAlias = try sandbox.defaultsSucceeding(["read", "com.example.app", "com.example.app.preferences", "port"])
        #expect(viaAlias.output == "8080\n")
        #expect(try succeed("read", "com.example.app", "com.example.app.preferences", "port").output == "8080\n")
        #expect(try succeed("--help").output.hasPrefix("usage: prefsctl "))
        #expect(try sandbox.defaultsSucceeding(["--help"]).output.hasPrefix("usage: harness defaults "))
        let missing = try sandbox.prefsctl(["--directory", sandbox.path, "read", "com.example.absent"])
        #expect(missing.status == 1)
        #expect(missing.errors.hasPrefix("prefsctl: Domain com.example.absent does not exist"))
        #expect(missing.errors.contains("`prefsctl domains` lists those that do"))
    }

    @Test("The prefsctl executable links no test support, while the harness does")
    func linksNoTestSupport() throws {
        // A Swift module's symbols carry its mangled name: "11TestSupport" is in every symbol of TestSupport
        // (and "15EtcdTestSupport" of EtcdTestSupport), so the bytes of the executable say which were linked.
        let directory = ChildProcess.buildDirectory
        let prefsctl = try #require(fileBytes(directory + "/prefsctl"))
        let harness = try #require(fileBytes(directory + "/harness"))
        for module in ["11TestSupport", "15EtcdTestSupport"] {
            let marker = Array(module.utf8)
            #expect(Self.contains(harness, marker), "the check cannot see \(module) in the harness")
            #expect(!Self.contains(prefsctl, marker), "prefsctl links \(module)")
        }
    }

    private static func contains(_ bytes: [UInt8], _ marker: [UInt8]) -> Bool {
        Data(bytes).range(of: Data(marker)) != nil
    }

    // MARK: The manual page and the completions the Debian package installs

    @Test("The committed man/prefsctl.1 is what prefsctl help --man generates: NAME to EXAMPLES, a date, DOMAIN KEY ENTRY examples")
    func manualPage() throws {
        let committed = try String(contentsOfFile: Self.repository + "/man/prefsctl.1", encoding: .utf8)
        let generated = try succeed("help", "--man").output
        #expect(generated == committed, "regenerate it: swift run prefsctl help --man > man/prefsctl.1")
        let sections = generated.split(separator: "\n").filter { $0.hasPrefix(".SH ") }.map { String($0.dropFirst(4)) }
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES"] {
            #expect(sections.contains(section), "no \(section) section")
        }
        let title = try #require(generated.split(separator: "\n").first { $0.hasPrefix(".TH ") })
        #expect(title.hasPrefix(".TH PREFSCTL 1 \"20"), "no date: \(title)")
        #expect(generated.contains("prefsctl write com.example.app com.example.app.preferences launchCount \\-int 3"))
        // The help says the same: its sections are those of the manual.
        let help = try succeed("--help").output
        for section in ["Environment:", "Files:", "Exit status:", "Examples:"] { #expect(help.contains("\n" + section + "\n")) }
    }

    /// What bash offers for `words` (the last being completed) with the script `prefsctl completion bash`
    /// prints, the built prefsctl first on the PATH (the script calls it).
    func bashCompletions(_ words: [String]) throws -> [String] {
        let scriptPath = sandbox.temporary.appending("prefsctl.bash")
        writeFile(scriptPath, Array(try succeed("completion", "bash").output.utf8))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let child = try ChildProcess("/bin/bash", ["-c", """
            PATH="\(ChildProcess.buildDirectory):$PATH"; source '\(scriptPath)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _prefsctl; printf '%s\\n' "${COMPREPLY[@]}"
            """], environment: sandbox.environment)
        child.closeInput()
        let output = child.readAllOutput()
        #expect(child.wait() == 0, "\(child.readErrors())")
        return output.split(separator: "\n").map(String.init).sorted()
    }

    @Test("A domain whose name starts with a dot is listed by domains and searched by find and read, as any other; the global domain is not listed")
    func domainStartingWithADot() throws {
        try succeed("write", ".hidden", "k", "hidden-value")
        try succeed("write", "-g", "gk", "global-value")
        try succeed("write", "visible", "k", "v")
        #expect(try succeed("domains").output == ".hidden, visible\n")
        #expect(try succeed("find", "hidden-value").output.contains("Found 1 keys in domain '.hidden'"))
        #expect(try succeed("read").output.contains("    .hidden = {\n        k = hidden-value;"))
    }

    @Test("Whatever the umask, a write makes directories 0700 and files 0600 (the domain file and its lock file), and later writes succeed", arguments: ["0277", "0777", "0022"])
    func modesWhateverTheUmask(mask: String) throws {
        let directory = sandbox.directory.appending("made/here")
        let prefsctl = ChildProcess.buildDirectory + "/prefsctl"
        for value in ["1", "2"] {
            let run = try sandbox.run(executable: "/bin/sh", ["-c", "umask \(mask); exec \"$0\" \"$@\"", prefsctl, "--directory", directory,
                                                              "write", "app", "k", "-int", value])
            #expect(run.status == 0, "\(run.errors)")
        }
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o7777
        }
        #expect(mode(sandbox.directory.appending("made")) == 0o700)
        #expect(mode(directory) == 0o700)
        #expect(mode(directory + "/app.plist") == 0o600)
        #expect(mode(directory + "/app.plist.lock") == 0o600)
        #expect(try FileDomainStorage(directory: directory, name: "app").snapshot().contents["k"] == .integer(2))
    }

    @Test("No path prefsctl prints has '//', whatever doubled slashes the environment's directories have, the root included")
    func printedPathsHaveSingleSlashes() throws {
        let root = try sandbox.prefsctl(["--dry-run", "write", "zz", "k", "v"], environment: ["RVS_PREFS_DIRECTORY": "/"])
        #expect(root.status == 0, "\(root.errors)")
        #expect(root.output.contains("/zz.plist") && !root.output.contains("//"), "\(root.output)")
        let doubled = try sandbox.prefsctl(["read", "nosuch"], environment: ["RVS_PREFS_DIRECTORY": sandbox.path + "//sub",
                                                                            "RVS_PREFS_MANAGED_DIRECTORY": sandbox.path + "//managed"])
        #expect(doubled.status != 0)
        #expect(!doubled.errors.isEmpty && !doubled.errors.contains("//"), "\(doubled.errors)")
    }

    @Test("Without --directory, prefsctl's bash completion offers the domains, storage keys and entries of the preferences directory the environment gives")
    func bashCompletionWithoutDirectoryOption() throws {
        // No --directory: RVS_PREFS_DIRECTORY, the sandbox's fallback directory.
        let written = try sandbox.prefsctl(["write", "com.example.env", "settings", "-dict", "port", "-int", "8080"])
        #expect(written.status == 0, "\(written.errors)")
        #expect(try bashCompletions(["prefsctl", "read", "com.example.e"]) == ["com.example.env"])
        #expect(try bashCompletions(["prefsctl", "read", "com.example.env", ""]) == ["settings"])
        #expect(try bashCompletions(["prefsctl", "read", "com.example.env", "settings", ""]) == ["port"])
    }

    @Test("prefsctl's bash completion completes verbs, options, domains, storage keys, entries and array indices")
    func bashCompletion() throws {
        try succeed("write", "com.example.app", "com.example.app.preferences", "-dict", "port", "-int", "8080", "hosts", "(a, b)")
        try succeed("write", "com.example.other", "k", "v")
        let here = ["prefsctl", "--directory", sandbox.path]
        #expect(try bashCompletions(["prefsctl", "re"]) == ["read", "read-type", "rename"])
        #expect(try bashCompletions(["prefsctl", "read", "--j"]) == ["--json"])
        #expect(try bashCompletions(here + ["read", "com.example.a"]) == ["com.example.app"])
        #expect(try bashCompletions(here + ["write", "com.example.app", ""]) == ["com.example.app.preferences"])
        #expect(try bashCompletions(here + ["read", "com.example.app", "com.example.app.preferences", ""]) == ["hosts", "port"])
        #expect(try bashCompletions(here + ["read", "com.example.app", "com.example.app.preferences", "hosts", ""]) == ["0", "1"])
        // --directory given after the verb is honoured too, and --format's values are offered.
        #expect(try bashCompletions(["prefsctl", "keys", "--directory", sandbox.path, "com.example.o"]) == ["com.example.other"])
        #expect(try bashCompletions(["prefsctl", "export", "com.example.app", "-", "--format", "j"]) == ["json"])
    }

    @Test("The zsh and fish scripts complete the command prefsctl through prefsctl __complete, which lists what bash gets")
    func zshAndFish() throws {
        #expect(try succeed("completion", "zsh").output.hasPrefix("#compdef prefsctl\n"))
        let fish = try succeed("completion", "fish").output
        #expect(fish.contains("complete -c prefsctl -f -a '(__prefsctl_complete)'"))
        try succeed("write", "com.example.app", "com.example.app.preferences", "port", "-int", "1")
        let candidates = try sandbox.prefsctl(["__complete", "--directory", sandbox.path, "read", "com.example.app", ""])
        #expect(candidates.output == "com.example.app.preferences\n")
        #expect(try sandbox.prefsctl(["__complete", "import", "com.example.app", ""]).output == ":files\n")
        #expect(try sandbox.prefsctl(["__complete", "--directory", ""]).output == ":directories\n")
    }

    /// What the zsh script offers for `words`, the last being completed; `compadd`, which runs only inside a
    /// completion widget, is replaced by a function that prints its candidates.
    func zshCandidates(_ words: [String]) throws -> [String] {
        let scriptPath = sandbox.temporary.appending("_prefsctl")
        writeFile(scriptPath, Array(try succeed("completion", "zsh").output.utf8))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let child = try ChildProcess("/usr/bin/zsh", ["-f", "-c", """
            PATH="\(ChildProcess.buildDirectory):$PATH"; source '\(scriptPath)' >/dev/null 2>&1
            compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -l -- "$@" }
            _files() { print FILES }
            words=(\(quoted)); CURRENT=\(words.count); _prefsctl
            """], environment: sandbox.environment)
        child.closeInput()
        let output = child.readAllOutput()
        #expect(child.wait() == 0, "\(child.readErrors())")
        return output.split(separator: "\n").map(String.init)
    }

    @Test("prefsctl's zsh completion offers verbs, storage keys and entries, and files where a file belongs",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed: apt-get install zsh to run it"))
    func zshCompletion() throws {
        try succeed("write", "com.example.app", "com.example.app.preferences", "port", "-int", "8080")
        let here = ["prefsctl", "--directory", sandbox.path]
        #expect(try zshCandidates(["prefsctl", "re"]) == ["read", "read-type", "rename"])
        #expect(try zshCandidates(here + ["read", "com.example.app", ""]) == ["com.example.app.preferences"])
        #expect(try zshCandidates(here + ["read", "com.example.app", "com.example.app.preferences", ""]) == ["port"])
        #expect(try zshCandidates(["prefsctl", "import", "com.example.app", ""]) == ["FILES"])
    }

}
