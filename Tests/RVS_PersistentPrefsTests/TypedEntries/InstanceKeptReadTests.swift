import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An instance's unchanged read asks its suite whether the read it kept still stands without retaining it (the
/// quick check: the engine's pending events and count, the registration domain's version), and falls back to
/// asking every domain when the engine's count moved or a domain of its own was consulted. These prove that each
/// way through that check sees the change it must, for `values` and a typed entry alike, and that the reads
/// between changes are served without touching the file.
@Suite("An instance's kept reads: every change seen at once, the unchanged reads served without a stat or open")
struct InstanceKeptReadTests {
    private static let key = "settings"

    /// Reads through both paths until the read is kept, then checks that a few more reads make no system call of
    /// the persistent domain (they are kept ones) and return `launchCount`.
    ///
    /// A change of the mount table (tests beside this one make and remove bind mounts) wakes every path of every
    /// engine, and the next read of each looks at its file again: a round during which `engine` woke every path is
    /// made again, up to three times.
    private static func expectKept(_ prefs: TypedSettings, launchCount: Int, faults: FaultInjection, engine: WatchEngine,
                                   _ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var calls: [SystemCall] = []
        for _ in 0..<3 {
            let wokenBefore = engine.everyPathWoken
            // The first reads after a change search (and keep what they find).
            for _ in 0..<2 {
                #expect((prefs.values["launchCount"] as? Int ?? 0) == launchCount, "values, \(step)", sourceLocation: sourceLocation)
                #expect(prefs.launchCount == launchCount, "typed, \(step)", sourceLocation: sourceLocation)
            }
            faults.clearRecordedCalls()
            for _ in 0..<3 {
                #expect((prefs.values["launchCount"] as? Int ?? 0) == launchCount, "kept values, \(step)", sourceLocation: sourceLocation)
                #expect(prefs.launchCount == launchCount, "kept typed, \(step)", sourceLocation: sourceLocation)
            }
            calls = faults.recordedCalls.map(\.call)
            if calls.isEmpty || engine.everyPathWoken == wokenBefore { break }
        }
        #expect(calls.isEmpty, "kept reads called \(calls), \(step)", sourceLocation: sourceLocation)
        #expect(prefs.lastError == nil, "\(step)", sourceLocation: sourceLocation)
    }

    @Test("A registration, a write through another domain object, and a change of an in-memory global domain are each read at once by an instance's kept reads")
    func everyChangeReachesTheKeptReads() throws {
        let directory = TemporaryDirectory()
        let engine = WatchEngine()
        let faults = FaultInjection()
        let persistent = try FileDomainStorage(directory: directory.path, name: "kept", durable: false,
                                               system: SystemCalls(faults: faults), freshness: engine)

        // No domain of its own: only the engine's count and the registration domain's version are asked.
        let suite = DefaultsSuite(persistentDomain: persistent, globalDomain: nil, systemDomains: [], managedDomains: [],
                                  argumentDomain: [:])
        let prefs = TypedSettings(suite: suite, key: Self.key)
        // (A read that found nothing keeps no native values: registered first, so that there are some.)
        suite.register(propertyListDefaults: [Self.key: .dictionary(["launchCount": .integer(1)])])
        Self.expectKept(prefs, launchCount: 1, faults: faults, engine: engine, "registered first")
        // The registration domain's version moves, the engine's count does not.
        suite.register(propertyListDefaults: [Self.key: .dictionary(["launchCount": .integer(3)])])
        Self.expectKept(prefs, launchCount: 3, faults: faults, engine: engine, "registered")
        // Another domain object over the same file (another engine), as another process would: the engine's
        // count moves, and every domain consulted is asked.
        let elsewhere = try FileDomainStorage(directory: directory.path, name: "kept", durable: false, system: .live,
                                              freshness: WatchEngine())
        _ = try elsewhere.modify(repairing: .failIfUnreadable) { $0[Self.key] = .dictionary(["launchCount": .integer(5)]) }
        Self.expectKept(prefs, launchCount: 5, faults: faults, engine: engine, "written elsewhere")
        _ = try elsewhere.modify(repairing: .failIfUnreadable) { $0[Self.key] = nil }
        Self.expectKept(prefs, launchCount: 3, faults: faults, engine: engine, "removed elsewhere")

        // A global domain with a generation of its own, consulted below the persistent domain: asked on every read.
        let global = InMemoryDomainStorage()
        let withGlobal = DefaultsSuite(persistentDomain: persistent, globalDomain: global, systemDomains: [],
                                       managedDomains: [], argumentDomain: [:])
        let globalPrefs = TypedSettings(suite: withGlobal, key: Self.key)
        Self.expectKept(globalPrefs, launchCount: 0, faults: faults, engine: engine, "nothing in the global domain")
        _ = try global.modify(repairing: .failIfUnreadable) { $0[Self.key] = .dictionary(["launchCount": .integer(8)]) }
        Self.expectKept(globalPrefs, launchCount: 8, faults: faults, engine: engine, "written to the global domain")
        _ = try global.modify(repairing: .failIfUnreadable) { $0[Self.key] = .dictionary(["launchCount": .integer(9)]) }
        Self.expectKept(globalPrefs, launchCount: 9, faults: faults, engine: engine, "written to the global domain again")
    }
}
