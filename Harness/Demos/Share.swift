// `harness share`: an "app" and its "helper" (a command-line tool or a background service of the same
// program), two processes sharing one group suite.
//
// Both set RVS_PersistentPrefs.groupID and groupContainerDirectory to the same values, so both read and
// write the file <container>/<groupID>.plist. Each writes its own entries of one collection with the
// subscript, so neither overwrites the other's. The app starts the helper itself as a child process and
// takes turns with it over the child's standard input and output: no sleeping, no guessing. With
// `--role`, one side runs alone, to be tried in two terminals; then it waits, for a bounded time, for the
// other side's write to be pushed to it (watchesExternalChanges: one inotify watch, no polling loop).

import Foundation
import Glibc
import RVS_PersistentPrefs
import PrefsTool

enum Share: Subcommand {
    static let name = "share"
    static let summary = "an app and its helper: two processes exchanging values through one group suite"

    static let usage = """
        usage: harness share [--directory PATH] [--etcd URL[,URL…]]
               harness share --role app|helper [--directory PATH] [--timeout SECONDS] [--etcd URL[,URL…]]

        An "app" and its "helper" (say, a desktop program and its command-line tool or background
        service) share the group suite \(groupID): both set RVS_PersistentPrefs.groupID
        and RVS_PersistentPrefs.groupContainerDirectory (PATH/GroupContainer), so both use the same file.
        The app writes a message, the helper sees it and answers, the app sees the answer.

        Without --role, the app starts the helper itself, as a second process, and the two take turns
        over a pipe. Without --directory they work in a fresh temporary directory, removed at the end.

        With --role, this process plays one side only; run the other side in another terminal:
            harness share --role app           (in one terminal)
            harness share --role helper        (in another, in either order)
        Each side then waits until the other has written (it is told at once: no polling), for at most --timeout seconds
        (default \(Int(defaultTimeout))). Without --directory both sides use \(twoTerminalDirectory).
        (--role phone and --role watch, the names of earlier versions, still work.)

        With --etcd, the two sides share the suite through an etcd cluster instead of a file (the domain
        \(groupID), one etcd key): run them on two machines, each given the cluster's client URLs (its own
        member first). Credentials come from ETCD_USER and ETCD_PASSWORD, a private CA from ETCD_CA_FILE.
        """

    static let groupID = "group.com.example.harness"
    static let defaultTimeout = 60.0

    /// Where the two sides meet when run in two terminals without `--directory`: a fixed place, so that
    /// both find it, private to this user.
    static var twoTerminalDirectory: String {
        (NSTemporaryDirectory() as NSString).appendingPathComponent("rvs-harness-share-\(getuid())")
    }

    /// The two sides. `phone` and `watch`, the names of earlier versions, are still accepted.
    enum Role {
        case app, helper

        init?(argument: String) {
            switch argument {
            case "app", "phone": self = .app
            case "helper", "watch": self = .helper
            default: return nil
            }
        }
    }

