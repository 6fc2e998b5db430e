// A child process for the multi-process tests. Each command works on the domain `<directory>/<domain>.plist`
// and reports on standard output, so the parent waits on pipes and exit statuses, never on sleeps.
//
//   TestWorker default-instance DIR DOMAIN STORAGE_KEY
//       DIR and DOMAIN are ignored: through an instance over the default suite (the environment decides),
//       a read of STORAGE_KEY, then a write of its entry "value"; prints "read-error E", "write-error E"
//       (E is `none` or the error's description) and "path P", the application domain's file or `none`.
//   TestWorker administered-service DIR DOMAIN STORAGE_KEY
//       DIR and DOMAIN are ignored: a service's settings over the default suite (the environment and the user
//       database decide), with entries appearance, volume and launchCount. Reads the collection and prints
//       "read-error E", "values K=V,…" (sorted) and "read-warnings W" (descriptions joined by " | ", or
//       `none`); writes launchCount = 1 and prints "write-error E"; then "path P", the application domain's
//       file or `none`.
//   TestWorker update-entries DIR DOMAIN STORAGE_KEY WORKER WORKERS COUNT
//       COUNT single-entry updates through the base class's subscript: entries wWORKER-0 … wWORKER-(COUNT-1);
//       the names of all WORKERS workers are allowed.
//   TestWorker rewrite-collection DIR DOMAIN STORAGE_KEY COUNT
//       COUNT whole-collection assignments of `values` under its own storage key; the last holds round COUNT-1.
//   TestWorker write-forever DIR DOMAIN STORAGE_KEY
//       Rewrites a growing collection until killed; prints "ready" after its first write.
//   TestWorker read-repeatedly DIR DOMAIN STORAGE_KEY COUNT
//       Reads the domain COUNT times and prints "rss-growth-kb N": how much its resident memory grew.
//   TestWorker serve DIR DOMAIN STORAGE_KEY
//       Reads lines "N" from standard input; for each writes `{value: N + 500000}` and then `{value: N}` under
//       STORAGE_KEY (two versions of equal size, so that the second may reuse the inode of the version a
//       reader saw before) and prints "done N".
//   TestWorker soak DIR DOMAIN STORAGE_KEY SECONDS WORKER WORKERS
//       For SECONDS, mixed operations on the collection STORAGE_KEY shared by WORKERS workers: subscript writes
//       of entry wWORKER-(i % 16) = i for i = 0, 1, 2, …; reads of the whole collection and of single entries,
//       checking that this worker's entries hold what it last wrote and that no other worker's entry ever
//       goes backwards; and every 8th step a whole-collection assignment of its own collection
//       STORAGE_KEY-wWORKER = {round: n}. Prints "soak worker=… writes=… reads=… rounds=…" followed by memory
//       figures in kB: VmHWM at start, VmRSS and VmHWM after warm-up (a fifth of the time, at least 2 s),
//       and at the end.
//   TestWorker userdefaults-set DIR DOMAIN KEY
//       Through the suite's UserDefaults API, `set(_:forKey:)` of one value of each property-list type under
//       KEY-string, KEY-integer, KEY-real, KEY-bool, KEY-date, KEY-data, KEY-array and KEY-dictionary, then of an
//       NSNull under KEY-null, which must be refused. Prints "ok", or fails naming what went wrong.
//   TestWorker userdefaults-get DIR DOMAIN KEY
//       Reads KEY through the suite's UserDefaults API and prints one line: "string=… integer=… double=…
//       bool=… object=present|nil", with "nil" for an absent string, and the lastError when there is one.
//   TestWorker cast-entries DIR DOMAIN STORAGE_KEY
//       Reads the collection through the base class and, for every entry (sorted by name) and every cast of
//       `castNames`, prints "NAME<TAB>CAST<TAB>RESULT": what `as?` gives, "nil" or the value (containers as
//       elements joined by ",", dictionaries as sorted "key=value"), so the parent checks casts made in a
//       process that did not write the values.
//   TestWorker increment DIR DOMAIN STORAGE_KEY COUNT typed|untyped
//       COUNT atomic increments of the entry `launchCount`: `modify(\.$launchCount) { $0 += 1 }` on a typed entry,
//       or `modify("launchCount") { ($0 as? Int ?? 0) + 1 }`; prints "ok".
//   TestWorker write-typed DIR DOMAIN STORAGE_KEY WIDTH APPEARANCE
//       Sets the typed entries `window` (a Codable struct: x 10, y 20, width WIDTH, height 600) and `appearance`
//       (a String enum) and prints "ok".
//   TestWorker read-typed DIR DOMAIN STORAGE_KEY
//       Reads the typed entries and prints "window X Y WIDTH HEIGHT appearance NAME error ERROR", ERROR being
//       `none` or the entry that `lastError` names.
//   TestWorker serve-entries DIR DOMAIN STORAGE_KEY
//       Reads lines "NAME VALUE"; for each sets entry NAME to the integer VALUE through the base class's
//       subscript and prints "done NAME VALUE".
//   TestWorker burst-entry DIR DOMAIN STORAGE_KEY COUNT
//       Sets entry "count" to 0, 1, …, COUNT-1 as fast as it can through the subscript; prints "ok".
//   TestWorker flood DIR DOMAIN STORAGE_KEY COUNT FLOOD_DIR
//       Changes the times of two files in FLOOD_DIR alternately, COUNT times in all (COUNT inotify events
//       for a process watching FLOOD_DIR), then writes {value: 2} under STORAGE_KEY and prints "done".
//   TestWorker overflow-read DIR DOMAIN STORAGE_KEY COUNT FLOOD_DIR
//       Writes {value: 1} under STORAGE_KEY, watches the domain, reads it, then holds the watch hub's lock
//       while a `flood` child (COUNT events, then {value: 2}) runs to its end, so that the kernel's queue
//       overflows and the domain's own event is lost. Prints "value=N" from the read that follows.
//       Its own process, because an overflow makes every watched domain of the process re-read once.
//   TestWorker watch-cycles DIR DOMAIN STORAGE_KEY COUNT
//       COUNT start/stop cycles of a watch on the domain file, alternating a watch on a directory that
//       exists and one that does not; prints "cycles=COUNT fds_before=… threads_before=… fds_during=…
//       threads_during=… fds_after=… threads_after=…" (entries of /proc/self/fd and /proc/self/task).
//   TestWorker watch-many DIR DOMAIN STORAGE_KEY COUNT
//       COUNT instances watch the collection, each with an observer of `\.values`; prints "ready", waits
//       until every observer has heard one change made elsewhere (by the parent), then prints
//       "told=COUNT threads_before=… threads_peak=… threads_after=…" (entries of /proc/self/task before the
//       change, the most seen while it was delivered, and after).
//   TestWorker migrate DIR DOMAIN STORAGE_KEY
//       Prints "ready", waits for "go", then opens a collection of schema version 2 (see VersionedCollection.swift)
//       and prints "migrated" or "current", then "volume=… migrations=…".
import Foundation
import RVS_PersistentPrefs
import Synchronization
import PrefsPropertyList
#if DEBUG
@testable import PrefsStorage  // The watch engine's mutex, for `overflow-read`.
#else
import PrefsStorage
#endif

