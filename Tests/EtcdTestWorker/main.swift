// A child process for the PrefsEtcd multi-process tests. Each command works on the etcd domain NAME through the
// endpoints ENDPOINTS (comma-separated client URLs, the member it is attached to first) and reports on standard
// output, so the parent waits on pipes and exit statuses, never on sleeps.
//
//   EtcdTestWorker increment ENDPOINTS NAME STORAGE_KEY COUNT
//       COUNT atomic increments of the entry `count` through the base class's `modify`; prints "progress N" after
//       every 25th and "ok" at the end.
//   EtcdTestWorker tally-increments ENDPOINTS NAME STORAGE_KEY TIMEOUT_SECONDS
//       modify increments of the entry `count` (with that timeout) until standard input says "stop" or ends;
//       prints "ack N" after every 20th acknowledged increment, "failed unknown" or "failed unchanged" for each
//       failure (outcomeUnknown, or any other error: nothing was changed), and at the end
//       "tally ACKNOWLEDGED UNKNOWN UNCHANGED", then the first message of each kind of failure. Between two
//       increments it rests 5 ms: a few hundred a second keep increments in flight at every instant of a fault,
//       where a loop flat out made the cluster's log grow by tens of thousands of entries a round, and members
//       restarted after a fault took most of the test catching up.
//   EtcdTestWorker write-entries ENDPOINTS NAME STORAGE_KEY WORKER WORKERS COUNT
//       COUNT subscript writes of entries wWORKER-0 … wWORKER-(COUNT-1) = index, each retried (up to 5 times) when
//       it failed with storageUnreachable, which changed nothing; prints "ok".
//   EtcdTestWorker watch ENDPOINTS NAME STORAGE_KEY FINAL
//       Watches external changes on an instance, prints "ready", then waits for the entry `value` to be FINAL,
//       reading only when a change is delivered; prints "final VALUE deliveries N".
//   EtcdTestWorker serve-writes ENDPOINTS NAME STORAGE_KEY
//       Reads lines "N" and for each sets the entry `value` to N; prints "done N".
//   EtcdTestWorker read-peak ENDPOINTS NAME STORAGE_KEY
//       One snapshot of the domain; prints "error …" or "read", then "peak KB", the process's peak resident
//       memory (VmHWM), for a test of what a hostile response can make a read hold.
import Foundation
import PrefsEtcd
import RVS_PersistentPrefs
import Synchronization

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EtcdTestWorker: \(message)\n".utf8))
    exit(2)
}

/// Allows the names the commands write, so that the workers exercise storage rather than validation.
final class WorkerPreferences: RVS_PersistentPrefs {
    nonisolated(unsafe) static var suite: DefaultsSuite?
    nonisolated(unsafe) static var allowed: [String] = []
    override var keys: [String] { Self.allowed }
    override var userDefaults: DefaultsSuite? { Self.suite }
}

let arguments = CommandLine.arguments
guard arguments.count >= 5 else { fail("usage: EtcdTestWorker COMMAND ENDPOINTS NAME STORAGE_KEY …") }
let (command, endpointList, domainName, storageKey) = (arguments[1], arguments[2], arguments[3], arguments[4])
let endpoints = endpointList.split(separator: ",").compactMap { URL(string: String($0)) }
do {
    let domain = try EtcdDomainStorage(endpoints: endpoints, name: domainName)
    WorkerPreferences.suite = DefaultsSuite(persistentDomain: domain, arguments: [])
} catch {
    fail("\(error)")
}

switch command {
case "read-peak":
    do {
        // 60 s: the server sends 144 MiB, which on a loaded machine took longer than 15 s; the read must end
        // refused for its size (what is checked is the memory it held), not for its time.
        _ = try EtcdDomainStorage(endpoints: endpoints, name: domainName, timeout: .seconds(60)).snapshot()
        say("read")
    } catch {
        say("error \(error)")
    }
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?.split(separator: " ").dropFirst().first ?? "?"
    say("peak \(peak)")

case "increment":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("increment needs COUNT") }
    // 15 s per increment, not the default 5: an increment whose answer is lost to the timeout has an unknown
    // outcome, which the worker cannot retry, and on a machine loaded past 20 a member's answer took longer than
    // 5 s (what this worker checks is that each increment is applied once, not how soon).
    do {
        let domain = try EtcdDomainStorage(endpoints: endpoints, name: domainName, timeout: .seconds(15))
        WorkerPreferences.suite = DefaultsSuite(persistentDomain: domain, arguments: [])
    } catch {
        fail("\(error)")
    }
    WorkerPreferences.allowed = ["count"]
    let prefs = WorkerPreferences(key: storageKey)
    for round in 0..<count {
        // An increment that gave up within its timeout (a member killed, a busy machine) changed nothing, say
        // the docs of storageUnreachable: retrying it is what a caller may do, a few times. (An outcome unknown
        // is not retried: the increment may have been applied.)
        for attempt in 1... {
            prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
            guard let error = prefs.lastError else { break }
            guard case .storageUnreachable = error, attempt < 5 else { fail("increment \(round): \(error)") }
        }
        if (round + 1) % 25 == 0 && round + 1 < count { say("progress \(round + 1)") }
    }
    say("ok")

