// `harness check`: checked histories (SPEC §11). Real worker processes do a seeded random mix of
// operations through the library while a nemesis acts on their files; every operation and notification is
// recorded on CLOCK_MONOTONIC, and a checker that shares no code with the library's read path (PrefsHistory)
// judges the merged history.

import Foundation
import EtcdTestSupport
import Glibc
import PrefsHistory
import Synchronization
import PrefsTool

/// `harness check`: random work, injected faults, and an independent check of what every process saw.
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "random work under injected faults, and a checker of what every process saw"

    static var usage: String { """
        usage: harness check [--seed N] [--duration SECONDS] [--processes P] [--etcd] [--keep]
               harness check --plan [--seed N] [--duration SECONDS] [--processes P] [--etcd]
               harness check --recheck DIR

        Runs P worker processes (default 3) for SECONDS (default 30) doing a seeded random mix of subscript
        writes, whole replacements, removals, modify increments, typed writes and reads of two file domains,
        each with a watching instance that records every notification, while a nemesis from the same seed
        replaces the preferences directory, renames over the domain file, writes through a hard link,
        retargets a symbolic link on the path, bind mounts a directory over one on a domain's path and
        unmounts it (one run in two mounts one before the workers start), makes an administrator's system and
        managed files appear, change and go, and kills workers with SIGKILL (their unfinished operations have
        unknown outcomes). Then it checks the history: stale, phantom or backwards reads, counters that differ
        from their acknowledged increments, acknowledged writes missing at the end, domain files torn by a
        kill, and notifications repeated, out of chain, or not ending on the stored collection. Each anomaly
        is printed with the slice of history that shows it. The same seed replays the same operations and
        faults: the plan's digest is printed so that two runs can be compared, and the faults made of each
        kind are counted.

        Run as root, the check runs inside a mount and a network namespace of its own (unshare), so that its
        bind mounts and network rules end with it however it ends; elsewhere it makes no bind mount, and
        pauses a member it would cut off, and says so.

        The last line is `check: seed S, O operations, F faults, A anomalies`; the exit status is 1 when A > 0.

          --seed N           the seed (default: a random one, printed)
          --duration SECONDS how long the workers run (default 30)
          --processes P      how many workers run at once (default 3)
          --etcd             two etcd domains instead, on a three-member cluster (needs Debian's
                             etcd-server), each worker attached to another member; the nemesis kills one
                             member or two at once (quorum lost, up to 4.5 s) and restarts them, pauses a
                             member with SIGSTOP/SIGCONT, cuts a member off from the other two for up to
                             4.8 s while its workers still reach it (each member in a network namespace of its
                             own; paused instead where namespaces cannot be made: the output says which),
                             and kills workers
          --plan             print the plan (the digest, and each fault with its time) and run nothing
          --recheck DIR      check again the history a run kept in DIR (no new run): what an improved checker,
                             or a new reading of an error's outcome, says of it
          --keep             keep the directory with the files and the history (kept anyway when A > 0)
        """ }

    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        var arguments = arguments
        if let root = try arguments.option(CheckWorker.option, needs: "a directory") {
            let number = try arguments.option("--worker-number", needs: "a number") { Int($0) } ?? 0
            let seed = try arguments.option("--worker-seed", needs: "a number") { UInt64($0) } ?? 0
            let endpoints = try arguments.option("--worker-etcd", needs: "URLs") { $0.split(separator: ",").compactMap { URL(string: String($0)) } }
            let prefix = try arguments.option("--worker-etcd-name", needs: "a name") ?? "check"
            try arguments.finish { "unknown option \($0)" }
            try CheckWorker.run(root: root, number: number, seed: seed, etcd: endpoints.map { ($0, prefix) })
            return
        }
        if let kept = try arguments.option("--recheck", needs: "a directory a run kept") {
            try arguments.finish { "unknown option \($0) (see harness check --help)" }
            let status = try CheckRun.recheck(kept)
            if status != 0 { throw HarnessError.alreadyReported(status: status) }
            return
        }
        let seed = try arguments.option("--seed", needs: "a whole number") { UInt64($0) } ?? randomSeed()
        let duration = try arguments.option("--duration", needs: "a number of seconds") { Double($0).flatMap { $0 > 0 && $0 <= 86_400 ? $0 : nil } } ?? 30
        let processes = try arguments.option("--processes", needs: "a number from 1 to 64") { Int($0).flatMap { (1...64).contains($0) ? $0 : nil } } ?? 3
        let keep = arguments.flag("--keep")
        let etcd = arguments.flag("--etcd")
        let planOnly = arguments.flag("--plan")
        try arguments.finish { "unknown option \($0) (see harness check --help)" }
        if planOnly {
            CheckRun.printPlan(seed: seed, duration: duration, processes: processes, etcd: etcd)
            return
        }
        // Bind mounts and a cut-off member are made in namespaces of the run's own (see CheckIsolation): the
        // same command runs again inside them, with the seed it drew.
        var isolation: String? = "inside the run's own mount and network namespaces"
        if !CheckIsolation.isInside {
            if let refusal = CheckIsolation.refusal() {
                isolation = nil
                Console.say("check: no namespaces of its own (\(refusal)): no bind mounts, and a member is paused instead of cut off")
            } else {
                let status = try CheckIsolation.runInside(seed: seed)
                if status != 0 { throw HarnessError.alreadyReported(status: status) }
                return
            }
        } else {
            try CheckIsolation.prepareInside()
        }
        let status = try CheckRun(seed: seed, duration: duration, processes: processes, directory: context.directory, keep: keep, etcd: etcd,
                                  isolation: isolation).run()
        if status != 0 { throw HarnessError.alreadyReported(status: status) }
    }

    private static func randomSeed() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next() % 1_000_000_000
    }
}