/// Writes one line to standard output at once (unbuffered), so the parent sees it right away.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Allows every entry name, so that the workers exercise storage rather than validation.
final class OpenPreferences: RVS_PersistentPrefs {
    nonisolated(unsafe) static var suite: DefaultsSuite?
    nonisolated(unsafe) static var allowed: [String] = []
    override var keys: [String] { Self.allowed }
    override var userDefaults: DefaultsSuite? { Self.suite }
}

/// The typed entries the multi-process tests of issue 13 share (the test target declares the same ones).
enum WorkerAppearance: String, Codable, Sendable { case system, light, dark }
struct WorkerFrame: Codable, Equatable, Sendable { var x = 0.0, y = 0.0, width = 800.0, height = 600.0 }

final class TypedWorkerPreferences: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("window") var window = WorkerFrame()
    @Entry("appearance") var appearance = WorkerAppearance.system
    override var userDefaults: DefaultsSuite? { OpenPreferences.suite }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TestWorker: \(message)\n".utf8))
    exit(2)
}

//   TestWorker serve-links DIR DOMAIN STORAGE_KEY
//       Reads command lines from standard input, writes `{value: N}` under STORAGE_KEY as each says, and prints
//       "done N" after each:
//         "hardlink N LINK": hard-links the domain file as LINK (in another directory), rewrites it in place
//           through LINK (truncated, then written), and removes LINK: a write no event in DIR tells of.
//         "retarget N LINK NEWDIR": makes NEWDIR with a domain file of its own, then retargets the symbolic
//           link LINK (a directory on the watched path) to NEWDIR, by renaming a new link over it.
//         "replace-target N TARGETDIR": writes the domain of the same name in TARGETDIR (a new file renamed
//           over the old there), the target of the domain file DIR/DOMAIN.plist, a symbolic link.
let arguments = CommandLine.arguments
guard arguments.count >= 5 else { fail("usage: TestWorker COMMAND DIR DOMAIN STORAGE_KEY …") }
let (command, directory, domainName, storageKey) = (arguments[1], arguments[2], arguments[3], arguments[4])
let domain: any DomainStorage
do {
    domain = try FileDomainStorage(directory: directory, name: domainName)
} catch {
    fail("\(error)")
}
OpenPreferences.suite = DefaultsSuite(persistentDomain: domain, arguments: [])

