import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Several processes sharing one domain")
struct MultiProcessTests {
    let directory = TemporaryDirectory()

    // (100 each: every update rewrites the whole collection, so the cost grows with the square of the count.)
    @Test("8 processes making 100 single-entry updates each to one collection keep all 800 entries")
    func concurrentSingleEntryUpdatesAreNeverLost() async throws {
        try await onOwnThread {
            let workers = try (0..<8).map { worker in
                try ChildProcess.worker("update-entries", directory.path, "shared", "collection", "\(worker)", "8", "100")
            }
            for worker in workers {
                #expect(worker.readLine() == "ok", "worker failed: \(worker.readErrors())")
                #expect(worker.wait() == 0)
            }
            let domain = try FileDomainStorage(directory: directory.path, name: "shared")
            let collection = try #require(try domain.snapshot().contents["collection"]?.dictionaryValue)
            #expect(collection.count == 800)
            for worker in 0..<8 {
                for index in 0..<100 { #expect(collection["w\(worker)-\(index)"] == .integer(index)) }
            }
        }
    }

    @Test("8 processes each rewriting their own collection in one domain lose none of them")
    func concurrentCollectionRewritesAreNeverLost() async throws {
        try await onOwnThread {
            let workers = try (0..<8).map { worker in
                try ChildProcess.worker("rewrite-collection", directory.path, "shared", "collection-\(worker)", "100")
            }
            for worker in workers {
                #expect(worker.readLine() == "ok", "worker failed: \(worker.readErrors())")
                #expect(worker.wait() == 0)
            }
            let contents = try FileDomainStorage(directory: directory.path, name: "shared").snapshot().contents
            #expect(contents.count == 8)
            for worker in 0..<8 {
                #expect(contents["collection-\(worker)"] == .dictionary(["round": .integer(99), "writer": .string("collection-\(worker)")]))
            }
        }
    }

    @Test("kill -9 of a writer at random instants never leaves an unreadable or empty domain")
    func killedWritersNeverTearTheFile() throws {
        var generator = SystemRandomNumberGenerator()
        let domain = try FileDomainStorage(directory: directory.path, name: "crash")
        for round in 0..<25 {
            let writer = try ChildProcess.worker("write-forever", directory.path, "crash", "writer")
            #expect(writer.readLine() == "ready")
            // The kill lands at a random point of the writer's loop: somewhere in lock, write, rename.
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            writer.kill(SIGKILL)
            #expect(writer.wait() == 128 + SIGKILL)
            let contents = try domain.snapshot().contents
            let collection = try #require(contents["writer"]?.dictionaryValue, "round \(round): the domain lost its collection")
            #expect(collection["round"] != nil)
            // The next writer is not hindered by whatever the killed one left.
            try domain.modify(repairing: .failIfUnreadable) { $0["after-\(round)"] = .integer(round) }
        }
        #expect(try domain.snapshot().contents.count == 26)
    }

    /// The reader sees timestamps as a kernel with a 4 ms file-time clock reports them (this machine's
    /// kernel has fine-grained file times, which would hide the problem). The writer makes two
    /// equal-size versions per round, so the second reuses the inode number of the version the reader
    /// saw last, within one tick: a cache validated by `stat()` alone would serve the old value. The same
    /// run with the directory watched proves the watch-validated path (issue 14) just as fresh; its second
    /// read of each version is served from that path.
    @Test("A long-lived reader never returns stale data after another process's write, with or without a watch: 1,000 rounds",
          arguments: [nil, 4_000_000], [false, true])
    func longLivedReadersAreNeverStale(timestampTick: Int?, watched: Bool) async throws {
        try await onOwnThread {
            let writer = try ChildProcess.worker("serve", directory.path, "fresh", "counter")
            let faults = FaultInjection()
            faults.timestampTick = timestampTick
            let reader = try FileDomainStorage(directory: directory.path, name: "fresh", durable: false, system: SystemCalls(faults: faults))
            let watch = watched ? reader.watch {} : nil
            var stale = 0
            for round in 0..<1_000 {
                let value = 1_000_000 + round % 2
                writer.send("\(value)")
                #expect(writer.readLine() == "done \(value)")
                for _ in 0..<2 where try reader.snapshot().contents["counter"] != .dictionary(["value": .integer(value)]) { stale += 1 }
            }
            writer.closeInput()
            #expect(writer.wait() == 0)
            #expect(stale == 0)
            watch?.cancel()
        }
    }
}
