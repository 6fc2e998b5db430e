import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// One watch chain and one generation per watched path (SPEC §10), found through the watches events come
/// from: a path vouches for reads only while its own chain proves it, whatever other paths, or watches
/// placed earlier at another path, say.
///
/// Each test drives a watch engine of its own, so that no other test's events vouch for or disturb it.
@Suite("Watch chains shared per path")
struct SharedWatchChainTests {
    let base = TemporaryDirectory()
    let engine = WatchEngine()

    /// Replaces `directory/name.plist` as a program that does not use the library would: a new file renamed over it.
    private func renameOver(_ directory: String, _ name: String, _ contents: [String: PropertyListValue]) throws {
        let bytes = try DomainLimits.encoded(contents, location: directory)
        let temporary = directory + "/." + name + ".other"
        writeFile(temporary, bytes)
        #expect(rename(temporary, directory + "/" + name + ".plist") == 0)
    }

    /// The case the old engine missed: a directory watched while another path waited in it is renamed to the
    /// name a second path waits for, so that one watch serves two names. The engine named that watch's events
    /// by the path it was first placed at, so when a directory below the new name was removed while held and
    /// made again, its parent's events were taken for the old name's: the second path kept vouching through
    /// the old directory, and reads of it stayed stale.
    @Test("A held directory made again below a renamed one is seen by the path through the new name")
    func heldRemakeBelowRenamedDirectory() throws {
        let old = base.appending("old"), new = base.appending("new"), lower = new + "/x"
        #expect(mkdir(old, 0o700) == 0)
        // One path waits in `old` for `x`, the other waits in the base for `new`.
        let waitingInOld = FileWatch(directory: old + "/x", fileName: "d.plist", engine: engine) {}
        let watch = FileWatch(directory: lower, fileName: "d.plist", engine: engine) {}
        defer {
            watch.cancel()
            waitingInOld.cancel()
        }
        let domain = try FileDomainStorage(directory: lower, name: "d", durable: false, system: .live, freshness: engine)
        #expect(try domain.snapshot().contents.isEmpty)
        #expect(rename(old, new) == 0)
        #expect(try domain.snapshot().contents.isEmpty)
        #expect(mkdir(lower, 0o700) == 0)
        #expect(try domain.snapshot().contents.isEmpty)
        try renameOver(lower, "d", ["round": .integer(1)])
        #expect(try domain.snapshot().contents["round"] == .integer(1))
        #expect(try domain.snapshot().contents["round"] == .integer(1))

        let holder = try HeldDirectoryTests.Holder(lower)
        defer { holder.release() }
        try FileManager.default.removeItem(atPath: lower)
        #expect(mkdir(lower, 0o700) == 0)
        #expect(try domain.snapshot().contents.isEmpty, "the file removed with the old directory is still read")
        for round in 2...4 {
            try renameOver(lower, "d", ["round": .integer(round)])
            #expect(try domain.snapshot().contents["round"] == .integer(round), "stale read in round \(round)")
        }
    }

    /// A level found missing is noted, and waited for at its parent. When the last path waiting there went, the
    /// level's creation concerned no path, so the note stayed: a path watched later took the level for missing
    /// without asking, waited for good for a directory that existed, and heard nothing of its file.
    @Test("A directory made after the last path waiting for it stopped watching is watched by the next path through it")
    func directoryMadeAfterItsWaiterLeftIsWatched() throws {
        let parent = base.appending("a"), level = parent + "/b"
        #expect(mkdir(parent, 0o700) == 0)
        // Keeps `a` watched for its entries, so that the level's creation is an event nobody is waiting for.
        let neighbour = FileWatch(directory: parent, fileName: "q.plist", engine: engine) {}
        defer { neighbour.cancel() }
        let waiting = FileWatch(directory: level, fileName: "f.plist", engine: engine) {}
        waiting.cancel()
        #expect(mkdir(level, 0o700) == 0)
        // The creation's event applied before the next watch is added (else it would find that watch waiting).
        engine.takePendingEventsNow()
        let told = WaitableValue(0)
        let watch = FileWatch(directory: level, fileName: "f.plist", engine: engine) { told.update { $0 += 1 } }
        defer { watch.cancel() }
        try renameOver(level, "f", ["round": .integer(1)])
        #expect(told.wait(timeout: 10) { $0 > 0 }, "the file's creation in the directory made meanwhile was not heard")
    }
}

/// A process that reads once pays for no watch (issue 27): a suite starts its domains' watches at its third
/// read (an instance's creation reads once), so that a command-line tool reading one value makes no inotify
/// instance, while a program reading again gets the one-system-call read from then on.
@Suite("Watches started at a suite's third read")
struct LazyWatchingTests {
    let directory = TemporaryDirectory()

    @Test("A suite's first two reads start no watch; its third starts the watch that vouches for the file")
    func firstReadsWatchNothing() throws {
        // The process's engine: the suite's domains vouch only through it. The directory is this test's own.
        let domain = try FileDomainStorage(directory: directory.path, name: "lazy")
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
        let suite = DefaultsSuite(persistentDomain: domain, arguments: [])
        for read in 1...2 {
            #expect(try suite.find("k")?.value == .integer(1))
            #expect(domain.freshnessToken == nil, "read \(read) started a watch")
        }
        #expect(try suite.find("k")?.value == .integer(1))
        #expect(domain.freshnessToken != nil, "the third read started no watch")
        // Kept reads are fresh from then on.
        try domain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
        #expect(try suite.find("k")?.value == .integer(2))
        #expect(try suite.find("k")?.value == .integer(2))
    }
}
