// `harness share`: a "phone" and a "watch", two processes sharing one group suite, the command-line
// counterpart of the watchOS harness pair.
//
// Both set RVS_PersistentPrefs.groupID and groupContainerDirectory to the same values, so both read and
// write the file <container>/<groupID>.plist. Each writes its own entries of one collection with the
// subscript, so neither overwrites the other's. The phone starts the watch itself as a child process and
// takes turns with it over the child's standard input and output: no sleeping, no guessing. With
// `--role`, one side runs alone, to be tried in two terminals; then it waits, for a bounded time, for the
// other side's write to be pushed to it (watchesExternalChanges: one inotify watch, no polling loop).

import Foundation
import Glibc
import RVS_PersistentPrefs

enum Share: Subcommand {
    static let name = "share"
    static let summary = "a phone and a watch: two processes exchanging values through one group suite"

    static let usage = """
        usage: harness share [--directory PATH] [--etcd URL[,URL…]]
               harness share --role phone|watch [--directory PATH] [--timeout SECONDS] [--etcd URL[,URL…]]

        A "phone" and a "watch" share the group suite \(groupID): both set RVS_PersistentPrefs.groupID
        and RVS_PersistentPrefs.groupContainerDirectory (PATH/GroupContainer), so both use the same file.
        The phone writes a message, the watch sees it and answers, the phone sees the answer.

        Without --role, the phone starts the watch itself, as a second process, and the two take turns
        over a pipe. Without --directory they work in a fresh temporary directory, removed at the end.

        With --role, this process plays one side only; run the other side in another terminal:
            harness share --role phone        (in one terminal)
            harness share --role watch        (in another, in either order)
        Each side then waits until the other has written (it is told at once: no polling), for at most --timeout seconds
        (default \(Int(defaultTimeout))). Without --directory both sides use \(twoTerminalDirectory).

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

    enum Role: String {
        case phone, watch
    }

    /// The entry point of `harness share`.
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        var arguments = arguments
        let role = try arguments.option("--role", needs: "phone or watch", Role.init(rawValue:))
        let timeout = try arguments.option("--timeout", needs: "a number of seconds") { text in
            Double(text).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
        } ?? defaultTimeout
        let etcd = try arguments.option(EtcdCatalog.option, needs: "client URLs separated by commas")
        // The watch started by the phone: it takes its turn when told so on standard input.
        let paired = arguments.flag("--paired")
        try arguments.finish { "unexpected argument '\($0)' (see --help)" }
        switch role {
        case nil:
            guard !paired else { throw HarnessError.usage("--paired is for the watch the phone starts") }
            let workspace = try Workspace.make(context)
            defer { workspace.finish() }
            try demonstrate(in: workspace, etcd: etcd)
        case .phone?:
            guard !paired else { throw HarnessError.usage("--paired is for the watch the phone starts") }
            try runPhone(in: try twoTerminalWorkspace(context), peer: .otherTerminal(timeout: timeout), etcd: etcd)
        case .watch?:
            if paired {
                guard let directory = context.directory else { throw HarnessError.usage("--paired needs --directory") }
                try runWatch(in: Workspace.existing(directory), peer: .phoneOverPipe, etcd: etcd)
            } else {
                try runWatch(in: try twoTerminalWorkspace(context), peer: .otherTerminal(timeout: timeout), etcd: etcd)
            }
        }
    }

    /// The tour's part, and `harness share` without `--role`: the phone here, the watch in a child process.
    static func demonstrate(in workspace: Workspace, etcd: String? = nil) throws {
        if let etcd {
            explain("The phone and the watch are two processes: this one, and a child it starts (the same harness, run as `harness share --role watch --etcd …`). Both open the domain \(groupID) in the etcd cluster at \(etcd), one etcd key holding the same bytes a domain file holds; on two machines each would be given its own member first. They take turns over the child's standard input and output; whatever they exchange goes through etcd.")
            try runPhone(in: workspace, peer: .childProcess, etcd: etcd)
            explain("Each update of one entry is a compare-and-swap on the key's revision, so neither side's entries are lost; the phone's observer heard the watch's write through an etcd watch, without polling.")
            return
        }
        explain("The phone and the watch are two processes: this one, and a child it starts (the same harness, run as `harness share --role watch`). Both set RVS_PersistentPrefs.groupID = \"\(groupID)\" and RVS_PersistentPrefs.groupContainerDirectory = \"\(workspace.groupContainer)\", so both use the file \(groupID).plist there. They take turns over the child's standard input and output; whatever they exchange goes through the file.")
        try runPhone(in: workspace, peer: .childProcess)
        explain("Both processes saw each other's writes because every read is fresh: it sees every write completed before it began, in any process. The phone's observer heard the watch's write as it happened because the phone set watchesExternalChanges = true: the process watches the group container with inotify and tells observers when the collection changed elsewhere, without polling.")
    }

    // MARK: The shared collection

    /// The collection both sides share. Each writes only its own two entries, with the subscript, which
    /// updates one entry under the file's lock: neither side ever overwrites the other's entries.
    final class Conversation: RVS_PersistentPrefs {
        static let storageKey = "Conversation"
        override var keys: [String] { ["phoneSays", "phoneTurn", "watchSays", "watchAnswered"] }

        /// Which message of the phone's is waiting for an answer: a number new with every run of the phone.
        var phoneTurn: Int? { self["phoneTurn"] as? Int }
        /// The turn of the message the watch answered last.
        var watchAnswered: Int? { self["watchAnswered"] as? Int }
        /// Whether the phone has a message the watch has not answered yet.
        var phoneIsWaiting: Bool { phoneTurn != nil && phoneTurn != watchAnswered }
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

    // MARK: The phone

    enum PhonePeer {
        /// The watch is a child process, started and spoken to over pipes.
        case childProcess
        /// The watch runs in another terminal; the phone checks the suite until it answers.
        case otherTerminal(timeout: Double)
    }

    static func runPhone(in workspace: Workspace, peer: PhonePeer, etcd: String? = nil) throws {
        let conversation = try openConversation(in: workspace, etcd: etcd)
        defer { RVS_PersistentPrefs.groupID = nil }
        // The phone's observer hears its own writes and, with watching on, the watch's as they happen.
        conversation.watchesExternalChanges = true
        let answered = DispatchSemaphore(value: 0)
        let turn = Int(getpid())
        let observation = conversation.observe(\.values, options: [.old, .new]) { prefs, change in
            defer { if prefs.watchAnswered == turn { answered.signal() } }
            let before = change.oldValue ?? [:], after = change.newValue ?? [:]
            for name in Set(before.keys).union(after.keys).sorted() where PropertyListValue(before[name] as Any) != PropertyListValue(after[name] as Any) {
                Console.say("phone:   its observer: \(name): \(show(before[name])) → \(show(after[name]))")
            }
        }
        defer { observation.invalidate() }

        var watch: WatchProcess?
        if case .childProcess = peer {
            let started = try WatchProcess(directory: workspace.path, etcd: etcd)
            watch = started
            // The watch says when it has opened the suite; from then on it waits for its turn.
            try started.relayLines(until: WatchProcess.readyLine)
        }

        Console.say("phone: writes phoneSays and phoneTurn = \(turn), one entry at a time")
        conversation["phoneSays"] = "Hello from the phone"
        try conversation.throwIfFailed()
        // The turn goes last: it tells the watch that the message is complete.
        conversation["phoneTurn"] = turn
        try conversation.throwIfFailed()

        switch peer {
        case .childProcess:
            try watch!.takeTurn()
            // The watch has exited; its write reaches the observer on the instance's own queue.
            guard answered.wait(timeout: .now() + Self.defaultTimeout) == .success else {
                throw HarnessError.failure("the phone's observer was not told of the watch's answer")
            }
        case .otherTerminal(let timeout):
            Console.say("phone: waiting up to \(seconds(timeout)) seconds for the watch. In another terminal, run:")
            Console.say("    harness share --role watch --directory \(shellQuoted(workspace.path))")
            do {
                guard answered.wait(timeout: .now() + timeout) == .success || conversation.watchAnswered == turn else {
                    throw HarnessError.failure("timed out")
                }
            } catch {
                // Take the unanswered message back, so that a watch started later does not answer it.
                conversation["phoneTurn"] = nil
                throw HarnessError.failure("no answer from the watch within \(seconds(timeout)) seconds; start `harness share --role watch --directory \(shellQuoted(workspace.path))` while the phone waits")
            }
        }

        let reply = conversation["watchSays"]
        try conversation.throwIfFailed()
        Console.say("phone: sees watchSays = \(show(reply)), written by the other process; its observer heard it as it happened")
        if let etcd {
            Console.say("phone: the domain \(groupID) in etcd now holds:")
            try DomainInspector(domains: EtcdCatalog(endpoints: etcd)).execute(Arguments(operands: ["read", groupID]))
        } else {
            Console.say("phone: the group suite \(workspace.groupContainer)/\(groupID).plist now holds:")
            try DefaultsInspector.execute(["read", groupID], directory: workspace.groupContainer)
        }
    }

    // MARK: The watch

    enum WatchPeer {
        /// Started by the phone: its turn comes as a line on standard input.
        case phoneOverPipe
        /// Run in its own terminal: it checks the suite until the phone has written.
        case otherTerminal(timeout: Double)
    }

    static func runWatch(in workspace: Workspace, peer: WatchPeer, etcd: String? = nil) throws {
        let conversation = try openConversation(in: workspace, etcd: etcd)
        defer { RVS_PersistentPrefs.groupID = nil }
        switch peer {
        case .phoneOverPipe:
            Console.say(WatchProcess.readyLine)
            guard let line = readLine(), line == WatchProcess.yourTurnLine else {
                throw HarnessError.failure("the phone went away before the watch's turn")
            }
        case .otherTerminal(let timeout):
            Console.say("watch: waiting up to \(seconds(timeout)) seconds for the phone. In another terminal, run:")
            Console.say("    harness share --role phone --directory \(shellQuoted(workspace.path))")
            do {
                try waitForChange(of: conversation, timeout: timeout) { $0.phoneIsWaiting }
            } catch {
                throw HarnessError.failure("no message from the phone within \(seconds(timeout)) seconds; start `harness share --role phone --directory \(shellQuoted(workspace.path))` while the watch waits")
            }
        }
        guard let turn = conversation.phoneTurn, let message = conversation["phoneSays"] else {
            try conversation.throwIfFailed()
            throw HarnessError.failure("the phone's message is not in the group suite")
        }
        Console.say("watch: sees phoneSays = \(show(message)) (turn \(turn))")
        conversation["watchSays"] = "Hello back from the watch"
        try conversation.throwIfFailed()
        conversation["watchAnswered"] = turn
        try conversation.throwIfFailed()
        Console.say("watch: wrote watchSays = \"Hello back from the watch\" and watchAnswered = \(turn)")
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
