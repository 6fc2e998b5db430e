import Foundation
import Observation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Preferences with typed entries over the subscript, as an app writes them, for Swift Observation.
final class TrackedPrefs: RVS_PersistentPrefs {
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings", values: [:])
    }

    override var keys: [String] { ["volume", "userName", "count"] }
    override var userDefaults: DefaultsSuite? { suite }

    var volume: Int {
        get { self["volume"] as? Int ?? 0 }
        set { self["volume"] = newValue }
    }

    var userName: String {
        get { self["userName"] as? String ?? "" }
        set { self["userName"] = newValue }
    }
}

/// Whether `onChange` of one `withObservationTracking` has fired, with a way to wait for it.
final class ChangeFlag: Sendable {
    private let fired = WaitableValue(0)

    func fire() { fired.update { $0 += 1 } }

    var count: Int { fired.current }

    /// Waits for `onChange`; `false` if it did not come within a minute (nothing is asserted about speed).
    func wait() -> Bool { fired.wait { $0 > 0 } }
}

/// Tracks what `read` reads of `prefs`; the flag fires at the first change of any of it.
func track(_ prefs: TrackedPrefs, _ read: @escaping (TrackedPrefs) -> Void) -> ChangeFlag {
    let flag = ChangeFlag()
    withObservationTracking { read(prefs) } onChange: { flag.fire() }
    return flag
}

@Suite("Swift Observation: withObservationTracking sees what an app reads, per entry")
struct SwiftObservationTests {
    let directory = TemporaryDirectory()

    private func suite() throws -> DefaultsSuite { try directory.fileSuite("tracked") }

    @Test("Code that read only one entry is told of a write to it, not of a write that changed only another")
    func perEntryInProcess() throws {
        let prefs = TrackedPrefs(suite: try suite())
        let volumeRead = track(prefs) { _ = $0.volume }
        let nameRead = track(prefs) { _ = $0.userName }
        prefs.userName = "ada"
        #expect(volumeRead.count == 0)
        #expect(nameRead.count == 1)
        prefs.volume = 3
        #expect(volumeRead.count == 1)
    }

    @Test("Reading values or count is told of every successful write")
    func wholeCollectionReads() throws {
        let prefs = TrackedPrefs(suite: try suite())
        let valuesRead = track(prefs) { _ = $0.values }
        let countRead = track(prefs) { _ = $0.count }
        prefs["count"] = 1
        #expect(valuesRead.count == 1)
        #expect(countRead.count == 1)
    }

    @Test("An assignment of the whole collection tells the entries that differ, and only those")
    func wholeAssignmentTellsDifferingEntries() throws {
        let prefs = TrackedPrefs(suite: try suite())
        prefs.values = ["volume": 1, "userName": "ada"]
        let volumeRead = track(prefs) { _ = $0.volume }
        let nameRead = track(prefs) { _ = $0.userName }
        prefs.values = ["volume": 1, "userName": "grace"]
        #expect(volumeRead.count == 0)
        #expect(nameRead.count == 1)
    }

    @Test("onChange runs once the write is complete: a read inside it sees the new value")
    func onChangeSeesTheNewValue() throws {
        let prefs = TrackedPrefs(suite: try suite())
        let seen = ObservationLog<Int>()
        // The instance is safe to use from any thread, but not declared Sendable (SPEC §2.4).
        nonisolated(unsafe) let shared = prefs
        withObservationTracking { _ = prefs.volume } onChange: { seen.append(shared.volume) }
        prefs.volume = 8
        #expect(seen.events == [8])
    }

    @Test("Rejected writes, reads and flush() trigger nothing")
    func silentOperations() throws {
        let prefs = TrackedPrefs(suite: try suite())
        prefs.volume = 1
        let valuesRead = track(prefs) { _ = $0.values; _ = $0.volume }
        prefs["notAllowed"] = 1
        #expect(prefs.lastError != nil)
        prefs.values = ["volume": NSNull()]
        #expect(prefs.lastError != nil)
        _ = prefs.values
        _ = prefs.volume
        _ = prefs.count
        prefs.flush()
        #expect(valuesRead.count == 0)
    }