switch command {
case "default-instance":
    final class DefaultPrefs: RVS_PersistentPrefs {
        override var keys: [String] { ["value"] }
    }
    let prefs = DefaultPrefs(key: storageKey)
    say("read-error \(prefs.lastError.map { "\($0)" } ?? "none")")
    prefs["value"] = 1
    say("write-error \(prefs.lastError.map { "\($0)" } ?? "none")")
    say("path \((prefs.userDefaults?.persistentDomain as? FileDomainStorage)?.path ?? "none")")

case "administered-service":
    final class ServiceSettings: RVS_PersistentPrefs {
        override var keys: [String] { ["appearance", "volume", "launchCount"] }
    }
    let prefs = ServiceSettings(key: storageKey)
    let values = prefs.values
    say("read-error \(prefs.lastError.map { "\($0)" } ?? "none")")
    say("values " + values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ","))
    say("read-warnings " + (prefs.lastWarnings.isEmpty ? "none" : prefs.lastWarnings.map { "\($0)" }.joined(separator: " | ")))
    prefs["launchCount"] = 1
    say("write-error \(prefs.lastError.map { "\($0)" } ?? "none")")
    say("path \((prefs.userDefaults?.persistentDomain as? FileDomainStorage)?.path ?? "none")")

case "update-entries":
    guard arguments.count == 8, let worker = Int(arguments[5]), let workers = Int(arguments[6]), let count = Int(arguments[7]) else {
        fail("update-entries needs WORKER WORKERS COUNT")
    }
    OpenPreferences.allowed = (0..<workers).flatMap { other in (0..<count).map { "w\(other)-\($0)" } }
    let prefs = OpenPreferences(key: storageKey)
    for index in 0..<count {
        let name = "w\(worker)-\(index)"
        prefs[name] = index
        if let error = prefs.lastError { fail("update \(name): \(error)") }
    }
    say("ok")

case "rewrite-collection":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("rewrite-collection needs COUNT") }
    OpenPreferences.allowed = ["round", "writer"]
    let prefs = OpenPreferences(key: storageKey)
    for round in 0..<count {
        prefs.values = ["round": round, "writer": storageKey]
        if let error = prefs.lastError { fail("round \(round): \(error)") }
    }
    say("ok")

case "write-forever":
    var round = 0
    while true {
        do {
            try domain.modify(repairing: .failIfUnreadable) { contents in
                contents[storageKey] = .dictionary([
                    "round": .integer(round),
                    "padding": .string(String(repeating: "x", count: round % 4096)),
                ])
            }
        } catch {
            fail("round \(round): \(error)")
        }
        if round == 0 { say("ready") }
        round += 1
    }