case "tally-increments":
    guard arguments.count == 6, let seconds = Double(arguments[5]) else { fail("tally-increments needs TIMEOUT_SECONDS") }
    WorkerPreferences.allowed = ["count"]
    do {
        let domain = try EtcdDomainStorage(endpoints: endpoints, name: domainName, timeout: .milliseconds(Int(seconds * 1000)))
        WorkerPreferences.suite = DefaultsSuite(persistentDomain: domain, arguments: [])
    } catch {
        fail("\(error)")
    }
    let stopped = Atomic<Bool>(false)
    let reader = Thread {
        while let line = readLine(), line != "stop" {}
        stopped.store(true, ordering: .releasing)
    }
    reader.start()
    let prefs = WorkerPreferences(key: storageKey)
    var (acknowledged, unknown, unchanged) = (0, 0, 0)
    var examples: [String: String] = [:]
    while !stopped.load(ordering: .acquiring) {
        usleep(5_000)
        prefs.modify("count") { ($0 as? Int ?? 0) + 1 }
        switch prefs.lastError {
        case nil:
            acknowledged += 1
            if acknowledged % 20 == 0 { say("ack \(acknowledged)") }
        case .outcomeUnknown?:
            unknown += 1
            examples["unknown"] = examples["unknown"] ?? "\(prefs.lastError!)"
            say("failed unknown")
        case let error?:
            unchanged += 1
            examples["unchanged"] = examples["unchanged"] ?? "\(error)"
            say("failed unchanged")
        }
    }
    say("tally \(acknowledged) \(unknown) \(unchanged)")
    for (kind, message) in examples.sorted(by: { $0.key < $1.key }) { say("example \(kind): \(message)") }

case "write-entries":
    guard arguments.count == 8, let worker = Int(arguments[5]), let workers = Int(arguments[6]), let count = Int(arguments[7]) else {
        fail("write-entries needs WORKER WORKERS COUNT")
    }
    WorkerPreferences.allowed = (0..<workers).flatMap { other in (0..<count).map { "w\(other)-\($0)" } }
    let prefs = WorkerPreferences(key: storageKey)
    for index in 0..<count {
        // A write that gave up within its timeout (eight writers racing for one key on a busy machine) changed
        // nothing, say the docs of storageUnreachable: retrying it is what a caller may do, a few times.
        for attempt in 1... {
            prefs["w\(worker)-\(index)"] = index
            guard let error = prefs.lastError else { break }
            // An outcome unknown may be retried too: setting an entry to the same value again changes nothing more.
            switch error {
            case .storageUnreachable, .outcomeUnknown: if attempt < 5 { continue }
            default: break
            }
            fail("write w\(worker)-\(index): \(error)")
        }
    }
    say("ok")

case "watch":
    guard arguments.count == 6, let final = Int(arguments[5]) else { fail("watch needs FINAL") }
    WorkerPreferences.allowed = ["value"]
    let prefs = WorkerPreferences(key: storageKey)
    let changes = prefs.changes
    prefs.watchesExternalChanges = true
    say("ready")
    var deliveries = 0
    var current = prefs["value"] as? Int
    if current != final {
        for await change in changes {
            deliveries += 1
            current = change.values["value"] as? Int
            if current == final { break }
        }
    }
    say("final \(current.map(String.init) ?? "none") deliveries \(deliveries)")

case "serve-writes":
    WorkerPreferences.allowed = ["value"]
    let prefs = WorkerPreferences(key: storageKey)
    while let line = readLine(), let value = Int(line) {
        prefs["value"] = value
        if let error = prefs.lastError { fail("write \(value): \(error)") }
        say("done \(value)")
    }

default:
    fail("unknown command \(command)")
}