    @Test("With watching on, another process's change to one entry tells that entry's readers, not the others'")
    func perEntryExternal() throws {
        let prefs = TrackedPrefs(suite: try suite())
        prefs.watchesExternalChanges = true
        let volumeRead = track(prefs) { _ = $0.volume }
        let nameRead = track(prefs) { _ = $0.userName }
        let writer = try ChildProcess.worker("serve-entries", directory.path, "tracked", "settings")
        let before = prefs.externalChanges.deliveriesCompleted
        writer.send("count 5")
        #expect(writer.readLine() == "done count 5")
        #expect(prefs.externalChanges.waitForDeliveries(atLeast: before + 1))
        #expect(volumeRead.count == 0)
        #expect(nameRead.count == 0)
        writer.send("volume 9")
        #expect(writer.readLine() == "done volume 9")
        #expect(volumeRead.wait())
        #expect(prefs.volume == 9)
        #expect(nameRead.count == 0)
        writer.closeInput()
        #expect(writer.wait() == 0)
    }

    @Test("A main-actor model that turned watching on hears another process's change through onChange on the main actor")
    @MainActor
    func externalChangeOnTheMainActor() async throws {
        let prefs = TrackedPrefs(suite: try suite())
        prefs.watchesExternalChanges = true
        // Where each onChange ran, as it ran: a stream, so that the test awaits it without holding the main actor.
        let (onMainActor, heard) = AsyncStream<Bool>.makeStream()
        withObservationTracking { _ = prefs.volume } onChange: { heard.yield(HandlerIsolation.isOnMainQueue) }
        let writer = try ChildProcess.worker("serve-entries", directory.path, "tracked", "settings")
        writer.send("volume 9")
        #expect(writer.readLine() == "done volume 9")
        var iterator = onMainActor.makeAsyncIterator()
        #expect(await iterator.next() == true)
        #expect(prefs.volume == 9)
        // A write through the instance on the main actor is still told on the spot.
        let (ownWrite, heardOwn) = AsyncStream<Bool>.makeStream()
        withObservationTracking { _ = prefs.volume } onChange: { heardOwn.yield(HandlerIsolation.isOnMainQueue) }
        prefs.volume = 10
        heardOwn.finish()
        var ownIterator = ownWrite.makeAsyncIterator()
        #expect(await ownIterator.next() == true)
        writer.closeInput()
        #expect(writer.wait() == 0)
    }

    @Test("While the main actor is busy (a main loop that is not Dispatch's), changes made elsewhere queue one call for Swift Observation, not one each, and it tells them all")
    @MainActor
    func externalChangesQueueOneCallWhileTheMainActorIsBusy() async throws {
        let prefs = TrackedPrefs(suite: try suite())
        prefs.watchesExternalChanges = true
        let (told, heard) = AsyncStream<Bool>.makeStream()
        withObservationTracking { _ = prefs.volume } onChange: { heard.yield(HandlerIsolation.isOnMainQueue) }
        let writer = try ChildProcess.worker("serve-entries", directory.path, "tracked", "settings")
        // Five changes delivered while this test holds the main actor without awaiting, as a GLib loop would.
        for volume in 1...5 {
            let before = prefs.externalChanges.deliveriesCompleted
            writer.send("volume \(volume)")
            #expect(writer.readLine() == "done volume \(volume)")
            #expect(prefs.externalChanges.waitForDeliveries(atLeast: before + 1))
        }
        // One call of this instance's (the queue to the main actor is shared by every instance of the process).
        #expect(prefs.swiftObservation.queuedExternalChangeCalls == 1)
        var iterator = told.makeAsyncIterator()
        #expect(await iterator.next() == true)
        #expect(prefs.volume == 5)
        writer.closeInput()
        #expect(writer.wait() == 0)
    }

    @Test("Without watching, another instance's write triggers nothing")
    func externalNeedsWatching() throws {
        let prefs = TrackedPrefs(suite: try suite())
        let volumeRead = track(prefs) { _ = $0.volume }
        let sentinel = TrackedPrefs(suite: try suite())
        sentinel.watchesExternalChanges = true
        let sentinelRead = track(sentinel) { _ = $0.volume }
        TrackedPrefs(suite: try suite()).volume = 4
        #expect(sentinelRead.wait())
        #expect(volumeRead.count == 0)
    }
}