case "serve":
    while let line = readLine() {
        guard let number = Int(line) else { fail("serve: bad line") }
        do {
            for value in [number + 500_000, number] {
                try domain.modify(repairing: .failIfUnreadable) { contents in
                    contents[storageKey] = .dictionary(["value": .integer(value)])
                }
            }
        } catch {
            fail("serve \(number): \(error)")
        }
        say("done \(number)")
    }

case "soak":
    guard arguments.count == 8, let seconds = Double(arguments[5]), let worker = Int(arguments[6]),
          let workers = Int(arguments[7]), (0..<workers).contains(worker) else {
        fail("soak needs SECONDS WORKER WORKERS")
    }
    soak(seconds: seconds, worker: worker, workers: workers)

case "read-repeatedly":
    // Reads the domain COUNT times after a warm-up of a thousand reads and reports how much its resident
    // memory grew meanwhile, in kB: "rss-growth-kb N". A process of its own, so no other test's
    // allocations are counted.
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("read-repeatedly needs COUNT") }
    for _ in 0..<1_000 { _ = try? domain.snapshot() }
    let before = memoryStatus("VmRSS")
    for _ in 0..<count { _ = try? domain.snapshot() }
    say("rss-growth-kb \(memoryStatus("VmRSS") - before)")

case "userdefaults-set":
    guard let defaults = OpenPreferences.suite else { fail("no suite") }
    let values: [String: Any] = [
        "string": "hello", "integer": 42, "real": 2.5, "bool": true, "date": Date(timeIntervalSince1970: 1_000_000_000.25),
        "data": Data([1, 2, 3]), "array": ["a", 1], "dictionary": ["n": 1, "s": "x"],
    ]
    for (suffix, value) in values {
        defaults.set(value, forKey: "\(storageKey)-\(suffix)")
        if let error = defaults.lastError { fail("userdefaults-set \(suffix): \(error)") }
    }
    defaults.set(NSNull(), forKey: "\(storageKey)-null")
    guard case .valuesNotPlistCompatible(["\(storageKey)-null"])? = defaults.lastError else {
        fail("userdefaults-set: NSNull was not refused: \(String(describing: defaults.lastError))")
    }
    say("ok")

case "userdefaults-get":
    guard let defaults = OpenPreferences.suite else { fail("no suite") }
    let string = defaults.string(forKey: storageKey) ?? "nil"
    let object = defaults.object(forKey: storageKey) == nil ? "nil" : "present"
    let line = "string=\(string) integer=\(defaults.integer(forKey: storageKey)) double=\(defaults.double(forKey: storageKey)) "
        + "bool=\(defaults.bool(forKey: storageKey)) object=\(object)"
    say(line + (defaults.lastError.map { " error=\($0)" } ?? ""))

case "cast-entries":
    guard arguments.count == 5 else { fail("cast-entries takes no more arguments") }
    let values = OpenPreferences(key: storageKey).values
    for name in values.keys.sorted() {
        for (cast, apply) in castTable() {
            say("\(name)\t\(cast)\t\(apply(values[name]!) ?? "nil")")
        }
    }

case "increment":
    guard arguments.count == 7, let count = Int(arguments[5]), ["typed", "untyped"].contains(arguments[6]) else {
        fail("increment needs COUNT typed|untyped")
    }
    let prefs = TypedWorkerPreferences(key: storageKey)
    for round in 0..<count {
        if arguments[6] == "typed" {
            prefs.modify(\.$launchCount) { $0 += 1 }
        } else {
            prefs.modify("launchCount") { ($0 as? Int ?? 0) + 1 }
        }
        if let error = prefs.lastError { fail("increment \(round): \(error)") }
    }
    say("ok")

case "write-typed":
    guard arguments.count == 7, let width = Double(arguments[5]), let appearance = WorkerAppearance(rawValue: arguments[6]) else {
        fail("write-typed needs WIDTH APPEARANCE")
    }
    let prefs = TypedWorkerPreferences(key: storageKey)
    prefs.window = WorkerFrame(x: 10, y: 20, width: width, height: 600)
    if let error = prefs.lastError { fail("write window: \(error)") }
    prefs.appearance = appearance
    if let error = prefs.lastError { fail("write appearance: \(error)") }
    say("ok")

