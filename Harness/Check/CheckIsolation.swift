// The namespaces of a `harness check` run. Its bind mounts and its network (a namespace per etcd member, and the
// rules that cut one off) are made in a mount and a network namespace of the run's own, so that the kernel
// removes every one of them when the run's last process ends, however it ends (finished, failed, interrupted,
// killed with SIGKILL): nothing a run does to mounts or routes can outlive it or reach the rest of the machine.

import Foundation
import Glibc
import PrefsTool

/// Runs `harness check` again inside new mount and network namespaces, where the machine allows it.
enum CheckIsolation {
    /// Set in the environment of the run made inside the namespaces.
    static let variable = "RVS_PREFS_CHECK_ISOLATED"

    /// Whether this process is the run inside its own namespaces.
    static var isInside: Bool { ProcessInfo.processInfo.environment[variable] == "1" }

    /// Why the run cannot have namespaces of its own here (`nil` when it can): only root may make them, and
    /// `unshare` (util-linux) must be there and succeed.
    static func refusal() -> String? {
        guard geteuid() == 0 else { return "not root" }
        guard let unshare = findProgram("unshare") else { return "no unshare program" }
        let status = runQuietly(unshare, ["--mount", "--propagation", "private", "--net", "--", "/bin/true"])
        return status == 0 ? nil : "unshare --mount --net failed (exit \(status))"
    }

