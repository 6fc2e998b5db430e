import Dispatch
import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// An in-memory domain that counts how often a call arrives while another is still in progress.
///
/// One instance's operations are serialized, so the domain of a suite used by one instance alone
/// must never see two calls at once. Each call yields the processor while it is marked in progress,
/// so that an unserialized caller would be caught.
final class BaseClassOverlapDetectingDomain: DomainStorage {
    private let inner = InMemoryDomainStorage(location: "overlap-detecting domain")
    private let inFlight = Locked(0)
    private let overlapCount = Locked(0)
    private let callCount = Locked(0)

    var location: String { inner.location }
    var overlaps: Int { overlapCount.withLock { $0 } }
    var calls: Int { callCount.withLock { $0 } }

    private func during<Result>(_ body: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
        let overlapping = inFlight.withLock { count -> Bool in
            count += 1
            return count > 1
        }
        callCount.withLock { $0 += 1 }
        if overlapping { overlapCount.withLock { $0 += 1 } }
        defer { inFlight.withLock { $0 -= 1 } }
        sched_yield()
        return try body()
    }

    func snapshot() throws(PrefsError) -> DomainSnapshot {
        try during { () throws(PrefsError) -> DomainSnapshot in try inner.snapshot() }
    }

    func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        try during { () throws(PrefsError) -> DomainSnapshot in try inner.modify(repairing: policy, transform) }
    }
}

@Suite("One instance used from several threads at once: operations serialized, nothing lost, no crash")
struct BaseClassThreadSafetyTests {
    static let threads = 8

    static func names(perThread: Int) -> [String] {
        (0..<threads).flatMap { thread in (0..<perThread).map { "t\(thread)-\($0)" } }
    }

    /// An instance over `domain` (the persistent domain of a suite with no other) allowing `names`.
    static func prefs(over domain: any DomainStorage, allowing names: [String]) -> BaseClassTestPrefs {
        BaseClassTestPrefs(suite: DefaultsSuite(persistentDomain: domain, globalDomain: nil, arguments: []),
                           key: "settings", values: nil, allowing: names)
    }

    /// Runs `body(thread)` on `threads` threads at once, and returns when all have finished.
    func hammer(_ body: @Sendable (Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: Self.threads, execute: body)
    }

    @Test("8 threads writing distinct entries through the subscript of one instance, and reading, keep every entry")
    func subscriptWritesFromEightThreads() async throws {
        try await onOwnThread {
            // Each write encodes the whole domain to check its size, so the run's cost grows with the square of
            // the entries: 800 writes from 8 threads still interleave throughout, at less than half the CPU of 1,200.
            let perThread = 100
            let domain = InMemoryDomainStorage()
            nonisolated(unsafe) let prefs = Self.prefs(over: domain, allowing: Self.names(perThread: perThread))
            let misreads = Locked(0)

            hammer { thread in
                for index in 0..<perThread {
                    let name = "t\(thread)-\(index)"
                    prefs[name] = "value \(thread) \(index)"
                    // Only this thread writes this entry, so every read of it must see this thread's write.
                    if prefs[name] as? String != "value \(thread) \(index)" { misreads.withLock { $0 += 1 } }
                    if index % 10 == 0 { _ = prefs.values.count + prefs.count }
                    if index % 25 == 0 { prefs.flush() }
                }
            }

            #expect(misreads.withLock { $0 } == 0, "a thread did not read back its own write")
            let values = prefs.values
            #expect(prefs.baseClassOutcome == .success)
            #expect(values.count == Self.threads * perThread)
            for thread in 0..<Self.threads {
                for index in 0..<perThread {
                    #expect(values["t\(thread)-\(index)"] as? String == "value \(thread) \(index)")
                }
            }
        }
    }

    @Test("The operations of one instance used from 8 threads are serialized: its domain never sees two calls at once")
    func operationsAreSerialized() async throws {
        try await onOwnThread {
            let perThread = 100
            let domain = BaseClassOverlapDetectingDomain()
            nonisolated(unsafe) let prefs = Self.prefs(over: domain, allowing: Self.names(perThread: perThread))

            hammer { thread in
                for index in 0..<perThread {
                    switch index % 6 {
                    case 0: prefs.values = prefs.values
                    case 1: prefs.flush()
                    case 2: _ = prefs.count
                    case 3: prefs.values["t\(thread)-\(index)"] = index
                    default: prefs["t\(thread)-\(index)"] = index
                    }
                    _ = prefs["t\(thread)-\(index)"]
                }
            }

            #expect(domain.calls > Self.threads * perThread)
            #expect(domain.overlaps == 0, "\(domain.overlaps) of \(domain.calls) domain calls overlapped another")
            #expect(prefs.values.count > 0 && prefs.baseClassOutcome == .success)
        }
    }

    @Test("8 threads writing distinct entries of one instance over a domain file keep every entry in the file")
    func subscriptWritesToAFileFromEightThreads() throws {
        let perThread = 12
        let fixture = try BaseClassFixture()
        nonisolated(unsafe) let prefs = BaseClassTestPrefs(
            suite: fixture.suite, key: "settings", values: nil, allowing: Self.names(perThread: perThread)
        )

        hammer { thread in
            for index in 0..<perThread {
                prefs["t\(thread)-\(index)"] = thread * 1000 + index
                _ = prefs["t\(thread)-\(index)"]
                _ = prefs.count
            }
        }

        let stored = try #require(try fixture.stored()["settings"]?.dictionaryValue)
        #expect(stored.count == Self.threads * perThread)
        for thread in 0..<Self.threads {
            for index in 0..<perThread {
                #expect(stored["t\(thread)-\(index)"] == .integer(thread * 1000 + index))
            }
        }
    }

    @Test("Rejected writes, removals and whole-collection reads from other threads do not disturb subscript writes")
    func mixedOperationsFromEightThreads() async throws {
        try await onOwnThread {
            let perThread = 60
            let domain = InMemoryDomainStorage()
            let names = Self.names(perThread: perThread) + ["scratch"]
            nonisolated(unsafe) let prefs = Self.prefs(over: domain, allowing: names)

            hammer { thread in
                for index in 0..<perThread {
                    if thread % 2 == 0 {
                        prefs["t\(thread)-\(index)"] = index
                    } else {
                        // Odd threads write their entries too, interleaved with rejected writes and removals.
                        prefs["t\(thread)-\(index)"] = index
                        prefs["not allowed \(thread)"] = index
                        prefs["scratch"] = index
                        prefs["scratch"] = nil
                        prefs["scratch"] = NSNull()
                        _ = prefs.values
                    }
                }
            }

            let values = prefs.values
            #expect(prefs.baseClassOutcome == .success)
            #expect(values.count == Self.threads * perThread)
            #expect(values["scratch"] == nil)
            #expect(values.values.allSatisfy { $0 is Int })
        }
    }
}