case "read-typed":
    let prefs = TypedWorkerPreferences(key: storageKey)
    let window = prefs.window
    var problem = "none"
    if case .invalidStoredEntry(let entry, _)? = prefs.lastError { problem = entry }
    let appearance = prefs.appearance
    if case .invalidStoredEntry(let entry, _)? = prefs.lastError { problem = entry }
    say("window \(window.x) \(window.y) \(window.width) \(window.height) appearance \(appearance.rawValue) error \(problem)")

case "serve-entries":
    OpenPreferences.allowed = ["count", "volume", "userName", "launchCount", "appearance", "round", "writer"]
    let prefs = OpenPreferences(key: storageKey)
    while let line = readLine() {
        let parts = line.split(separator: " ")
        guard parts.count == 2, let value = Int(parts[1]) else { fail("serve-entries: bad line \(line)") }
        prefs[String(parts[0])] = value
        if let error = prefs.lastError { fail("serve-entries \(line): \(error)") }
        say("done \(line)")
    }

case "burst-entry":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("burst-entry needs COUNT") }
    OpenPreferences.allowed = ["count"]
    let prefs = OpenPreferences(key: storageKey)
    for value in 0..<count {
        prefs["count"] = value
        if let error = prefs.lastError { fail("burst-entry \(value): \(error)") }
    }
    say("ok")

case "flood":
    guard arguments.count == 7, let count = Int(arguments[5]) else { fail("flood needs COUNT FLOOD_DIR") }
    let files = ["a", "b"].map { arguments[6] + "/" + $0 }
    for file in files { _ = FileManager.default.createFile(atPath: file, contents: nil) }
    for index in 0..<count { _ = utimes(files[index % 2], nil) }
    do {
        try domain.modify(repairing: .failIfUnreadable) { $0[storageKey] = .dictionary(["value": .integer(2)]) }
    } catch {
        fail("flood: \(error)")
    }
    say("done")

case "overflow-read":
    guard arguments.count == 7, Int(arguments[5]) != nil else { fail("overflow-read needs COUNT FLOOD_DIR") }
    overflowRead(floodArguments: ["flood"] + arguments[2...6])

case "overflow-moved-read":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("overflow-moved-read needs COUNT") }
    overflowMovedRead(directory: arguments[2], name: arguments[3], floodCount: count)

case "migrate":
    runVersionedWorker(storageKey: storageKey)

case "serve-links":
    serveLinks()

case "watch-cycles":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("watch-cycles needs COUNT") }
    watchCycles(count)

case "watch-many":
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("watch-many needs COUNT") }
    watchMany(count)

default:
    fail("unknown command \(command)")
}

/// The casts `cast-entries` reports: every Swift numeric type, Bool and CGFloat, each also as the element
/// type of an array and of a string-keyed dictionary, and one cast two levels down.
func castTable() -> [(String, (Any) -> String?)] {
    func scalar<T>(_ type: T.Type) -> (Any) -> String? { { value in (value as? T).map { "\($0)" } } }
    func array<T>(_ type: T.Type) -> (Any) -> String? {
        { value in (value as? [T]).map { $0.map { "\($0)" }.joined(separator: ",") } }
    }
    func dictionary<T>(_ type: T.Type) -> (Any) -> String? {
        { value in (value as? [String: T]).map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") } }
    }
    func all<T>(_ name: String, _ type: T.Type) -> [(String, (Any) -> String?)] {
        [(name, scalar(type)), ("[\(name)]", array(type)), ("[String: \(name)]", dictionary(type))]
    }
    return all("Int", Int.self) + all("Int8", Int8.self) + all("Int16", Int16.self) + all("Int32", Int32.self)
        + all("Int64", Int64.self) + all("UInt", UInt.self) + all("UInt8", UInt8.self) + all("UInt16", UInt16.self)
        + all("UInt32", UInt32.self) + all("UInt64", UInt64.self) + all("Float", Float.self) + all("Double", Double.self)
        + all("Bool", Bool.self) + all("CGFloat", CGFloat.self)
        + [("[String: [String: [Float]]]", dictionary([String: [Float]].self))]
}

/// A field of /proc/self/status in kB (`VmRSS`, `VmHWM`).
func memoryStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}