/// A worker process and the lines it printed, read on a thread of its own so that every wait is bounded.
final class CheckWorkerProcess: @unchecked Sendable {
    let number: Int
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines = Mutex<[String]>([])

    init(number: Int, seed: UInt64, root: String, etcd: (endpoints: [URL], prefix: String)? = nil) throws {
        self.number = number
        process.executableURL = URL(fileURLWithPath: HarnessChild.executable)
        process.arguments = ["check", CheckWorker.option, root, "--worker-number", "\(number)", "--worker-seed", "\(seed)"]
            + (etcd.map { ["--worker-etcd", $0.endpoints.map(\.absoluteString).joined(separator: ","), "--worker-etcd-name", $0.prefix] } ?? [])
        process.standardInput = input
        process.standardOutput = output
        let errors = CheckLayout(root: root).logs + "/p\(number).err"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            let reader = LineReader(descriptor: handle.fileDescriptor)
            while let line = reader.nextLine() { lines.withLock { $0.append(line) } }
        }
    }

    func send(_ line: String) { try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8)) }

    /// Waits at most `seconds` for the worker to print `line`.
    func await(_ line: String, seconds: Double) -> Bool {
        let deadline = monotonicNow() + UInt64(seconds * 1e9)
        while monotonicNow() < deadline {
            if lines.withLock({ $0.contains(line) }) { return true }
            if !process.isRunning { return lines.withLock { $0.contains(line) } }
            usleep(5_000)
        }
        return false
    }

    /// Waits at most `seconds` for the worker to exit; whether it did.
    func awaitExit(seconds: Double) -> Bool {
        let deadline = monotonicNow() + UInt64(seconds * 1e9)
        while process.isRunning, monotonicNow() < deadline { usleep(5_000) }
        return !process.isRunning
    }

    func killNow() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// One run of `harness check`.
struct CheckRun {
    /// How many anomalies of each kind are printed; the others are only written to `anomalies.txt`.
    static let printedPerKind = 5

