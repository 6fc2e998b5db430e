// Watching turned on and off from several threads at once, while another instance writes (the deliveries that
// follow take the shared watches' and the delivered collections' locks): CI builds it with -sanitize=thread, and
// any report fails the step. Before, every start and stop of watching was reported as a race (a lock guarding no
// value, whose empty value lay at the end of its object, in the next heap block). Exits 0 when every thread
// finished and the last write reads back; 1 with the reason otherwise.
import Foundation
import RVS_PersistentPrefs

final class Settings: RVS_PersistentPrefs {
    override var keys: [String] { ["n"] }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("WatchToggling: \(message)\n".utf8))
    exit(1)
}

let key = "com.example.toggling"
let (threads, rounds, writes) = (4, 150, 200)
let finished = DispatchGroup()
for _ in 0..<threads {
    finished.enter()
    Thread.detachNewThread {
        for _ in 0..<rounds {
            let prefs = Settings(key: key)
            prefs.watchesExternalChanges = true
            prefs.watchesExternalChanges = false
        }
        finished.leave()
    }
}
let writer = Settings(key: key)
for round in 1...writes { writer["n"] = round }
if let error = writer.lastError { fail("a write failed: \(error)") }
guard finished.wait(timeout: .now() + 120) == .success else { fail("the toggling threads did not finish within 120 s") }
guard Settings(key: key)["n"] as? Int == writes else { fail("the last write does not read back") }
print("WatchToggling: \(threads) threads turned watching on and off \(threads * rounds) times while \(writes) writes were made")