func soak(seconds: Double, worker: Int, workers: Int) {
    let slots = 16
    OpenPreferences.allowed = ["round"] + (0..<workers).flatMap { other in (0..<slots).map { "w\(other)-\($0)" } }
    let shared = OpenPreferences(key: storageKey)
    let own = OpenPreferences(key: "\(storageKey)-w\(worker)")
    let hwmStart = memoryStatus("VmHWM")
    let start = Date()
    let warmUp = max(2, seconds / 5)
    var (rssWarm, hwmWarm) = (-1, -1)
    var (writes, reads, rounds) = (0, 0, 0)
    var lastWritten = [Int](repeating: -1, count: slots)
    var highestSeen: [String: Int] = [:]

    /// Checks one read value of entry `name`: this worker's own entries must hold exactly what it last
    /// wrote (reads are fresh), and every entry must never go back to an older value.
    func check(_ name: String, _ value: Any?) {
        guard let value else {
            if name.hasPrefix("w\(worker)-"), let slot = Int(name.dropFirst("w\(worker)-".count)), lastWritten[slot] >= 0 {
                fail("soak worker \(worker): own entry \(name) is missing after writing \(lastWritten[slot])")
            }
            return
        }
        guard let number = value as? Int else { fail("soak worker \(worker): entry \(name) holds \(value)") }
        if name.hasPrefix("w\(worker)-"), let slot = Int(name.dropFirst("w\(worker)-".count)), number != lastWritten[slot] {
            fail("soak worker \(worker): own entry \(name) reads \(number), last written \(lastWritten[slot])")
        }
        if let seen = highestSeen[name], number < seen {
            fail("soak worker \(worker): entry \(name) went back from \(seen) to \(number)")
        }
        highestSeen[name] = number
    }

    var step = 0
    while true {
        let elapsed = Date().timeIntervalSince(start)
        if elapsed >= seconds { break }
        if rssWarm < 0 && elapsed >= warmUp {
            (rssWarm, hwmWarm) = (memoryStatus("VmRSS"), memoryStatus("VmHWM"))
        }
        let slot = writes % slots
        shared["w\(worker)-\(slot)"] = writes
        if let error = shared.lastError { fail("soak worker \(worker): write \(writes): \(error)") }
        lastWritten[slot] = writes
        writes += 1

        let collection = shared.values
        if let error = shared.lastError { fail("soak worker \(worker): read: \(error)") }
        for (name, value) in collection { check(name, value) }
        let other = "w\((worker + 1 + step) % workers)-\(step % slots)"
        check(other, shared[other])
        if let error = shared.lastError { fail("soak worker \(worker): read \(other): \(error)") }
        reads += 2

        if step % 8 == 0 {
            own.values = ["round": rounds]
            if let error = own.lastError { fail("soak worker \(worker): round \(rounds): \(error)") }
            rounds += 1
            guard own["round"] as? Int == rounds - 1 else { fail("soak worker \(worker): round \(rounds - 1) not read back") }
            reads += 1
        }
        step += 1
    }
    if rssWarm < 0 { (rssWarm, hwmWarm) = (memoryStatus("VmRSS"), memoryStatus("VmHWM")) }
    say("soak worker=\(worker) writes=\(writes) reads=\(reads) rounds=\(rounds) slots=\(slots) "
        + "hwm_start_kb=\(hwmStart) rss_warm_kb=\(rssWarm) hwm_warm_kb=\(hwmWarm) "
        + "rss_end_kb=\(memoryStatus("VmRSS")) hwm_end_kb=\(memoryStatus("VmHWM"))")
}

/// The number of entries of a /proc directory of this process.
@Sendable func entries(_ path: String) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).count
}

