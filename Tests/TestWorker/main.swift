// A child process for the multi-process tests. Each command works on the domain `<directory>/<domain>.plist`
// and reports on standard output, so the parent waits on pipes and exit statuses, never on sleeps.
//
//   TestWorker update-entries DIR DOMAIN STORAGE_KEY WORKER WORKERS COUNT
//       COUNT single-entry updates through the base class's subscript: entries wWORKER-0 … wWORKER-(COUNT-1);
//       the names of all WORKERS workers are allowed.
//   TestWorker rewrite-collection DIR DOMAIN STORAGE_KEY COUNT
//       COUNT whole-collection assignments of `values` under its own storage key; the last holds round COUNT-1.
//   TestWorker write-forever DIR DOMAIN STORAGE_KEY
//       Rewrites a growing collection until killed; prints "ready" after its first write.
//   TestWorker serve DIR DOMAIN STORAGE_KEY
//       Reads lines "N" from standard input; for each writes `{value: N + 500000}` and then `{value: N}` under
//       STORAGE_KEY (two versions of equal size, so that the second may reuse the inode of the version a
//       reader saw before) and prints "done N".
import Foundation
import RVS_PersistentPrefs

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

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TestWorker: \(message)\n".utf8))
    exit(2)
}

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

default:
    fail("unknown command \(command)")
}
