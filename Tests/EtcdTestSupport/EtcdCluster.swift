import Foundation
import Glibc
import PrefsEtcd
import PrefsPropertyList
import Synchronization
import TestSupport

/// A real three-member etcd cluster started from the `etcd` binary (Debian's `etcd-server`) on free loopback
/// ports, its data in a temporary directory. Members can be killed and restarted. Everything is stopped by
/// process id and removed when the value is released (`stop()`), so also when a test fails.
package final class EtcdCluster: Sendable {
    /// The `etcd` binary: `RVS_PREFS_ETCD` when it names one (CI sets it to the binary it checked), else the first
    /// on PATH, else Debian's `/usr/bin/etcd`; `nil` when there is none.
    package static let binary: String? = {
        let environment = ProcessInfo.processInfo.environment
        var candidates = environment["RVS_PREFS_ETCD"].map { [$0] } ?? []
        candidates += (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/etcd" }
        candidates += ["/usr/bin/etcd", "/usr/local/bin/etcd"]
        return candidates.first { path in
            var status = stat()
            return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
        }
    }()

    /// Whether the etcd tests run: `etcd` is installed (Debian's `etcd-server`), or `RVS_PREFS_REQUIRE_ETCD=1`
    /// says they must (CI), so that a missing binary fails them, naming where it was looked for, instead of
    /// skipping them.
    package static var isAvailable: Bool {
        binary != nil || ProcessInfo.processInfo.environment["RVS_PREFS_REQUIRE_ETCD"] == "1"
    }

    package struct Member: Sendable {
        package let name: String
        package let clientPort: Int
        package let peerPort: Int
        package let secure: Bool
        /// The address it listens on: 127.0.0.1, or its own in a network namespace of its own.
        package var host = "127.0.0.1"
        package var clientURL: URL { URL(string: "\(secure ? "https" : "http")://\(host):\(clientPort)")! }
    }

    /// The server certificate and key of `https` client URLs, and the CA that signed them.
    package struct TLSFiles: Sendable {
        package let certificate: String
        package let key: String
        package let authority: String
    }
    package let tls: TLSFiles?

    /// The members, in order (their ports chosen anew if a first start lost one to another process: see `init`).
    package var members: [Member] { memberList.withLock { $0 } }
    private let memberList: Mutex<[Member]>
    /// The members' data and logs. In memory where the machine has a `tmpfs` at /dev/shm: every raft commit is
    /// an `fsync` of the member's log, which on a disk made a cluster under a test's steady writes spend most of
    /// its time waiting for the disk, and restarted members long in catching up. What the tests kill is a
    /// process, never the machine, so what a member wrote survives in memory as it would on disk.
    private let directory = EtcdCluster.memoryBacked.map { TemporaryDirectory(under: $0) } ?? TemporaryDirectory()

    private static let memoryBacked: String? = {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let isMemory = mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().prefix(2) == ["/dev/shm", "tmpfs"] }
        return isMemory && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : nil
    }()
    private let processes = Mutex<[Int: Process]>([:])
    private let reaper = Mutex<Process?>(nil)
    private let extraArguments: [String]
    private let launchers: [[String]]

    /// The client URLs of every member, in member order.
    package var endpoints: [URL] { members.map(\.clientURL) }

    /// The client URLs with member `index` first: a process "attached" to that member.
    package func endpoints(attachedTo index: Int) -> [URL] {
        (0..<members.count).map { members[(index + $0) % members.count].clientURL }
    }

    /// Starts the cluster and returns once every member serves requests.
    /// - Parameter arguments: More `etcd` flags for every member (for example `--max-request-bytes`).
    /// - Parameter tls: Serve the client URLs over `https` with these files.
    ///   `skipReadiness`: return once started, without waiting for a read to succeed (for a member no client can verify).
    /// - Parameter hosts: The address of each member (default 127.0.0.1 for all), and `launchers` the command
    ///   that starts a program where that address is (`ip netns exec NAME` for a member in a network namespace
    ///   of its own: `harness check` cuts such a member off from the others).
    package init(size: Int = 3, arguments: [String] = [], tls: TLSFiles? = nil, skipReadiness: Bool = false,
                 hosts: [String]? = nil, launchers: [[String]]? = nil) throws {
        guard Self.binary != nil else { throw EtcdClusterError.notInstalled }
        func newMembers() throws -> [Member] {
            let ports = try freePorts(2 * size)
            return (0..<size).map {
                var member = Member(name: "m\($0)", clientPort: ports[2 * $0], peerPort: ports[2 * $0 + 1], secure: tls != nil)
                if let hosts { member.host = hosts[$0] }
                return member
            }
        }
        memberList = Mutex(try newMembers())
        self.launchers = launchers ?? Array(repeating: [], count: size)
        self.tls = tls
        extraArguments = arguments + (tls.map { ["--cert-file", $0.certificate, "--key-file", $0.key] } ?? [])
        try startReaper()
        // The free ports are released before the members bind them, so another process (another test's cluster)
        // may take one meanwhile: that member then fails to start, and a server of another cluster may answer at
        // its address. (A test's reader attached to such a member waited for ever for writes it could not see.)
        // Such a start is undone and made again on new ports, up to three times.
        var attempt = 1
        while true {
            for index in members.indices { try start(index) }
            if skipReadiness { return }
            do {
                for index in members.indices { try waitUntilServing(index) }
                try checkMembersAreOneCluster()
                return
            } catch EtcdClusterError.lostPort(let member, let reason) {
                guard attempt < 3 else { throw EtcdClusterError.notReady(member, reason) }
                attempt += 1
                for index in members.indices { kill(index) }
                for member in members { try? FileManager.default.removeItem(atPath: directory.appending(member.name)) }
                let renewed = try newMembers()
                memberList.withLock { $0 = renewed }
            }
        }
    }

    private static let identityPrefix = "/rvs-prefs-test-cluster/"

    /// Throws ``EtcdClusterError/lostPort(_:_:)`` unless a value written through the first member alone is read
    /// through each other member alone: every member answering at its address is one of this cluster's.
    private func checkMembersAreOneCluster() throws(EtcdClusterError) {
        guard members.count > 1 else { return }  // one member: nothing to compare it with
        let token = PropertyListValue.string(UUID().uuidString)
        do {
            // Outside the library's prefix, where listing the cluster's domains finds nothing of it.
            let first = try EtcdDomainStorage(endpoints: [members[0].clientURL], name: "cluster-identity", prefix: Self.identityPrefix,
                                              timeout: .seconds(5), caFile: tls?.authority)
            try first.modify(repairing: .failIfUnreadable) { $0["token"] = token }
        } catch {
            throw .notReady(members[0].name, "a write through it failed: \(error)")
        }
        for member in members.dropFirst() {
            let read = try? EtcdDomainStorage(endpoints: [member.clientURL], name: "cluster-identity", prefix: Self.identityPrefix,
                                              timeout: .seconds(5), caFile: tls?.authority).snapshot().contents["token"]
            if read != token {
                throw .lostPort(member.name, "another server answers at \(member.clientURL) (\(String(describing: read)) read, not this cluster's \(token))")
            }
        }
    }

    /// Returns once member `index` answers a linearizable read (so it is part of a cluster with a leader).
    package func waitUntilServing(_ index: Int, within limit: Duration = .seconds(30)) throws {
        let probe = try EtcdDomainStorage(endpoints: [members[index].clientURL], name: "readiness", timeout: .seconds(1),
                                          caFile: tls?.authority)
        let giveUp = ContinuousClock.now + limit
        while true {
            // A member that could not bind its ports exits at once.
            if let process = processes.withLock({ $0[index] }), !process.isRunning {
                let log = (try? String(contentsOfFile: directory.appending(members[index].name + ".log"), encoding: .utf8)) ?? ""
                let reason = "its process exited: " + (log.split(separator: "\n").last.map(String.init) ?? "no log")
                throw log.contains("address already in use") ? EtcdClusterError.lostPort(members[index].name, reason)
                    : EtcdClusterError.notReady(members[index].name, reason)
            }
            do {
                _ = try probe.snapshot()
                return
            } catch {
                // With authentication enabled the probe is refused, which also shows the member serves.
                if "\(error)".contains("user name is empty") || "\(error)".contains("permission denied") { return }
                if ContinuousClock.now > giveUp { throw EtcdClusterError.notReady(members[index].name, "\(error)") }
                // A member that refuses at once (still starting) is asked again shortly.
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    deinit { stop() }

    /// One three-member cluster for the tests that neither stop, pause nor reconfigure members, nor depend on
    /// the cluster's whole contents: started by the first that asks, stopped and removed when the test
    /// process exits. Each such test keeps to domains of unique names, so they share it safely, and the run
    /// spares a cluster start (about a second and a half of waiting) for each.
    package static func shared() throws -> EtcdCluster {
        try sharedCluster.get()
    }

    private static let sharedCluster: Result<EtcdCluster, EtcdClusterError> = {
        let result: Result<EtcdCluster, EtcdClusterError>
        do {
            result = .success(try EtcdCluster())
        } catch let error as EtcdClusterError {
            result = .failure(error)
        } catch {
            result = .failure(.notReady("shared cluster", "\(error)"))
        }
        atexit { EtcdCluster.stopSharedCluster() }
        return result
    }()

    private static func stopSharedCluster() {
        guard case .success(let cluster) = sharedCluster else { return }
        cluster.stop()
        try? FileManager.default.removeItem(atPath: cluster.directory.path)
    }

    private func arguments(for member: Member) -> [String] {
        let cluster = members.map { "\($0.name)=http://\($0.host):\($0.peerPort)" }.joined(separator: ",")
        return [
            "--name", member.name,
            "--data-dir", directory.appending(member.name),
            "--listen-client-urls", member.clientURL.absoluteString,
            "--advertise-client-urls", member.clientURL.absoluteString,
            "--listen-peer-urls", "http://\(member.host):\(member.peerPort)",
            "--initial-advertise-peer-urls", "http://\(member.host):\(member.peerPort)",
            "--initial-cluster", cluster,
            "--initial-cluster-token", "rvs-prefs-test",
            "--initial-cluster-state", "new",
            // Quick elections, so that a killed leader is replaced within a test's timeout.
            "--heartbeat-interval", "50", "--election-timeout", "500",
            // The least bcrypt cost: etcd hashes the password on every authenticate call, and at the default cost
            // a loaded machine took over 5 s for one user's setup.
            "--bcrypt-cost", "4",
            "--logger", "zap", "--log-outputs", directory.appending(member.name + ".log"),
        ] + extraArguments
    }

    /// Starts (or restarts, over its data) member `index`.
    package func start(_ index: Int) throws {
        let process = Process()
        // A launcher execs the binary in the same process (`ip netns exec`), so the process id stays the member's.
        let command = launchers[index] + [Self.binary!] + arguments(for: members[index])
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.withLock { $0[index] = process }
        recordMemberIdentifiers()
    }

    /// A shell that outlives the test process only to stop the members and remove their data: it checks twice
    /// a second that the test process lives. So a crashed or killed test run leaves no etcd behind, though no
    /// `deinit` and no `atexit` handler ran. Stopped with the cluster.
    private func startReaper() throws {
        let script = [
            "while kill -0 \"$1\" 2>/dev/null; do sleep 0.5; done",
            "[ -f \"$2/members.pid\" ] && kill -9 $(cat \"$2/members.pid\") 2>/dev/null",
            "rm -rf \"$2\"",
        ].joined(separator: "\n")
        let reaper = Process()
        reaper.executableURL = URL(fileURLWithPath: "/bin/sh")
        reaper.arguments = ["-c", script, "etcd-reaper", String(getpid()), directory.path]
        reaper.standardInput = FileHandle.nullDevice
        reaper.standardOutput = FileHandle.nullDevice
        reaper.standardError = FileHandle.nullDevice
        try reaper.run()
        self.reaper.withLock { $0 = reaper }
    }

    /// Writes the running members' process ids where the reaper finds them.
    private func recordMemberIdentifiers() {
        let identifiers = processes.withLock { $0.values.map { String($0.processIdentifier) } }
        try? identifiers.joined(separator: " ").write(toFile: directory.appending("members.pid"), atomically: true, encoding: .utf8)
    }

    /// Kills member `index` with `signal` (SIGKILL: it dies mid-request) and waits for it to be gone.
    package func kill(_ index: Int, signal: Int32 = SIGKILL) {
        guard let process = processes.withLock({ $0.removeValue(forKey: index) }) else { return }
        Glibc.kill(process.processIdentifier, signal)
        process.waitUntilExit()
        recordMemberIdentifiers()
    }

    /// Stops (`SIGSTOP`) or continues (`SIGCONT`) member `index`: a member that holds its connections open but
    /// answers nothing, like a machine that hangs.
    package func pause(_ index: Int, _ paused: Bool = true) {
        if let pid = processIdentifier(index) { Glibc.kill(pid, paused ? SIGSTOP : SIGCONT) }
    }

    /// The process id of member `index`, while it runs.
    package func processIdentifier(_ index: Int) -> Int32? { processes.withLock { $0[index]?.processIdentifier } }

    /// Kills every member and removes the data (also done when the value is released).
    package func stop() {
        for index in members.indices {
            pause(index, false)
            kill(index)
        }
        if let reaper = reaper.withLock({ current in defer { current = nil }; return current }) {
            Glibc.kill(reaper.processIdentifier, SIGKILL)
            reaper.waitUntilExit()
        }
    }
}

package enum EtcdClusterError: Error, CustomStringConvertible {
    case notInstalled
    case noFreePort(String)
    case notReady(String, String)
    /// A member lost a port chosen for it to another process (see `EtcdCluster.init`).
    case lostPort(String, String)

    package var description: String {
        switch self {
        case .notInstalled:
            let environment = ProcessInfo.processInfo.environment
            return "etcd is not installed: install Debian's etcd-server (apt-get install etcd-server); looked at "
                + "RVS_PREFS_ETCD=\(environment["RVS_PREFS_ETCD"] ?? "(unset)"), PATH=\(environment["PATH"] ?? "(unset)"), "
                + "/usr/bin/etcd and /usr/local/bin/etcd"
        case .noFreePort(let reason): return "no free loopback port: \(reason)"
        case .notReady(let member, let reason): return "etcd member \(member) did not start serving: \(reason)"
        case .lostPort(let member, let reason): return "etcd member \(member) lost its port to another process: \(reason)"
        }
    }
}

/// Ports nobody listens on: each bound to 127.0.0.1 with port 0 (the kernel picks), all held open together so
/// that no two are the same, then released for etcd to take.
private func freePorts(_ count: Int) throws -> [Int] {
    var sockets: [Int32] = []
    defer { sockets.forEach { _ = close($0) } }
    var ports: [Int] = []
    for _ in 0..<count {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EtcdClusterError.noFreePort(String(cString: strerror(errno))) }
        sockets.append(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else { throw EtcdClusterError.noFreePort(String(cString: strerror(errno))) }
        ports.append(Int(UInt16(bigEndian: address.sin_port)))
    }
    return ports
}