func overflowRead(floodArguments: [String]) {
    func value() throws -> PropertyListValue? {
        try domain.snapshot().contents[storageKey]?.dictionaryValue?["value"]
    }
    do {
        try domain.modify(repairing: .failIfUnreadable) { $0[storageKey] = .dictionary(["value": .integer(1)]) }
        guard let fileDomain = domain as? FileDomainStorage else { fail("overflow-read needs a domain file") }
        let watch = fileDomain.watch {}
        // The flood's events reach this process's queue through a watch of their directory.
        let floodWatch = FileWatch(directory: floodArguments[5], fileName: "unused.plist") {}
        guard try value() == .integer(1) else { fail("overflow-read: the first read is not 1") }
        let flood = Process()
        flood.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        flood.arguments = floodArguments
        let output = Pipe()
        flood.standardOutput = output
        #if DEBUG
        let holdingHubLock = WatchEngine.shared.holdingLock
        #else
        func holdingHubLock(_ body: () throws -> Void) throws { fail("overflow-read needs a debug build") }
        #endif
        try holdingHubLock {
            try flood.run()
            let reply = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            flood.waitUntilExit()
            guard reply == "done\n", flood.terminationStatus == 0 else {
                fail("overflow-read: flood replied \(reply.debugDescription), status \(flood.terminationStatus)")
            }
        }
        let after = try value()
        watch.cancel()
        floodWatch.cancel()
        if case .integer(let number)? = after { say("value=\(number)") } else { say("value=\(String(describing: after))") }
    } catch {
        fail("overflow-read: \(error)")
    }
}

func watchCycles(_ count: Int) {
    let (fdsBefore, threadsBefore) = (entries("/proc/self/fd"), entries("/proc/self/task"))
    var during = (0, 0)
    for cycle in 0..<count {
        let place = cycle % 2 == 0 ? directory : directory + "/missing/level"
        let watch = FileWatch(directory: place, fileName: domainName + ".plist") {}
        if cycle == 0 { during = (entries("/proc/self/fd"), entries("/proc/self/task")) }
        watch.cancel()
    }
    // `pthread_join` returns when the watch thread has cleared its id, a moment before the kernel drops
    // it from /proc/self/task: a thread still listed is given up to 2 s to go, a leaked one never goes.
    var threadsAfter = entries("/proc/self/task")
    for _ in 0..<2_000 where threadsAfter > threadsBefore {
        usleep(1_000)
        threadsAfter = entries("/proc/self/task")
    }
    say("cycles=\(count) fds_before=\(fdsBefore) threads_before=\(threadsBefore) fds_during=\(during.0) "
        + "threads_during=\(during.1) fds_after=\(entries("/proc/self/fd")) threads_after=\(threadsAfter)")
}

/// `watch-many`: COUNT watching instances hear one change made elsewhere.
func watchMany(_ count: Int) {
    let started = ContinuousClock.now
    OpenPreferences.allowed = ["count"]
    let told = DispatchSemaphore(value: 0)
    var instances: [OpenPreferences] = []
    var tokens: [PrefsObservation] = []
    for _ in 0..<count {
        let prefs = OpenPreferences(key: storageKey)
        prefs.watchesExternalChanges = true
        tokens.append(prefs.observe(\.values) { _, _ in told.signal() })
        instances.append(prefs)
    }
    let before = entries("/proc/self/task")
    let peak = Mutex(before)
    let sampling = Atomic(true)
    let sampler = Thread {
        while sampling.load(ordering: .relaxed) {
            let now = entries("/proc/self/task")
            peak.withLock { $0 = max($0, now) }
            // Often enough to see a thread that lives for a few milliseconds, rarely enough to leave the
            // processors to the instances being measured (and to the tests running beside this one).
            usleep(2_000)
        }
    }
    sampler.start()
    let ready = ContinuousClock.now
    say("ready")
    for _ in 0..<count { told.wait() }
    let allTold = ContinuousClock.now
    sampling.store(false, ordering: .relaxed)
    let after = entries("/proc/self/task")
    func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
    say("told=\(count) threads_before=\(before) threads_peak=\(max(peak.withLock { $0 }, after)) threads_after=\(after) "
        + "setup_ms=\(milliseconds(ready - started)) telling_ms=\(milliseconds(allTold - ready))")
    withExtendedLifetime((instances, tokens)) {}
}