    /// Runs this command again, the same arguments, inside new mount (private propagation) and network
    /// namespaces, with `seed` (the one given, or the one this process drew); returns its exit status. Its
    /// standard input, output and error are this process's.
    static func runInside(seed: UInt64) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: findProgram("unshare") ?? "/usr/bin/unshare")
        var arguments = Array(CommandLine.arguments.dropFirst())
        if !arguments.contains("--seed") { arguments += ["--seed", "\(seed)"] }
        // The namespace's loopback device is brought up before the command starts: Foundation makes a loopback
        // socket pair for CFSocket (and so for Process) the first time it is used, and without one no child's
        // end is ever noticed.
        guard let ip = findProgram("ip") else { throw HarnessError.failure("no ip program (iproute2)") }
        process.arguments = ["--mount", "--propagation", "private", "--net", "--", "/bin/sh", "-c", "\"$0\" link set lo up && exec \"$@\"",
                             ip, HarnessChild.executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = "1"
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// Inside: the run ends when the process that started it ends (it gets SIGTERM), so an interrupted outer
    /// command never leaves the inner one running.
    static func prepareInside() throws {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") {
            _ = unsafeBitCast(symbol, to: Prctl.self)(1 /* PR_SET_PDEATHSIG */, UInt(SIGTERM), 0, 0, 0)
        }
        // The parent may have gone before the request was made.
        if getppid() == 1 { exit(143) }
    }

    /// The full path of `name` on PATH (or in the usual system directories), if any.
    static func findProgram(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Runs `program ARGUMENTS` with its output discarded; its exit status (-1 when it could not start).
    @discardableResult
    static func runQuietly(_ program: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : -1
    }

    /// Runs `ip ARGUMENTS`, throwing with its error output when it fails.
    static func runIP(_ arguments: [String]) throws {
        guard let ip = findProgram("ip") else { throw HarnessError.failure("no ip program (iproute2)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw HarnessError.failure("ip \(arguments.joined(separator: " ")): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// mount(2): `flags` as the kernel takes them (MS_BIND is 4096).
    static func mount(_ source: String, _ target: String, type: String? = nil, flags: UInt) -> Bool {
        typealias Mount = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>?, UInt, UnsafeRawPointer?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mount") else { return false }
        let call = unsafeBitCast(symbol, to: Mount.self)
        if let type { return type.withCString { call(source, target, $0, flags, nil) == 0 } }
        return call(source, target, nil, flags, nil) == 0
    }

    /// umount2(2) with MNT_DETACH: the path is uncovered at once; descriptors open under it keep working.
    static func unmountLazily(_ target: String) -> Bool {
        typealias Unmount = @convention(c) (UnsafePointer<CChar>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "umount2") else { return false }
        return unsafeBitCast(symbol, to: Unmount.self)(target, 2 /* MNT_DETACH */) == 0
    }
}

/// The network of an etcd check: each member in a network namespace of its own, joined to the run's namespace
/// by a veth pair (the run's end 10.77.M.1, the member's 10.77.M.2), the run's namespace routing between
/// them. Workers and the coordinator stay in the run's namespace and so reach every member directly; peer
/// traffic between two members passes through the run's namespace, where a blackhole routing rule for each
/// direction cuts one member off from the others without cutting it off from its clients.
final class CheckNetwork {
    /// The address each member listens on.
    let hosts: [String]
    /// The command that starts a program inside each member's namespace (`ip netns exec NAME`).
    let launchers: [[String]]
    private let names: [String]
    private var rules: [[String]] = []

    /// Makes the namespaces and links of `members` members. Only inside the run's own namespaces: the
    /// namespace names are kept on a tmpfs mounted over /run/netns in the run's mount namespace, so that
    /// none is seen, or left behind, outside.
    init(members: Int) throws {
        guard CheckIsolation.isInside else { throw HarnessError.failure("not inside the run's own namespaces") }
        mkdir("/run/netns", 0o755)
        guard CheckIsolation.mount("tmpfs", "/run/netns", type: "tmpfs", flags: 0) else {
            throw HarnessError.failure("cannot mount a tmpfs on /run/netns: \(String(cString: strerror(errno)))")
        }
        guard let ip = CheckIsolation.findProgram("ip") else { throw HarnessError.failure("no ip program (iproute2)") }
        names = (0..<members).map { "rvs-check-m\($0)" }
        hosts = (0..<members).map { "10.77.\($0).2" }
        launchers = names.map { [ip, "netns", "exec", $0] }
        let forwarding = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC)
        let written = forwarding >= 0 ? write(forwarding, "1\n", 2) : -1
        if forwarding >= 0 { close(forwarding) }
        guard written == 2 else {
            throw HarnessError.failure("cannot turn on forwarding in the run's network namespace")
        }
        for (member, name) in names.enumerated() {
            let outside = "rvs-check-h\(member)"
            try CheckIsolation.runIP(["netns", "add", name])
            try CheckIsolation.runIP(["link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", name])
            try CheckIsolation.runIP(["addr", "add", "10.77.\(member).1/24", "dev", outside])
            try CheckIsolation.runIP(["link", "set", outside, "up"])
            try CheckIsolation.runIP(["-n", name, "link", "set", "lo", "up"])
            try CheckIsolation.runIP(["-n", name, "addr", "add", "10.77.\(member).2/24", "dev", "eth0"])
            try CheckIsolation.runIP(["-n", name, "link", "set", "eth0", "up"])
            try CheckIsolation.runIP(["-n", name, "route", "add", "default", "via", "10.77.\(member).1"])
        }
    }

    /// Cuts member `member` off from every other: packets between its address and theirs are dropped, both
    /// ways, where the run's namespace forwards them.
    func cut(_ member: Int) throws {
        for other in hosts.indices where other != member {
            for (from, to) in [(hosts[other], hosts[member]), (hosts[member], hosts[other])] {
                let rule = ["from", from + "/32", "to", to + "/32", "blackhole", "priority", "100"]
                try CheckIsolation.runIP(["rule", "add"] + rule)
                rules.append(rule)
            }
        }
    }

    /// Removes every rule `cut` added: the members reach each other again.
    func heal() {
        for rule in rules { try? CheckIsolation.runIP(["rule", "del"] + rule) }
        rules.removeAll()
    }

    /// For each probe, whether a TCP connection from member `from`'s namespace (or from the run's own, when
    /// `nil`) to `host`:`port` is made within 2 s (bash's /dev/tcp under `timeout`: a connection only, no
    /// request, so a slow answer cannot pass for a cut). The probes run at once.
    func reachable(_ probes: [(from: Int?, host: String, port: Int)]) -> [Bool] {
        guard let timeout = CheckIsolation.findProgram("timeout"), let bash = CheckIsolation.findProgram("bash") else {
            return probes.map { _ in false }
        }
        let processes = probes.map { probe -> Process? in
            let command = (probe.from.map { launchers[$0] } ?? []) + [timeout, "2", bash, "-c", ": <>/dev/tcp/\(probe.host)/\(probe.port)"]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return (try? process.run()) != nil ? process : nil
        }
        return processes.map { process in
            guard let process else { return false }
            process.waitUntilExit()
            return process.terminationReason == .exit && process.terminationStatus == 0
        }
    }
}