    /// An etcd domain's value read with `curl` from the gateway, without the library, and parsed by Foundation; an answer
    /// later than 2 s is none (the caller asks another member).
    static func etcdDomain(_ name: String, at member: URL) -> Result<[String: Any]?, Nemesis.ParseFailure> {
        let key = Data("/RVS_PersistentPrefs/\(name)".utf8).base64EncodedString()
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-s", "--max-time", "2", "-X", "POST", member.absoluteString + "/v3/kv/range", "-d", #"{"key":"\#(key)"}"#]
        let output = Pipe()
        curl.standardOutput = output
        do { try curl.run() } catch { return .failure(Nemesis.ParseFailure(reason: "cannot run curl: \(error)")) }
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        guard let object = try? JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            return .failure(Nemesis.ParseFailure(reason: "the gateway's answer is not JSON: \(String(decoding: answer.prefix(200), as: UTF8.self))"))
        }
        // An error (a member that has no leader yet answers `{"error": ..., "code": ...}`) is no answer: only a
        // range response (with its header) tells that the key is absent.
        guard object["header"] != nil, object["error"] == nil else {
            return .failure(Nemesis.ParseFailure(reason: "the gateway answered an error: \(String(decoding: answer.prefix(200), as: UTF8.self))"))
        }
        guard let text = (object["kvs"] as? [[String: Any]])?.first?["value"] as? String else { return .success(nil) }
        guard let data = Data(base64Encoded: text),
              let domain = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            return .failure(Nemesis.ParseFailure(reason: "the stored value is not a property list with a dictionary root"))
        }
        return .success(domain)
    }

    let seed: UInt64
    let duration: Double
    let processes: Int
    let directory: String?
    let keep: Bool
    let etcd: Bool
    /// Where the run is isolated (its own namespaces), or `nil` when it is not: then no bind mount is made,
    /// and a member to cut off is paused instead.
    let isolation: String?

    /// Prints the plan of a run without running it: the digest, then each fault with its time and choice.
    static func printPlan(seed: UInt64, duration: Double, processes: Int, etcd: Bool) {
        let faults = nemesisSchedule(seed: seed, duration: duration, processes: processes, etcd: etcd)
        Console.say("check: plan digest \(planDigest(seed: seed, faults: faults, processes: processes)) (seed \(seed), \(processes) processes, \(Int(duration)) s, \(faults.count) faults planned)")
        for fault in faults {
            Console.say(String(format: "%8.3f s  ", fault.time) + (fault.beforeStart ? "before the workers start: " : "") + "\(fault.kind.rawValue) (choice \(fault.choice))")
        }
        let kinds = (etcd ? Fault.Kind.etcd : Fault.Kind.files).map { kind in "\(kind.rawValue) \(faults.filter { $0.kind == kind }.count)" }
        Console.say("check: planned faults: " + kinds.joined(separator: ", "))
    }

    func run() throws -> Int32 {
        let faults = nemesisSchedule(seed: seed, duration: duration, processes: processes, etcd: etcd)
        Console.say("check: plan digest \(planDigest(seed: seed, faults: faults, processes: processes)) (seed \(seed), \(processes) processes, \(Int(duration)) s, \(faults.count) faults planned)")
        let root: String
        if let directory {
            root = directory
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        } else {
            var template = Array((NSTemporaryDirectory() + "/rvs-prefs-check-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw HarnessError.failure("cannot make a temporary directory") }
            root = String(cString: made)
        }
        let layout = CheckLayout(root: root)
        let nemesis = Nemesis(layout: layout, mountsRefused: isolation == nil ? "not in a mount namespace of the run's own" : nil)
        try nemesis.prepare()
        // Whatever ends the run (an error thrown included), no mount is left: the namespaces end with the run
        // anyway, and this makes it so in the run's own mount namespace as soon as it ends.
        defer { nemesis.unmount() }
        var coordinatorRecords: [HistoryRecord] = []
        var coordinatorSequence = 0

        var cluster: EtcdCluster?
        var network: CheckNetwork?
        var partitionMethod = "none"
        if etcd {
            if isolation != nil {
                do {
                    network = try CheckNetwork(members: 3)
                    partitionMethod = "network namespaces: each member in its own, its peer traffic blackholed by routing rules in the run's namespace"
                } catch {
                    partitionMethod = "SIGSTOP/SIGCONT pause (network namespaces could not be made: \(error))"
                }
            } else {
                partitionMethod = "SIGSTOP/SIGCONT pause (no network namespaces: the run has no namespaces of its own)"
            }
            Console.say("check: starting a three-member etcd cluster" + (network == nil ? " on loopback" : ", each member in a network namespace of its own"))
            do { cluster = try EtcdCluster(hosts: network?.hosts, launchers: network?.launchers) } catch { throw HarnessError.failure("\(error)") }
            Console.say("check: partition method: \(partitionMethod)")
        }
        defer {
            network?.heal()
            cluster?.stop()
        }
        // The faults planned before the workers start (a bind mount in place before anyone watches).
        for fault in faults where fault.beforeStart { nemesis.apply(fault) }
        // A name of its own for each run, so that a kept cluster or an earlier run's keys never mix in.
        let prefix = "check-\(seed)-\(getpid())"
        func startWorker(_ number: Int) throws -> CheckWorkerProcess {
            try CheckWorkerProcess(number: number, seed: SeededGenerator.workerSeed(seed, worker: number), root: root,
                                   etcd: cluster.map { ($0.endpoints(attachedTo: number % $0.members.count), prefix) })
        }
        var nextNumber = processes
        var workers = try (0..<processes).map(startWorker)
        for worker in workers where !worker.await("ready", seconds: 60) {
            throw HarnessError.failure("worker p\(worker.number) did not start (see \(layout.logs)/p\(worker.number).err)")
        }

        let started = monotonicNow()
        func elapsed() -> Double { Double(monotonicNow() - started) / 1e9 }
        // Waits until `time` of the run, ending a bind mount whose time is up meanwhile.
        func wait(until time: Double) {
            while let mount = nemesis.bindMount, mount.until <= time {
                let wait = mount.until - elapsed()
                if wait > 0 { usleep(UInt32(min(wait, 60) * 1e6)) }
                nemesis.unmount()
            }
            let wait = time - elapsed()
            if wait > 0 { usleep(UInt32(min(wait, 60) * 1e6)) }
        }
        var notReached = 0
        var partitionChecks: [String] = []
        // A member the last etcd fault left alone: the final reads ask it first (one just healed or restarted
        // answers a linearizable read only once it has caught up).
        var untouchedMember = 0
        for fault in faults where !fault.beforeStart {
            // An etcd outage takes its time: faults that fall behind the run's end are left out, so that the run
            // ends on time (the plan stays the same; which faults ran is reported).
            guard elapsed() < duration - 1 else {
                notReached += 1
                continue
            }
            wait(until: fault.time)
            let faultBegin = monotonicNow()
            if let cluster, fault.kind != .killWorker {
                // Each etcd fault lasts 0.5 to 2.4 s, a quorum lost 1 to 4.5 s (longer than the workers' operation
                // timeout, so that some operations fail while others wait it out); then the cluster is whole again.
                let size = cluster.members.count
                let first = fault.choice % size
                let second = (first + 1 + (fault.choice / size) % (size - 1)) % size
                let outage = fault.kind == .killTwoMembers ? UInt32(1_000_000 + (fault.choice % 8) * 500_000)
                    : fault.kind == .partitionMember ? UInt32(1_000_000 + (fault.choice % 20) * 200_000)
                    : UInt32(500_000 + (fault.choice % 20) * 100_000)
                switch fault.kind {
                case .killMember:
                    cluster.kill(first)
                    usleep(outage)
                    try? cluster.start(first)
                case .killTwoMembers:
                    cluster.kill(first)
                    cluster.kill(second)
                    usleep(outage)
                    try? cluster.start(first)
                    try? cluster.start(second)
                case .partitionMember:
                    // Cut off by the network where it can be, else paused (the output says which).
                    if let network, (try? network.cut(first)) != nil {
                        let cut = monotonicNow()
                        // The first cut is verified: the member's peer port is out of the others' reach, and
                        // its client port still within its workers'.
                        if partitionChecks.isEmpty {
                            let member = cluster.members[first]
                            let others = network.hosts.indices.filter { $0 != first }
                            let reached = network.reachable(others.map { (from: $0, host: member.host, port: member.peerPort) }
                                                            + [(from: nil, host: member.host, port: member.clientPort)])
                            let (peers, clients) = (reached.dropLast(), reached.last == true)
                            partitionChecks.append("peer port of m\(first) reached by the others while cut: \(peers.contains(true) ? "yes (NOT cut off)" : "no"); client port reached by its workers: \(clients ? "yes" : "no (NOT reachable)")")
                        }
                        // The outage counts from the cut: the check's probes (up to 2 s) are part of it.
                        let probed = UInt32(min(Double(monotonicNow() - cut) / 1_000, Double(outage)))
                        usleep(outage - probed)
                        network.heal()
                    } else {
                        // A cut that failed half-way is undone first.
                        network?.heal()
                        cluster.pause(first)
                        usleep(outage)
                        cluster.pause(first, false)
                    }
                default:
                    cluster.pause(first)
                    usleep(outage)
                    cluster.pause(first, false)
                }
                untouchedMember = (0..<size).first { $0 != first && (fault.kind != .killTwoMembers || $0 != second) } ?? 0
                nemesis.count(fault.kind)
                nemesis.note("\(fault.kind.rawValue) (choice \(fault.choice): m\(first)" + (fault.kind == .killTwoMembers ? " and m\(second)" : "") + ")", since: faultBegin)
                continue
            }
            guard fault.kind == .killWorker else {
                nemesis.apply(fault)
                continue
            }
            let slot = fault.choice % workers.count
            workers[slot].killNow()
            nemesis.count(.killWorker)
            nemesis.note("kill -9 of p\(workers[slot].number)", since: faultBegin)
            // A killed writer must leave every domain file whole.
            for domain in CheckLayout.domains where !etcd {
                let begin = monotonicNow()
                coordinatorSequence += 1
                var record = HistoryRecord(process: HistoryRecord.coordinatorProcess, sequence: coordinatorSequence, kind: .parse,
                                           domain: domain, key: "", start: begin, end: nil, outcome: .ok)
                if case .failure(let failure) = Nemesis.parse(layout.file(of: domain)) {
                    record.outcome = .failed
                    record.error = failure.reason
                }
                record.end = monotonicNow()
                coordinatorRecords.append(record)
            }
            workers[slot] = try startWorker(nextNumber)
            nextNumber += 1
        }
        wait(until: duration)
        // A bind mount still in place ends with the run's time.
        nemesis.unmount()

        // Quiesce: every worker finishes the operation under way; one that does not answer is killed (its
        // operation is then of unknown outcome). Then the watchers settle.
        for worker in workers { worker.send("stop") }
        for worker in workers where !worker.await("stopped", seconds: 30) {
            Console.complain("harness check: worker p\(worker.number) did not stop within 30 s: killed")
            worker.killNow()
        }
        for worker in workers { worker.send("settle") }
        for worker in workers where !worker.await("settled", seconds: 30) {
            Console.complain("harness check: worker p\(worker.number) did not settle within 30 s: killed")
            worker.killNow()
        }
        for worker in workers where !worker.awaitExit(seconds: 10) {
            Console.complain("harness check: worker p\(worker.number) did not exit within 10 s of settling: killed")
            worker.killNow()
        }

        // The final state, read without the library.
        for domain in CheckLayout.domains {
            coordinatorSequence += 1
            let begin = monotonicNow()
            var record = HistoryRecord(process: HistoryRecord.coordinatorProcess, sequence: coordinatorSequence, kind: .final,
                                       domain: domain, key: CheckLayout.key, start: begin, end: nil, outcome: .ok)
            var stored: Result<[String: Any]?, Nemesis.ParseFailure>
            if let cluster {
                // A member just healed or restarted may not answer at once (its linearizable read waits until it has
                // caught up with the leader): every member in turn, each given 2 s, for up to 20 s.
                let giveUp = monotonicNow() + 20_000_000_000
                var attempt = 0
                repeat {
                    stored = Self.etcdDomain(prefix + "." + domain, at: cluster.members[(untouchedMember + attempt) % cluster.members.count].clientURL)
                    attempt += 1
                    if case .failure = stored { usleep(200_000) } else { break }
                } while monotonicNow() < giveUp
            } else {
                stored = Nemesis.parse(layout.file(of: domain))
            }
            switch stored {
            case .success(let stored):
                record.values = (stored?[CheckLayout.key] as? [String: Any]).map { $0.compactMapValues { $0 as? Int } }
                record.value = (stored?[CheckLayout.counterKey] as? [String: Any])?[CheckLayout.counterEntry] as? Int
            case .failure(let failure):
                record.outcome = .failed
                record.error = failure.reason
                coordinatorSequence += 1
                coordinatorRecords.append(HistoryRecord(process: HistoryRecord.coordinatorProcess, sequence: coordinatorSequence, kind: .parse,
                                                        domain: domain, key: "", start: begin, end: monotonicNow(), outcome: .failed, error: failure.reason))
            }
            func administrator(_ directory: String) -> [String: Int]? {
                guard case .success(let stored) = Nemesis.parse(directory + "/\(domain).plist") else { return nil }
                return (stored?[CheckLayout.key] as? [String: Any]).map { $0.compactMapValues { $0 as? Int } }
            }
            record.system = administrator(layout.systemDirectory)
            record.managed = administrator(layout.managedDirectory)
            record.end = monotonicNow()
            if record.outcome == .ok { coordinatorRecords.append(record) }
        }

        // Merge and check.
        var lines: [Substring] = []
        for number in 0..<nextNumber {
            if let text = try? String(contentsOfFile: layout.log(of: number), encoding: .utf8) {
                lines.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: true))
            }
        }
        lines.append(contentsOf: (nemesis.records + coordinatorRecords).map { Substring($0.jsonLine) })
        try? (nemesis.records + coordinatorRecords).map(\.jsonLine).joined(separator: "\n").write(toFile: layout.logs + "/coordinator.jsonl", atomically: true, encoding: .utf8)
        let history = mergeHistory(lines)
        let anomalies = checkHistory(history, checkedEntries: Set(CheckLayout.entries))

        let operationKinds: Set<HistoryRecord.Kind> = [.write, .replace, .increment, .read, .readAll, .readCounter]
        let operations = history.filter { operationKinds.contains($0.kind) }
        let notifications = history.filter { $0.kind == .notify }.count
        let unknown = operations.filter { $0.outcome == .unknown }.count
        var failures: [String: Int] = [:]
        for operation in operations where operation.outcome == .failed {
            failures[String((operation.error ?? "").prefix(70)), default: 0] += 1
        }
        let faultCount = nemesis.counts.values.reduce(0, +)
        Console.say("check: \(operations.count) operations by \(nextNumber) processes, \(notifications) notifications, \(unknown) of unknown outcome, \(operations.count - operations.filter { $0.outcome == .ok }.count - unknown) failed")
        for (error, count) in failures.sorted(by: { $0.value > $1.value }).prefix(8) { Console.say("  failed \(count)×: \(error)") }
        let faultLine = (etcd ? Fault.Kind.etcd : Fault.Kind.files).map { "\($0.rawValue) \(nemesis.counts[$0] ?? 0)" + ((nemesis.skipped[$0] ?? 0) > 0 ? " (\(nemesis.skipped[$0]!) skipped)" : "") }
        // `; ` between kinds: a kind's name may hold commas. Scripts/soak.sh totals this line over its runs.
        Console.say("check: faults: " + faultLine.joined(separator: "; "))
        if notReached > 0 { Console.say("check: \(notReached) planned faults left out, the run's time being up") }
        if etcd {
            Console.say("check: partition method: \(partitionMethod)")
            for line in partitionChecks { Console.say("check: partition verified: \(line)") }
        } else {
            Console.say("check: bind mounts: " + (nemesis.bindMountRefusal.map { "none made (\($0))" } ?? "made in the run's own mount namespace"))
        }
        Self.print(anomalies, root: root)
        try? (nemesis.journal.joined(separator: "\n") + "\n").write(toFile: root + "/faults.txt", atomically: true, encoding: .utf8)
        if !anomalies.isEmpty || keep {
            Console.say("check: the files and the history are kept in \(root)")
        } else if directory == nil {
            try? FileManager.default.removeItem(atPath: root)
        }
        Console.say("check: seed \(seed), \(operations.count) operations, \(faultCount) faults, \(anomalies.count) anomalies")
        return anomalies.isEmpty ? 0 : 1
    }

    /// The history kept in `root` checked again; the exit status.
    static func recheck(_ root: String) throws -> Int32 {
        let logs = CheckLayout(root: root).logs
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: logs) else {
            throw HarnessError.failure("no history in \(logs)")
        }
        var lines: [Substring] = []
        for name in names.sorted() where name.hasSuffix(".jsonl") {
            if let text = try? String(contentsOfFile: logs + "/" + name, encoding: .utf8) {
                lines.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: true))
            }
        }
        // Histories recorded before PrefsError.outcomeUnknown existed told an unknown outcome only in the text of
        // a storageUnreachable error: such a failure is read as of unknown outcome.
        let history = mergeHistory(lines).map { record -> HistoryRecord in
            var record = record
            if record.outcome == .failed, record.error?.contains("could not be learnt") == true { record.outcome = .unknown }
            return record
        }
        let anomalies = checkHistory(history, checkedEntries: Set(CheckLayout.entries))
        let operationKinds: Set<HistoryRecord.Kind> = [.write, .replace, .increment, .read, .readAll, .readCounter]
        let operations = history.filter { operationKinds.contains($0.kind) }.count
        print(anomalies, root: root)
        Console.say("check: recheck of \(root), \(operations) operations, \(anomalies.count) anomalies")
        return anomalies.isEmpty ? 0 : 1
    }

    /// Prints `anomalies`: every one with its slice goes to `root`/anomalies.txt, the first few of each kind
    /// to standard output too (a broken library can make thousands, which would bury the summary).
    static func print(_ anomalies: [Anomaly], root: String) {
        var report = ""
        var printed: [Anomaly.Kind: Int] = [:]
        for (index, anomaly) in anomalies.enumerated() {
            let text = (["anomaly \(index + 1): \(anomaly.kind.rawValue): \(anomaly.message)"] + anomaly.slice.map { "    \($0.description)" })
                .joined(separator: "\n")
            report += text + "\n"
            printed[anomaly.kind, default: 0] += 1
            if printed[anomaly.kind]! <= Self.printedPerKind { Console.say(text) }
        }
        for kind in Anomaly.Kind.allCases where (printed[kind] ?? 0) > Self.printedPerKind {
            Console.say("check: \(printed[kind]!) \(kind.rawValue) anomalies in all; every one is in \(root)/anomalies.txt")
        }
        if !anomalies.isEmpty { try? report.write(toFile: root + "/anomalies.txt", atomically: true, encoding: .utf8) }
    }
}