    /// The entry point of `harness share`.
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        var arguments = arguments
        let role = try arguments.option("--role", needs: "app or helper", Role.init(argument:))
        let timeout = try arguments.option("--timeout", needs: "a number of seconds") { text in
            Double(text).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
        } ?? defaultTimeout
        let etcd = try arguments.option(EtcdCatalog.option, needs: "client URLs separated by commas")
        // The helper started by the app: it takes its turn when told so on standard input.
        let paired = arguments.flag("--paired")
        try arguments.finish { "unexpected argument '\($0)' (see --help)" }
        switch role {
        case nil:
            guard !paired else { throw HarnessError.usage("--paired is for the helper the app starts") }
            let workspace = try Workspace.make(context)
            defer { workspace.finish() }
            try demonstrate(in: workspace, etcd: etcd)
        case .app?:
            guard !paired else { throw HarnessError.usage("--paired is for the helper the app starts") }
            try runApp(in: try twoTerminalWorkspace(context), peer: .otherTerminal(timeout: timeout), etcd: etcd)
        case .helper?:
            if paired {
                guard let directory = context.directory else { throw HarnessError.usage("--paired needs --directory") }
                try runHelper(in: Workspace.existing(directory), peer: .appOverPipe, etcd: etcd)
            } else {
                try runHelper(in: try twoTerminalWorkspace(context), peer: .otherTerminal(timeout: timeout), etcd: etcd)
            }
        }
    }

    /// The tour's part, and `harness share` without `--role`: the app here, the helper in a child process.
    static func demonstrate(in workspace: Workspace, etcd: String? = nil) throws {
        if let etcd {
            explain("The app and the helper are two processes: this one, and a child it starts (the same harness, run as `harness share --role helper --etcd …`). Both open the domain \(groupID) in the etcd cluster at \(etcd), one etcd key holding the same bytes a domain file holds; on two machines each would be given its own member first. They take turns over the child's standard input and output; whatever they exchange goes through etcd.")
            try runApp(in: workspace, peer: .childProcess, etcd: etcd)
            explain("Each update of one entry is a compare-and-swap on the key's revision, so neither side's entries are lost; the app's observer heard the helper's write through an etcd watch, without polling.")
            return
        }
        explain("The app and the helper are two processes: this one, and a child it starts (the same harness, run as `harness share --role helper`). Both set RVS_PersistentPrefs.groupID = \"\(groupID)\" and RVS_PersistentPrefs.groupContainerDirectory = \"\(workspace.groupContainer)\", so both use the file \(groupID).plist there. They take turns over the child's standard input and output; whatever they exchange goes through the file.")
        try runApp(in: workspace, peer: .childProcess)
        explain("Both processes saw each other's writes because every read is fresh: it sees every write completed before it began, in any process. The app's observer heard the helper's write as it happened because the app set watchesExternalChanges = true: the process watches the group container with inotify and tells observers when the collection changed elsewhere, without polling.")
    }

    // MARK: The shared collection

    /// The collection both sides share. Each writes only its own two entries, with the subscript, which
    /// updates one entry under the file's lock: neither side ever overwrites the other's entries.
    final class Conversation: RVS_PersistentPrefs {
        static let storageKey = "Conversation"
        override var keys: [String] { ["appSays", "appTurn", "helperSays", "helperAnswered"] }

        /// Which message of the app's is waiting for an answer: a number new with every run of the app.
        var appTurn: Int? { self["appTurn"] as? Int }
        /// The turn of the message the helper answered last.
        var helperAnswered: Int? { self["helperAnswered"] as? Int }
        /// Whether the app has a message the helper has not answered yet.
        var appIsWaiting: Bool { appTurn != nil && appTurn != helperAnswered }
    }

    /// Points the library at the group suite in `workspace`, and opens the collection; with `etcd`, over
    /// the domain of that name in the cluster instead.
    private static func openConversation(in workspace: Workspace, etcd: String?) throws -> Conversation {
        if let etcd {
            let storage = try EtcdCatalog(endpoints: etcd).storage(.named(groupID))
            let conversation = Conversation(key: Conversation.storageKey, suite: DefaultsSuite(persistentDomain: storage, arguments: []))
            try conversation.throwIfFailed()
            return conversation
        }
        workspace.pointLibraryHere()
        RVS_PersistentPrefs.groupID = groupID
        let conversation = Conversation(key: Conversation.storageKey)
        try conversation.throwIfFailed()
        return conversation
    }

    private static func show(_ value: Any?) -> String {
        value.flatMap { PropertyListValue($0) }.map(PropertyListPrinter.readable) ?? "(nothing)"
    }

    // MARK: The app

    enum AppPeer {
        /// The helper is a child process, started and spoken to over pipes.
        case childProcess
        /// The helper runs in another terminal; the app checks the suite until it answers.
        case otherTerminal(timeout: Double)
    }

    static func runApp(in workspace: Workspace, peer: AppPeer, etcd: String? = nil) throws {
        let conversation = try openConversation(in: workspace, etcd: etcd)
        defer { RVS_PersistentPrefs.groupID = nil }
        // The app's observer hears its own writes and, with watching on, the helper's as they happen.
        conversation.watchesExternalChanges = true
        let answered = DispatchSemaphore(value: 0)
        let turn = Int(getpid())
        let observation = conversation.observe(\.values, options: [.old, .new]) { prefs, change in
            defer { if prefs.helperAnswered == turn { answered.signal() } }
            let before = change.oldValue ?? [:], after = change.newValue ?? [:]
            for name in Set(before.keys).union(after.keys).sorted() where PropertyListValue(before[name] as Any) != PropertyListValue(after[name] as Any) {
                Console.say("app:   its observer: \(name): \(show(before[name])) → \(show(after[name]))")
            }
        }
        defer { observation.invalidate() }

        var helper: HelperProcess?
        if case .childProcess = peer {
            let started = try HelperProcess(directory: workspace.path, etcd: etcd)
            helper = started
            // The helper says when it has opened the suite; from then on it waits for its turn.
            try started.relayLines(until: HelperProcess.readyLine)
        }

        Console.say("app: writes appSays and appTurn = \(turn), one entry at a time")
        conversation["appSays"] = "Hello from the app"
        try conversation.throwIfFailed()
        // The turn goes last: it tells the helper that the message is complete.
        conversation["appTurn"] = turn
        try conversation.throwIfFailed()

        switch peer {
        case .childProcess:
            try helper!.takeTurn()
            // The helper has exited; its write reaches the observer on the instance's own queue.
            guard answered.wait(timeout: .now() + Self.defaultTimeout) == .success else {
                throw HarnessError.failure("the app's observer was not told of the helper's answer")
            }
        case .otherTerminal(let timeout):
            Console.say("app: waiting up to \(seconds(timeout)) seconds for the helper. In another terminal, run:")
            Console.say("    harness share --role helper --directory \(shellQuoted(workspace.path))")
            do {
                guard answered.wait(timeout: .now() + timeout) == .success || conversation.helperAnswered == turn else {
                    throw HarnessError.failure("timed out")
                }
            } catch {
                // Take the unanswered message back, so that a helper started later does not answer it.
                conversation["appTurn"] = nil
                throw HarnessError.failure("no answer from the helper within \(seconds(timeout)) seconds; start `harness share --role helper --directory \(shellQuoted(workspace.path))` while the app waits")
            }
        }

        let reply = conversation["helperSays"]
        try conversation.throwIfFailed()
        Console.say("app: sees helperSays = \(show(reply)), written by the other process; its observer heard it as it happened")
        if let etcd {
            Console.say("app: the domain \(groupID) in etcd now holds:")
            try DomainInspector(domains: EtcdCatalog(endpoints: etcd)).execute(Arguments(operands: ["read", groupID]))
        } else {
            Console.say("app: the group suite \(workspace.groupContainer)/\(groupID).plist now holds:")
            try DefaultsInspector.execute(["read", groupID], directory: workspace.groupContainer)
        }
    }

    // MARK: The helper

    enum HelperPeer {
        /// Started by the app: its turn comes as a line on standard input.
        case appOverPipe
        /// Run in its own terminal: it checks the suite until the app has written.
        case otherTerminal(timeout: Double)
    }

    static func runHelper(in workspace: Workspace, peer: HelperPeer, etcd: String? = nil) throws {
        let conversation = try openConversation(in: workspace, etcd: etcd)
        defer { RVS_PersistentPrefs.groupID = nil }
        switch peer {
        case .appOverPipe:
            Console.say(HelperProcess.readyLine)
            guard let line = readLine(), line == HelperProcess.yourTurnLine else {
                throw HarnessError.failure("the app went away before the helper's turn")
            }
        case .otherTerminal(let timeout):
            Console.say("helper: waiting up to \(seconds(timeout)) seconds for the app. In another terminal, run:")
            Console.say("    harness share --role app --directory \(shellQuoted(workspace.path))")
            do {
                try waitForChange(of: conversation, timeout: timeout) { $0.appIsWaiting }
            } catch {
                throw HarnessError.failure("no message from the app within \(seconds(timeout)) seconds; start `harness share --role app --directory \(shellQuoted(workspace.path))` while the helper waits")
            }
        }
        guard let turn = conversation.appTurn, let message = conversation["appSays"] else {
            try conversation.throwIfFailed()
            throw HarnessError.failure("the app's message is not in the group suite")
        }
        Console.say("helper: sees appSays = \(show(message)) (turn \(turn))")
        conversation["helperSays"] = "Hello back from the helper"
        try conversation.throwIfFailed()
        conversation["helperAnswered"] = turn
        try conversation.throwIfFailed()
        Console.say("helper: wrote helperSays = \"Hello back from the helper\" and helperAnswered = \(turn)")
    }

    /// `12` for whole seconds, `0.5` otherwise.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e9 ? String(Int(value)) : String(value)
    }

    /// Waits until `condition` holds, for at most `timeout` seconds, without polling: the instance watches
    /// for changes made elsewhere and checks the condition again after each one.
    private static func waitForChange(of conversation: Conversation, timeout: Double,
                                      until condition: @escaping (Conversation) -> Bool) throws {
        let met = DispatchSemaphore(value: 0)
        conversation.watchesExternalChanges = true
        let observation = conversation.observe(\.values) { prefs, _ in if condition(prefs) { met.signal() } }
        defer { observation.invalidate() }
        if condition(conversation) { return }
        guard met.wait(timeout: .now() + timeout) == .success else { throw HarnessError.failure("timed out") }
    }

    /// The role-alone directory: `--directory`, else a fixed per-user directory, which must be this user's
    /// own private directory (not a link, not writable by others) since its name is predictable.
    private static func twoTerminalWorkspace(_ context: HarnessContext) throws -> Workspace {
        if let directory = context.directory { return Workspace.existing(directory) }
        let path = twoTerminalDirectory
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw HarnessError.failure("cannot make \(path): \(SystemError.current)")
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw HarnessError.failure("\(path) is not a private directory of yours; choose another with --directory PATH")
        }
        Console.say("(both sides meet in \(path); pass --directory PATH to choose another place)")
        return Workspace.existing(path)
    }
}
