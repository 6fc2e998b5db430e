import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// `prefsctl --system`, `--managed`, `--dry-run` and `verify` (SPEC §13, safe for administrators).
@Suite("prefsctl writes the administrator's layers safely")
struct PrefsctlAdministrationTests {
    let sandbox = HarnessSandbox()
    static let domain = "com.example.app"
    static let key = "com.example.app.preferences"

    /// Where the sandbox's environment puts the system layer prefsctl writes, and the managed directory.
    var systemDirectory: String { sandbox.fallback.appending("xdg") + "/RVS_PersistentPrefs" }
    var managedDirectory: String { sandbox.fallback.appending("managed") }

    /// Runs prefsctl with umask 077, so that the modes it sets are its own doing, not the umask's.
    func prefsctl(_ arguments: [String]) throws -> HarnessRun {
        try sandbox.run(executable: "/bin/sh", ["-c", "umask 077; exec \"$0\" \"$@\"", ChildProcess.buildDirectory + "/prefsctl"] + arguments)
    }

    @discardableResult
    func succeed(_ arguments: String...) throws -> HarnessRun {
        try succeed(arguments)
    }

    @discardableResult
    func succeed(_ arguments: [String]) throws -> HarnessRun {
        let run = try prefsctl(arguments)
        #expect(run.status == 0, "prefsctl \(arguments.joined(separator: " ")): \(run.errors)")
        #expect(run.errors.isEmpty)
        return run
    }

