import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Preferences as an app writes them, for the external-change tests: entries the `TestWorker` writes.
class WatchedPrefs: RVS_PersistentPrefs {
    let suite: DefaultsSuite?

    init(key: String = "settings", suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: key, values: [:])
    }

    override var keys: [String] { ["count", "volume", "userName"] }
    override var userDefaults: DefaultsSuite? { suite }

    var counter: Int {
        get { self["count"] as? Int ?? -1 }
        set { self["count"] = newValue }
    }
}

/// ``WatchedPrefs`` that counts the reads of its `counted` key path, to show when telling a change evaluates it.
final class CountedReadPrefs: WatchedPrefs {
    let reads = Locked(0)

    var counted: Int {
        reads.withLock { $0 += 1 }
        return self["count"] as? Int ?? -1
    }
}

/// What a key-path observer of `\.count` was told, with a way to wait for a value.
final class CountLog: Sendable {
    private let changes = WaitableValue<[(old: Int?, new: Int?)]>([])

    func append(old: Int?, new: Int?) { changes.update { $0.append((old, new)) } }

    var all: [(old: Int?, new: Int?)] { changes.current }

    /// Waits until a notification carries `value` as the new value; `false` if none did within a minute
    /// (a broken watcher fails the test instead of hanging it; nothing is asserted about speed).
    func waitForNew(_ value: Int) -> Bool { changes.wait { $0.contains { $0.new == value } } }
}

@Suite("Changes made elsewhere: watchesExternalChanges")
struct ExternalChangeTests {
    let directory = TemporaryDirectory()

    private func suite(_ subdirectory: String = "prefs") throws -> DefaultsSuite {
        try directory.fileSuite("shared", in: subdirectory)
    }

    private func watching(_ prefs: WatchedPrefs, into log: CountLog) -> PrefsObservation {
        prefs.watchesExternalChanges = true
        return prefs.observe(\.counter, options: [.old, .new]) { _, change in
            log.append(old: change.oldValue, new: change.newValue)
        }
    }

    @Test("Off by default: another instance's write notifies nobody, as before")
    func offByDefault() throws {
        let prefs = WatchedPrefs(suite: try suite())
        #expect(!prefs.watchesExternalChanges)
        let log = CountLog()
        let token = prefs.observe(\.counter, options: [.new]) { _, change in log.append(old: nil, new: change.newValue) }
        // A watching instance is the sentinel: once it has heard the write, an unwatched one would have too.
        let sentinel = WatchedPrefs(suite: try suite())
        let sentinelLog = CountLog()
        let sentinelToken = watching(sentinel, into: sentinelLog)
        WatchedPrefs(suite: try suite()).counter = 5
        #expect(sentinelLog.waitForNew(5))
        #expect(log.all.isEmpty)
        token.invalidate()
        sentinelToken.invalidate()
    }

    @Test("An observer's key path is classified when watching begins, or when it is registered while watching: the first change made elsewhere, asked for no values, does not read it",
          arguments: [false, true])
    func keyPathClassifiedBeforeTheFirstChange(observesFirst: Bool) throws {
        let prefs = CountedReadPrefs(suite: try suite())
        let told = WaitableValue(0)
        var token: PrefsObservation?
        func observe() { token = prefs.observe(\.counted, options: []) { _, _ in told.update { $0 += 1 } } }
        if observesFirst { observe() }
        prefs.watchesExternalChanges = true
        if !observesFirst { observe() }
        let readsBefore = prefs.reads.withLock { $0 }
        #expect(readsBefore == 1, "classified once, before any change")
        WatchedPrefs(suite: try suite()).counter = 7
        #expect(told.wait { $0 == 1 })
        #expect(prefs.reads.withLock { $0 } == readsBefore, "the change made elsewhere read the key path")
        token?.invalidate()
    }

    @Test("Another instance in this process: the watcher hears it, with .old the value it last saw")
    func anotherInstanceInThisProcess() throws {
        let writer = WatchedPrefs(suite: try suite())
        writer.counter = 1
        let prefs = WatchedPrefs(suite: try suite())
        let log = CountLog()
        let token = watching(prefs, into: log)
        writer.counter = 2
        #expect(log.waitForNew(2))
        #expect(log.all.last?.old == 1)
        token.invalidate()
    }

    @Test("500 writes by another process, each waited for, are each heard once, in order, ending on the last")
    func everyWriteOfAnotherProcessIsHeard() throws {
        let prefs = WatchedPrefs(suite: try suite())
        let log = CountLog()
        let token = watching(prefs, into: log)
        let writer = try ChildProcess.worker("serve-entries", directory.appending("prefs"), "shared", "settings")
        for value in 0..<500 {
            writer.send("count \(value)")
            #expect(writer.readLine() == "done count \(value)")
            #expect(log.waitForNew(value))
        }
        writer.closeInput()
        #expect(writer.wait() == 0)
        let changes = log.all
        #expect(changes.count == 500)
        #expect(changes.map(\.new) == (0..<500).map { $0 })
        #expect(changes.map(\.old) == [-1] + (0..<499).map { $0 })
        #expect(prefs.counter == 499)
        token.invalidate()
    }