func serveLinks() {
    func contents(_ value: Int) -> [UInt8] {
        BinaryPropertyList.encode(.dictionary([storageKey: .dictionary(["value": .integer(value)])]))
    }
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        guard words.count >= 3, let number = Int(words[1]) else { fail("serve-links: bad line \(line)") }
        do {
            switch words[0] {
            case "hardlink":
                let link = words[2]
                guard Glibc.link(directory + "/" + domainName + ".plist", link) == 0 else { fail("link: \(errno)") }
                let fd = open(link, O_WRONLY | O_TRUNC)
                guard fd >= 0 else { fail("open \(link): \(errno)") }
                let bytes = contents(number)
                guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else { fail("write: \(errno)") }
                close(fd)
                guard unlink(link) == 0 else { fail("unlink: \(errno)") }
            case "retarget":
                guard words.count == 4 else { fail("retarget needs N LINK NEWDIR") }
                let (link, newDirectory) = (words[2], words[3])
                try FileDomainStorage(directory: newDirectory, name: domainName).modify(repairing: .failIfUnreadable) {
                    $0[storageKey] = .dictionary(["value": .integer(number)])
                }
                let temporary = link + ".new"
                unlink(temporary)
                guard symlink(newDirectory, temporary) == 0, rename(temporary, link) == 0 else { fail("retarget: \(errno)") }
            case "replace-target":
                try FileDomainStorage(directory: words[2], name: domainName).modify(repairing: .failIfUnreadable) {
                    $0[storageKey] = .dictionary(["value": .integer(number)])
                }
            default:
                fail("serve-links: unknown command \(words[0])")
            }
        } catch {
            fail("serve-links \(line): \(error)")
        }
        say("done \(number)")
    }
}

/// While the queue overflows, the domain's directory is moved away and made again: the read after the
/// overflow, and every read after a later write there, must see the new directory's file. Prints the
/// values read through a suite and through the domain, after the overflow and after a later write.
func overflowMovedRead(directory base: String, name: String, floodCount: Int) {
    let directory = base + "/prefs"
    func writeElsewhere(_ value: Int) {
        // As another program would: a temporary file renamed into place.
        let bytes = BinaryPropertyList.encode(.dictionary(["k": .integer(value)]))
        let temporary = directory + "/.elsewhere.tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)),
              rename(temporary, directory + "/\(name).plist") == 0 else { fail("overflow-moved-read: write \(value)") }
    }
    do {
        guard mkdir(directory, 0o700) == 0 else { fail("overflow-moved-read: mkdir") }
        let domain = try FileDomainStorage(directory: directory, name: name)
        let suite = DefaultsSuite(persistentDomain: domain, globalDomain: nil, arguments: [])
        writeElsewhere(1)
        guard try suite.value(forKey: "k") == .integer(1) else { fail("overflow-moved-read: the first read is not 1") }
        #if DEBUG
        let holdingEngineLock = WatchEngine.shared.holdingLock
        #else
        func holdingEngineLock(_ body: () throws -> Void) throws { fail("overflow-moved-read needs a debug build") }
        #endif
        try holdingEngineLock {
            // The watch thread cannot drain meanwhile: the queue overflows, and the directory's move is lost.
            for index in 0..<floodCount {
                let path = directory + "/flood-\(index)"
                close(open(path, O_WRONLY | O_CREAT, 0o600))
                unlink(path)
            }
            guard rename(directory, base + "/prefs.old") == 0, mkdir(directory, 0o700) == 0 else {
                fail("overflow-moved-read: moving the directory")
            }
            writeElsewhere(2)
        }
        let afterOverflow = (try suite.value(forKey: "k"), try domain.snapshot().contents["k"])
        writeElsewhere(3)
        let afterWrite = (try suite.value(forKey: "k"), try domain.snapshot().contents["k"])
        say("overflow=\(afterOverflow.0.map { "\($0)" } ?? "nil"),\(afterOverflow.1.map { "\($0)" } ?? "nil") "
            + "later=\(afterWrite.0.map { "\($0)" } ?? "nil"),\(afterWrite.1.map { "\($0)" } ?? "nil")")
    } catch {
        fail("overflow-moved-read: \(error)")
    }
}