    func mode(_ path: String) -> (mode: mode_t, owner: uid_t)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_uid)
    }

    /// Every file and directory under `path`, with the bytes of the files.
    func tree(_ path: String) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            result[name] = fileBytes(path + "/" + name) ?? []
        }
        return result
    }

    @Test("--system and --managed write where the library reads those layers: 0644 files in 0755 directories, no lock file left")
    func layersWrittenWhereRead() throws {
        try succeed("--system", "write", Self.domain, Self.key, "appearance", "dark")
        // A forced entry is written with --managed, not refused as forced.
        try succeed("--managed", "write", Self.domain, Self.key, "telemetry", "-bool", "NO")
        try succeed("--managed", "write", Self.domain, Self.key, "telemetry", "-bool", "NO")
        for directory in [systemDirectory, managedDirectory] {
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [Self.domain + ".plist"], "\(directory)")
            #expect(mode(directory)?.mode == 0o755)
            #expect(mode(directory)?.owner == geteuid())
            #expect(mode(directory + "/" + Self.domain + ".plist")?.mode == 0o644)
            #expect(mode(directory + "/" + Self.domain + ".plist")?.owner == geteuid())
        }
        #expect(mode(sandbox.fallback.appending("xdg"))?.mode == 0o755)
        // The library reads them as the system and managed layers of the domain.
        let sources = try succeed("--directory", sandbox.path, "read", "--sources", Self.domain).output
        #expect(sources.contains("appearance = dark;  (system: \(systemDirectory)/\(Self.domain).plist)"), "\(sources)")
        #expect(sources.contains("telemetry = 0;  (managed: \(managedDirectory)/\(Self.domain).plist)"), "\(sources)")
        #expect(try succeed("--managed", "domains").output == "\(Self.domain) (managed)\n")
        try succeed("--managed", "delete", Self.domain)
        #expect(try FileManager.default.contentsOfDirectory(atPath: managedDirectory).isEmpty)
    }

    @Test("A rewrite of an administrator's file keeps its mode and owner")
    func rewriteKeepsModeAndOwner() throws {
        try succeed("--system", "write", Self.domain, Self.key, "appearance", "dark")
        let file = systemDirectory + "/" + Self.domain + ".plist"
        #expect(chmod(file, 0o640) == 0)
        let owner: uid_t = geteuid() == 0 ? 1 : geteuid()
        if geteuid() == 0 { #expect(chown(file, owner, 1) == 0) }
        try succeed("--system", "write", Self.domain, Self.key, "appearance", "light")
        #expect(mode(file)?.mode == 0o640)
        #expect(mode(file)?.owner == owner)
        #expect(try FileDomainStorage(directory: systemDirectory, name: Self.domain).snapshot().contents[Self.key] == .dictionary(["appearance": .string("light")]))
    }

    @Test("--dry-run prints what each writing verb would change and changes nothing, not even a directory or lock file",
          arguments: [["write", domain, key, "appearance", "light"], ["write", domain, key, "-dict-add", "size", "-int", "3"],
                      ["rename", domain, key, "com.example.app.settings"], ["delete", domain, key, "appearance"],
                      ["delete", domain], ["import", domain, "-"]])
    func dryRun(_ verb: [String]) async throws {
        try await onOwnThread {
            let input = "{\"\(Self.key)\": {\"appearance\": \"blue\"}}"
            for layer in [["--directory", sandbox.path], ["--managed"]] {
                try succeed(layer + ["write", Self.domain, Self.key, "appearance", "dark"])
                let before = (tree(sandbox.path), tree(sandbox.fallback.path))
                let run = try sandbox.run(executable: "prefsctl", layer + ["--dry-run"] + verb, input: input)
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.output.hasPrefix("dry run: would "), "\(run.output)")
                #expect(tree(sandbox.path) == before.0)
                #expect(tree(sandbox.fallback.path) == before.1)
            }
            // The user's domain, with no entry forced any more (a forced entry's dry run is refused as the write would be).
            try succeed("--managed", "delete", Self.domain)
            let write = try succeed("--directory", sandbox.path, "--dry-run", "write", Self.domain, Self.key, "appearance", "light")
            #expect(write.output == "dry run: would write \(sandbox.path)/\(Self.domain).plist:\n- \(Self.key) = {appearance = dark;};\n+ \(Self.key) = {appearance = light;};\n")
            // Where nothing exists yet, nothing is created.
            let fresh = sandbox.directory.appending("fresh")
            try succeed("--directory", fresh, "--dry-run", "write", Self.domain, Self.key, "appearance", "light")
            #expect(!FileManager.default.fileExists(atPath: fresh))
            // The checks of the real write are made: a missing key is still an error.
            #expect(try prefsctl(["--directory", sandbox.path, "--dry-run", "delete", Self.domain, "absent"]).status == 1)
        }
    }

    /// Writes `text` to `name` in the sandbox with `mode`, and returns its path.
    /// Makes `path` and the directories above it that are missing; whether it exists afterwards.
    func mkdirAll(_ path: String) -> Bool {
        (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil
    }

    func candidate(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o644) -> String {
        let path = sandbox.directory.appending(name)
        writeFile(path, bytes)
        chmod(path, mode)
        return path
    }

    @Test("delete of an entry the user's file lacks but another layer supplies says where the value read comes from")
    func deleteOfAnEntryFromAnotherLayer() throws {
        let here = ["--directory", sandbox.path]
        try succeed(here + ["write", Self.domain, Self.key, "-dict", "launchCount", "-int", "3"])
        try succeed("--managed", "write", Self.domain, Self.key, "appearance", "dark")
        let run = try prefsctl(here + ["delete", Self.domain, Self.key, "appearance"])
        #expect(run.status == 1)
        #expect(run.errors.contains("not found in the user's file; the value a program reads comes from another layer (`prefsctl read --sources \(Self.domain) \(Self.key)` shows which); nothing was deleted"), "\(run.errors)")
        let missing = try prefsctl(here + ["delete", Self.domain, Self.key, "nowhere"])
        #expect(missing.status == 1 && missing.errors.contains("not found; nothing was deleted"), "\(missing.errors)")
    }

    @Test("A system file written through --directory or its absolute path is written as --system writes it: the same lock (two writers lose nothing), no lock file left, mode 0644")
    func layerFileReachedAnotherWay() throws {
        try succeed("--system", "write", "race", "app", "init", "-int", "0")
        let file = systemDirectory + "/race.plist"
        // Two processes, one through --system and one through --directory, 30 writes each of their own entries.
        let workers = try [["--system"], ["--directory", systemDirectory]].enumerated().map { index, option in
            let writes = (1...30).map { "prefsctl \(option.joined(separator: " ")) write race app w\(index)-\($0) -int \($0)" }
            return try ChildProcess("/bin/sh", ["-c", "export PATH=\"\(ChildProcess.buildDirectory):$PATH\"; umask 077; set -e; " + writes.joined(separator: "; ")],
                                    environment: sandbox.environment)
        }
        for worker in workers {
            worker.closeInput()
            #expect(worker.wait() == 0, "\(worker.readErrors())")
        }
        let entries = try FileDomainStorage(directory: systemDirectory, name: "race").snapshot().contents["app"]?.dictionaryValue ?? [:]
        #expect(entries.count == 61, "lost updates: \(entries.count) of 61 entries")
        try succeed("write", file, "app", "byPath", "-int", "1")
        #expect(!FileManager.default.fileExists(atPath: file + ".lock"), "a lock file was left in the system directory")
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o644)
    }

    @Test("verify FILE --as system|managed accepts what the library honours and exits 1 with the reason it would ignore a file")
    func verify() throws {
        let good = try PropertyListValue.dictionary([Self.key: .dictionary(["telemetry": .bool(false)])]).binaryPropertyListData()
        let goodPath = candidate(Self.domain + ".plist", Array(good))
        for layer in ["system", "managed"] {
            let run = try succeed("verify", goodPath, "--as", layer)
            #expect(run.output.contains("a good \(layer) file for the domain \(Self.domain)"))
        }
        func rejected(_ path: String, as layer: String, _ reason: String) throws {
            let run = try prefsctl(["verify", path, "--as", layer])
            #expect(run.status == 1, "\(path) as \(layer)")
            #expect(run.errorLines.count == 1)
            #expect(run.errors.contains("would be ignored as a \(layer) file: "), "\(run.errors)")
            #expect(run.errors.contains(reason), "\(run.errors)")
        }
        try rejected(candidate("com.example.garbage.plist", Array("garbage".utf8)), as: "system", "not a property list")
        try rejected(candidate("com.example.array.plist", Array("(a, b)".utf8)), as: "managed", "com.example.array.plist")
        try rejected(candidate("com.example.app.txt", Array(good)), as: "system", "DOMAIN.plist")
        try rejected(candidate("com.example.shared.plist", Array(good), mode: 0o666), as: "managed", "writable by its group or by others")
        try rejected(candidate("com.example.private.plist", Array(good), mode: 0o600), as: "system", "cannot read it")
        if geteuid() == 0 {
            let others = candidate("com.example.others.plist", Array(good))
            #expect(chown(others, 1, 1) == 0)
            try rejected(others, as: "managed", "belongs to user 1, not root")
            try succeed("verify", others, "--as", "system")
        }
        // A file already in the layer's directory is judged where it is, through its resolved path, as the library
        // judges it: a system file in a directory other users cannot search, a managed file linked into a directory
        // of another user's.
        #expect(mkdirAll(systemDirectory) && chmod(systemDirectory, 0o700) == 0)
        let hidden = systemDirectory + "/com.example.hidden.plist"
        writeFile(hidden, Array(good))
        chmod(hidden, 0o644)
        try rejected(hidden, as: "system", "\(systemDirectory), a directory on the path to \(hidden), cannot be searched by users other than its owner")
        if geteuid() == 0 {
            let foreign = sandbox.directory.appending("foreign")
            #expect(mkdir(foreign, 0o755) == 0 && chown(foreign, 1, 1) == 0)
            writeFile(foreign + "/com.example.linked.plist", Array(good))
            chmod(foreign + "/com.example.linked.plist", 0o644)
            #expect(mkdirAll(managedDirectory))
            #expect(symlink(foreign + "/com.example.linked.plist", managedDirectory + "/com.example.linked.plist") == 0)
            try rejected(managedDirectory + "/com.example.linked.plist", as: "managed", "\(foreign), a directory on the path to \(foreign)/com.example.linked.plist, belongs to user 1, not root")
        }
        // The directory it would go in is judged too, every directory on its path: one others may write is refused.
        let loose = sandbox.directory.appending("loose")
        #expect(mkdir(loose, 0o700) == 0 && chmod(loose, 0o777) == 0)
        let looseRun = try sandbox.run(executable: "prefsctl", ["verify", goodPath, "--as", "managed"],
                                       environment: ["RVS_PREFS_MANAGED_DIRECTORY": loose + "/managed"])
        #expect(looseRun.status == 1)
        #expect(looseRun.errors.contains("\(loose), a directory on the path to the managed directory"), "\(looseRun.errors)")
        #expect(try prefsctl(["verify", goodPath]).status == 2)
        #expect(try prefsctl(["verify", goodPath, "--as", "user"]).status == 2)
        // Nothing is created beside the candidate.
        #expect(!FileManager.default.fileExists(atPath: goodPath + ".lock"))
    }

    @Test("read --sources DOMAIN [KEY [ENTRY]] shows each entry's layer and file and the values it shadows, also as JSON")
    func sourcesWithShadowedValues() throws {
        let here = ["--directory", sandbox.path]
        try succeed(here + ["write", Self.domain, Self.key, "-dict", "appearance", "blue", "launchCount", "-int", "3"])
        try succeed("--system", "write", Self.domain, Self.key, "-dict", "appearance", "light", "volume", "-int", "5")
        try succeed("--managed", "write", Self.domain, Self.key, "appearance", "dark")
        let (user, system, managed) = (sandbox.path + "/\(Self.domain).plist", systemDirectory + "/\(Self.domain).plist",
                                       managedDirectory + "/\(Self.domain).plist")
        let all = try succeed(here + ["read", "--sources", Self.domain]).output
        #expect(all == """
            \(Self.key):
                appearance = dark;  (managed: \(managed))
                    shadows blue;  (persistent: \(user))
                    shadows light;  (system: \(system))
                launchCount = 3;  (persistent: \(user))
                volume = 5;  (system: \(system))

            """)
        let one = try succeed(here + ["read", "--sources", Self.domain, Self.key, "appearance"]).output
        #expect(one.split(separator: "\n").count == 4)
        #expect(one.contains("appearance = dark;") && !one.contains("volume"))
        #expect(try prefsctl(here + ["read", "--sources", Self.domain, Self.key, "absent"]).status == 1)

        let json = try succeed(here + ["read", "--sources", Self.domain, "--json"]).output
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let entries = try #require((parsed[Self.key] as? [String: Any])?["entries"] as? [String: Any])
        let appearance = try #require(entries["appearance"] as? [String: Any])
        #expect(appearance["value"] as? String == "dark")
        #expect(appearance["layer"] as? String == "managed")
        #expect(appearance["file"] as? String == managed)
        let shadowed = try #require(appearance["shadowed"] as? [[String: Any]])
        #expect(shadowed.map { $0["layer"] as? String } == ["persistent", "system"])
        #expect(shadowed.map { $0["value"] as? String } == ["blue", "light"])

        // A managed file the library ignores (writable by others) is reported on standard error; the rest is shown.
        #expect(chmod(managed, 0o666) == 0)
        let ignored = try prefsctl(here + ["read", "--sources", Self.domain])
        #expect(ignored.status == 0)
        #expect(ignored.errorLines.count == 1)
        #expect(ignored.errors.contains(managed), "\(ignored.errors)")
        #expect(ignored.output.contains("    appearance = blue;  (persistent: \(user))\n        shadows light;  (system: \(system))\n"), "\(ignored.output)")
    }


    @Test("A user with no preferences directory (a service with no home) sees the administrators' layers in read, read --sources and domains, as the library serves them, and its writes are refused with the reason",
          .enabled(if: geteuid() == 0, "needs root, to run prefsctl as nobody"))
    func noUserDirectoryShowsTheLayers() throws {
        // Under /tmp, open to nobody (whose home, /nonexistent, is no usable one), with a copy of the static prefsctl.
        let place = TemporaryDirectory(under: "/tmp")
        let system = place.appending("xdg") + "/RVS_PersistentPrefs", managed = place.appending("managed")
        for directory in [place.path, place.appending("xdg"), system, managed] {
            #expect(mkdir(directory, 0o755) == 0 || errno == EEXIST)
            #expect(chmod(directory, 0o755) == 0)
        }
        func install(_ contents: [String: PropertyListValue], in directory: String) {
            let file = directory + "/" + Self.domain + ".plist"
            _ = FileManager.default.createFile(atPath: file, contents: Data(BinaryPropertyList.encode(.dictionary(contents))),
                                               attributes: [.posixPermissions: 0o644])
        }
        install([Self.key: .dictionary(["appearance": .string("dark")]), "volume": .integer(3)], in: system)
        install(["telemetry": .bool(false)], in: managed)
        let program = place.appending("prefsctl")
        try FileManager.default.copyItem(atPath: ChildProcess.buildDirectory + "/prefsctl", toPath: program)
        func asNobody(_ arguments: String...) throws -> HarnessRun { try asNobody(arguments) }
        func asNobody(_ arguments: [String]) throws -> HarnessRun {
            let child = try ChildProcess("/usr/bin/env", ["-i", "EDITOR=/bin/true", "XDG_CONFIG_DIRS=" + place.appending("xdg"), "RVS_PREFS_MANAGED_DIRECTORY=" + managed,
                                                          "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", program] + arguments)
            child.closeInput()
            let output = String(decoding: child.readAllOutputBytes(), as: UTF8.self)
            let errors = child.readErrors()
            return HarnessRun(status: child.wait(), output: output, errors: errors)
        }
        let read = try asNobody("read", Self.domain)
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.output.contains("appearance = dark;") && read.output.contains("telemetry = 0;") && read.output.contains("volume = 3;"), "\(read.output)")
        let sources = try asNobody("read", "--sources", Self.domain)
        #expect(sources.status == 0, "\(sources.errors)")
        #expect(sources.output.contains("volume = 3;  (system: \(system)/\(Self.domain).plist)"), "\(sources.output)")
        #expect(sources.output.contains("telemetry = 0;  (managed: \(managed)/\(Self.domain).plist)"), "\(sources.output)")
        let domains = try asNobody("domains")
        #expect(domains.status == 0 && domains.output == "\(Self.domain) (system, managed)\n", "\(domains.output) \(domains.errors)")
        let write = try asNobody("write", Self.domain, "volume", "-int", "4")
        #expect(write.status == 1)
        #expect(write.errors.contains("there is no preferences directory") && write.errors.contains("or pass --directory PATH"), "\(write.errors)")
        for refused in [["delete", Self.domain, "volume"], ["delete", Self.domain], ["rename", Self.domain, "volume", "level"],
                        ["edit", Self.domain]] {
            let run = try asNobody(refused)
            #expect(run.status == 1 && run.errors.contains("there is no preferences directory"), "\(refused): \(run.errors)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.path).sorted() == ["managed", "prefsctl", "xdg"])
    }

    @Test("--user NAME acts as that user: the files it makes are the user's, and the directory is under the user's home",
          .enabled(if: geteuid() == 0, "needs root, as --user does"))
    func otherUser() throws {
        let nobody = try #require(getpwnam("nobody"))
        let (uid, home) = (nobody.pointee.pw_uid, String(cString: nobody.pointee.pw_dir))
        // The user can pass through the sandbox (mode 0711) to a directory of its own, and write nothing else.
        #expect(chmod(sandbox.path, 0o711) == 0)
        let theirs = sandbox.directory.appending("theirs")
        #expect(mkdir(theirs, 0o700) == 0 && chown(theirs, uid, nobody.pointee.pw_gid) == 0)
        try succeed("--user", "nobody", "--directory", theirs, "write", Self.domain, Self.key, "appearance", "dark")
        let names = try FileManager.default.contentsOfDirectory(atPath: theirs).sorted()
        #expect(names == [Self.domain + ".plist", Self.domain + ".plist.lock"])
        for name in names { #expect(mode(theirs + "/" + name)?.owner == uid, "\(name)") }
        // With that user's rights only: a directory of root's is out of reach.
        let denied = try prefsctl(["--user", "nobody", "--directory", sandbox.path, "write", Self.domain, Self.key, "appearance", "dark"])
        #expect(denied.status == 1)
        #expect(denied.errors.contains("Permission denied") || denied.errors.contains("permission"), "\(denied.errors)")
        // Without --directory, the user's default directory, not this process's $RVS_PREFS_DIRECTORY.
        let missing = try prefsctl(["--user", "nobody", "read", Self.domain])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("\(home)/.config/RVS_PersistentPrefs"), "\(missing.errors)")
        let unknown = try prefsctl(["--user", "no-such-user-here", "domains"])
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("there is no user 'no-such-user-here'"))
    }


    @Test("watch DOMAIN [KEY] prints the current values, then each change from any layer as it happens, as JSON lines too")
    func watch() throws {
        try succeed("--directory", sandbox.path, "write", Self.domain, "count", "-int", "1")
        let watcher = try ChildProcess("prefsctl", ["--directory", sandbox.path, "watch", Self.domain, "--json"], environment: sandbox.environment)
        defer {
            watcher.kill()
            _ = watcher.wait()
        }
        // The first line is the current value: printed after the watches started, so no later change is missed.
        #expect(watcher.readLine() == #"{"key":"count","value":1}"#)
        try succeed("--directory", sandbox.path, "write", Self.domain, "count", "-int", "2")
        #expect(watcher.readLine() == #"{"key":"count","value":2}"#)
        try succeed("--system", "write", Self.domain, "fromSystem", "yes")
        #expect(watcher.readLine() == #"{"key":"fromSystem","value":"yes"}"#)
        try succeed("--managed", "write", Self.domain, "count", "-int", "9")
        #expect(watcher.readLine() == #"{"key":"count","value":9}"#)
        try succeed("--system", "delete", Self.domain)
        #expect(watcher.readLine() == #"{"key":"fromSystem","removed":true}"#)

        let one = try ChildProcess("prefsctl", ["--directory", sandbox.path, "watch", Self.domain, "count"], environment: sandbox.environment)
        defer {
            one.kill()
            _ = one.wait()
        }
        #expect(one.readLine() == "count = 9;")
        try succeed("--directory", sandbox.path, "write", Self.domain, "other", "x")
        try succeed("--managed", "delete", Self.domain)
        #expect(one.readLine() == "count = 2;")
    }

}