    @Test("A burst of 500 writes by another process may coalesce, but never goes back and ends on the last")
    func burstsEndOnTheFinalValue() throws {
        let prefs = WatchedPrefs(suite: try suite())
        let log = CountLog()
        let token = watching(prefs, into: log)
        let writer = try ChildProcess.worker("burst-entry", directory.appending("prefs"), "shared", "settings", "500")
        #expect(writer.readLine() == "ok")
        #expect(writer.wait() == 0)
        #expect(log.waitForNew(499))
        let values = log.all.compactMap(\.new)
        #expect(values.last == 499)
        #expect(values == values.sorted())
        token.invalidate()
    }

    @Test("Writes to another storage key in the same domain, and identical bytes rewritten, notify nobody")
    func otherKeysAndIdenticalBytesNotifyNobody() throws {
        let prefs = WatchedPrefs(suite: try suite())
        prefs.counter = 7
        let log = CountLog()
        let token = watching(prefs, into: log)
        let streamed = ObservationLog<PrefsChange>()
        let stream = prefs.changes
        let reader = Task { for await change in stream { streamed.append(change) } }
        let writer = try ChildProcess.worker("serve-entries", directory.appending("prefs"), "shared", "otherKey")
        for value in 0..<50 {
            let before = prefs.externalChanges.deliveriesCompleted
            writer.send("count \(value)")
            #expect(writer.readLine() == "done count \(value)")
            // The write was looked at: a delivery began after it.
            #expect(prefs.externalChanges.waitForDeliveries(atLeast: before + 1))
        }
        writer.closeInput()
        #expect(writer.wait() == 0)
        // The same bytes, put in place by rename as another tool might.
        let path = directory.appending("prefs/shared.plist")
        let bytes = try #require(fileBytes(path))
        let before = prefs.externalChanges.deliveriesCompleted
        try Data(bytes).write(to: URL(fileURLWithPath: path + ".other-tool"))
        #expect(rename(path + ".other-tool", path) == 0)
        #expect(prefs.externalChanges.waitForDeliveries(atLeast: before + 1))
        #expect(log.all.isEmpty)
        #expect(streamed.count == 0)
        reader.cancel()
        token.invalidate()
    }

    @Test("A watcher started before its domain's directory exists hears the first write of another process")
    func watcherStartedBeforeTheDirectoryExists() throws {
        let place = "not/yet/there"
        let prefs = WatchedPrefs(suite: try suite(place))
        let log = CountLog()
        let token = watching(prefs, into: log)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("not")))
        let writer = try ChildProcess.worker("serve-entries", directory.appending(place), "shared", "settings")
        writer.send("count 3")
        #expect(writer.readLine() == "done count 3")
        #expect(log.waitForNew(3))
        writer.send("count 4")
        #expect(writer.readLine() == "done count 4")
        #expect(log.waitForNew(4))
        writer.closeInput()
        #expect(writer.wait() == 0)
        token.invalidate()
    }

    @Test("With inotify unavailable (forced), polling hears another process's writes and ends on the last",
          arguments: [DomainWatching.Fallback.inotifyUnavailable, .eventsIncomplete])
    func forcedFallbackHearsOtherProcesses(fallback: DomainWatching.Fallback) throws {
        let prefs = WatchedPrefs(suite: try suite())
        (prefs.userDefaults!.persistentDomain as! FileDomainStorage).watchSettings = (fallback, .milliseconds(5))
        let log = CountLog()
        let token = watching(prefs, into: log)
        let writer = try ChildProcess.worker("serve-entries", directory.appending("prefs"), "shared", "settings")
        for value in 0..<20 {
            writer.send("count \(value)")
            #expect(writer.readLine() == "done count \(value)")
            #expect(log.waitForNew(value))
        }
        let burst = try ChildProcess.worker("burst-entry", directory.appending("prefs"), "shared", "settings", "100")
        #expect(burst.readLine() == "ok")
        #expect(burst.wait() == 0)
        #expect(log.waitForNew(99))
        #expect(log.all.last?.new == 99)
        writer.closeInput()
        #expect(writer.wait() == 0)
        token.invalidate()
    }

    @Test("The changes stream hears changes made elsewhere, ending on the final collection")
    func changesStreamHearsExternalWrites() async throws {
        let prefs = WatchedPrefs(suite: try suite())
        prefs.watchesExternalChanges = true
        let stream = prefs.changes
        let reader = Task { () -> [String: PropertyListValue]? in
            for await change in stream where change.collection["count"] == .integer(9) { return change.collection }
            return nil
        }
        let writer = WatchedPrefs(suite: try suite())
        for value in 1...9 { writer.counter = value }
        #expect(await result(of: reader) == ["count": .integer(9)])
    }

    @Test("Turning watching off stops notifications; the instance's own writes notify once, not twice")
    func turningOffAndOwnWrites() throws {
        let prefs = WatchedPrefs(suite: try suite())
        let log = CountLog()
        let token = watching(prefs, into: log)
        prefs.counter = 1
        // The event of its own write is looked at, and found to be what the instance already saw.
        let sentinel = WatchedPrefs(suite: try suite())
        let sentinelLog = CountLog()
        let sentinelToken = watching(sentinel, into: sentinelLog)
        prefs.counter = 2
        #expect(sentinelLog.waitForNew(2))
        #expect(prefs.externalChanges.waitForDeliveries(atLeast: 1))
        prefs.watchesExternalChanges = false
        #expect(!prefs.watchesExternalChanges)
        sentinel.counter = 3
        #expect(sentinelLog.all.isEmpty == false)
        #expect(log.all.map(\.new) == [1, 2])
        token.invalidate()
        sentinelToken.invalidate()
    }
}
