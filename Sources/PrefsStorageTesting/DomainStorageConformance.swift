import Dispatch
import PrefsPropertyList
import PrefsStorage
import Synchronization

/// Checks that a ``DomainStorage`` backend keeps the contract every domain of a suite relies on: the
/// conformance kit a backend author calls from their own tests, with any test framework.
///
/// The kit knows no test framework: ``run()`` returns the failures it found (empty when the backend
/// conforms), and ``check()`` throws them as one error whose description lists each with what was
/// expected. From Swift Testing:
///
/// ```swift
/// @Test("My backend keeps the DomainStorage contract")
/// func conforms() throws {
///     try DomainStorageConformance {
///         let store = SharedStore()                       // a new, empty domain for each check
///         return .init(storage: MyDomain(store), otherWriter: MyDomain(store))
///     }.check()
/// }
/// ```
///
/// and from XCTest, `XCTAssertEqual(DomainStorageConformance(makeDomain: …).run(), [])` or
/// `XCTAssertNoThrow(try DomainStorageConformance(makeDomain: …).check())`.
///
/// What it checks (each a ``Check``):
/// - snapshot and modify semantics: what a `modify` returns is what the next snapshot returns; a
///   throwing transform changes nothing and its error reaches the caller; a transform that leaves the
///   contents as they were writes nothing that a caller could notice (the same snapshot object comes back);
/// - missing versus existing: a domain never written reads as ``DomainSnapshot/missing`` (`exists` is
///   `false`), a modify that leaves it empty does not create it, and a domain emptied by a write still exists;
/// - the generation: while a domain is unchanged, every read returns the same snapshot object (callers cache
///   by it), and after another writer's change the next read returns a new one holding the change, never
///   the old one;
/// - `watchChanges` fires after another writer's change, and stops firing once cancelled or released.
///
/// Each check runs on a new domain from the factory, which also gives a second object over the same domain
/// (as another process or machine would hold it) to make the "other writer's" changes.
///
/// ## Topics
///
/// ### Running the Checks
/// - ``init(readOnly:watches:watchTimeout:quietPeriod:makeDomain:)``
/// - ``run()``
/// - ``check()``
/// - ``Domain``
///
/// ### What Is Reported
/// - ``Check``
/// - ``Failure``
/// - ``Failures``
public struct DomainStorageConformance {
    /// One new domain for one check: the object under test, and another object over the same domain.
    public struct Domain {
        /// The backend object the checks read, write and watch.
        public let storage: any DomainStorage
        /// Another object over the same domain, whose writes stand for another process's or machine's: a
        /// second object over the same file, key or store. For a backend that keeps one domain per object
        /// (``InMemoryDomainStorage``), the same object. For a read-only backend, an object that can write
        /// what it reads (for an administrator's file, a ``FileDomainStorage`` over the same path).
        public let otherWriter: any DomainStorage

        /// Pairs the object under test with another object over the same, new domain.
        /// - Parameters:
        ///   - storage: The backend object the checks read, write and watch.
        ///   - otherWriter: Another object over the same domain, for the changes made elsewhere.
        public init(storage: any DomainStorage, otherWriter: any DomainStorage) {
            self.storage = storage
            self.otherWriter = otherWriter
        }
    }

    /// One rule of the contract, as the kit names it in a failure.
    public enum Check: String, CaseIterable, Sendable {
        /// A domain never written reads as missing, and a modify that leaves it empty (or throws) does not create it.
        case missingDomainReadsMissing = "a domain never written reads as missing"
        /// What `modify` returns is what the next snapshot returns; a later modify starts from it and keeps other keys.
        case modifyResultIsNextSnapshot = "what modify returns is what the next snapshot returns"
        /// A throwing transform changes nothing, for this object and for another, and its error is rethrown.
        case throwingTransformChangesNothing = "a throwing transform changes nothing"
        /// A transform that leaves the contents as they were returns, and leaves, the same snapshot object.
        case unchangedContentsWriteNothing = "unchanged contents write nothing"
        /// A domain emptied by a write still exists: it reads as empty, not as missing.
        case emptiedDomainStillExists = "an emptied domain still exists"
        /// A read-only backend refuses every modify and changes nothing.
        case readOnlyRefusesWrites = "a read-only backend refuses writes"
        /// While the domain is unchanged, every read returns the same snapshot object.
        case sameSnapshotWhileUnchanged = "an unchanged domain reads as the same snapshot object"
        /// After another writer's change, the next read returns a new snapshot holding it: the generation moved.
        case generationMovesAfterOtherWriter = "the generation moves with another writer's change"
        /// A watch fires after each of another writer's changes.
        case watchFiresAfterOtherWriter = "watchChanges fires after another writer's change"
        /// A cancelled watch fires no more.
        case watchStopsAfterCancel = "a cancelled watch fires no more"
        /// A released watch fires no more.
        case watchStopsWhenReleased = "a released watch fires no more"
        /// The snapshots a watch hands over (``DomainStorage/watchChanges(handingOver:)``) never go back to an older
        /// state, and once the other writer stops, the last call hands over what the domain holds, or nothing.
        case handedOverSnapshotsAreCurrent = "a watch hands over current snapshots, never older ones"
    }

    /// What one check found wrong.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The rule that was broken.
        public let check: Check
        /// What was expected and what happened instead.
        public let message: String

        /// `<rule>: <what happened>`.
        public var description: String { "\(check.rawValue): \(message)" }
    }

    /// Every failure of one run, thrown by ``DomainStorageConformance/check()``.
    public struct Failures: Error, Sendable, CustomStringConvertible {
        /// The failures, in the order the checks ran.
        public let failures: [Failure]

        /// One line per failure, after the count.
        public var description: String {
            "the backend broke \(failures.count) rule(s) of the DomainStorage contract:\n"
                + failures.map { "- \($0)" }.joined(separator: "\n")
        }
    }

    private let readOnly: Bool
    private let watches: Bool
    private let watchTimeout: Duration
    private let quietPeriod: Duration
    private let makeDomain: () throws -> Domain

    /// Prepares the checks of one backend.
    /// - Parameters:
    ///   - readOnly: Whether the backend refuses every write (an administrator's file): then the writes are
    ///     made through ``Domain/otherWriter`` only, and the backend's own `modify` must refuse them.
    ///   - watches: Whether the backend can tell of changes made elsewhere: then `watchChanges` must return a
    ///     watch and keep its promises; otherwise it is not called.
    ///   - watchTimeout: How long a watch may take to fire after a change (a failure waits this long).
    ///   - quietPeriod: How long a cancelled or released watch is watched for a call it must not make, once a
    ///     watch still running has been told of the same change.
    ///   - makeDomain: Makes a new domain that has never been written, with two objects over it; called once
    ///     per check.
    public init(readOnly: Bool = false, watches: Bool = true, watchTimeout: Duration = .seconds(10),
                quietPeriod: Duration = .milliseconds(200), makeDomain: @escaping () throws -> Domain) {
        self.readOnly = readOnly
        self.watches = watches
        self.watchTimeout = watchTimeout
        self.quietPeriod = quietPeriod
        self.makeDomain = makeDomain
    }

    /// Runs every check that applies, each on a new domain.
    /// - Returns: The failures found, in the order the checks ran; empty when the backend conforms.
    public func run() -> [Failure] {
        var checks: [(Check, (Domain) throws(Stop) -> Void)] = [(.missingDomainReadsMissing, missingDomainReadsMissing)]
        if readOnly {
            checks.append((.readOnlyRefusesWrites, readOnlyRefusesWrites))
        } else {
            checks += [(.modifyResultIsNextSnapshot, modifyResultIsNextSnapshot),
                       (.throwingTransformChangesNothing, throwingTransformChangesNothing),
                       (.unchangedContentsWriteNothing, unchangedContentsWriteNothing),
                       (.emptiedDomainStillExists, emptiedDomainStillExists)]
        }
        checks += [(.sameSnapshotWhileUnchanged, sameSnapshotWhileUnchanged),
                   (.generationMovesAfterOtherWriter, generationMovesAfterOtherWriter)]
        if watches {
            checks += [(.watchFiresAfterOtherWriter, watchFiresAfterOtherWriter),
                       (.watchStopsAfterCancel, watchStopsAfterCancel),
                       (.watchStopsWhenReleased, watchStopsWhenReleased),
                       (.handedOverSnapshotsAreCurrent, handedOverSnapshotsAreCurrent)]
        }
        var failures: [Failure] = []
        for (check, body) in checks {
            let domain: Domain
            do {
                domain = try makeDomain()
            } catch {
                failures.append(Failure(check: check, message: "makeDomain threw \(error)"))
                continue
            }
            do throws(Stop) {
                try body(domain)
            } catch {
                failures.append(Failure(check: check, message: error.message))
            }
        }
        return failures
    }

    /// Runs every check that applies, each on a new domain, and throws what they found.
    /// - Throws: ``Failures``, listing every failure, when the backend broke a rule.
    public func check() throws(Failures) {
        let failures = run()
        if !failures.isEmpty { throw Failures(failures: failures) }
    }

    // MARK: The checks

    private func missingDomainReadsMissing(_ domain: Domain) throws(Stop) {
        try expectMissing(try read(domain.storage), "a new domain")
        guard !readOnly else { return }
        let unchanged = try write(domain.storage, "a modify that changes nothing") { _ in }
        try expectMissing(unchanged, "the snapshot returned by a modify that changes nothing on a missing domain")
        try write(domain.storage, "a modify that empties a missing domain") { $0 = [:] }
        try expectMissing(try read(domain.storage), "a missing domain after a modify that changed nothing")
        _ = try throwsMarker(domain.storage) { $0["conformance.a"] = .integer(1) }
        try expectMissing(try read(domain.storage), "a missing domain after a modify whose transform threw")
        try expectMissing(try read(domain.otherWriter), "the missing domain, read by the other object")
    }

    private func modifyResultIsNextSnapshot(_ domain: Domain) throws(Stop) {
        let first = try write(domain.storage, "the first modify") { $0["conformance.a"] = .integer(1) }
        try expect(first.exists && first.contents == ["conformance.a": .integer(1)],
                   "the first modify returned \(describe(first)), not the contents it wrote")
        let read1 = try read(domain.storage)
        try expect(read1.exists && read1.contents == first.contents,
                   "modify returned \(describe(first)) but the next snapshot is \(describe(read1))")
        var given: [String: PropertyListValue]?
        let second = try write(domain.storage, "the second modify") { contents in
            given = contents
            contents["conformance.b"] = .string("two")
        }
        try expect(given == first.contents, "the second modify's transform was given \(given.map { "\($0)" } ?? "nothing"), not the stored \(first.contents)")
        let expected: [String: PropertyListValue] = ["conformance.a": .integer(1), "conformance.b": .string("two")]
        try expect(second.contents == expected, "the second modify returned \(describe(second)), not \(expected)")
        let read2 = try read(domain.storage)
        try expect(read2.contents == second.contents, "modify returned \(describe(second)) but the next snapshot is \(describe(read2))")
        let other = try read(domain.otherWriter)
        try expect(other.contents == second.contents, "the other object reads \(describe(other)) after the modify returned \(describe(second))")
    }

    private func throwingTransformChangesNothing(_ domain: Domain) throws(Stop) {
        try write(domain.storage, "the modify that sets up the domain") { $0["conformance.a"] = .integer(1) }
        let before = try read(domain.storage)
        let rethrown = try throwsMarker(domain.storage) { contents in
            contents["conformance.a"] = .integer(2)
            contents["conformance.b"] = .integer(3)
        }
        try expect(rethrown, "modify did not throw the error its transform threw")
        let after = try read(domain.storage)
        try expect(after.contents == before.contents, "after a throwing transform the domain reads \(describe(after)), not \(describe(before))")
        let other = try read(domain.otherWriter)
        try expect(other.contents == before.contents,
                   "after a throwing transform the other object reads \(describe(other)), not \(describe(before))")
    }

    private func unchangedContentsWriteNothing(_ domain: Domain) throws(Stop) {
        try write(domain.storage, "the modify that sets up the domain") { $0["conformance.a"] = .integer(1) }
        let before = try read(domain.storage)
        let returned = try write(domain.storage, "a modify that stores the value already stored") { $0["conformance.a"] = .integer(1) }
        try expect(returned === before,
                   "a modify that changed nothing returned a new snapshot object (callers' caches keyed by the snapshot are dropped for nothing)")
        let after = try read(domain.storage)
        try expect(after === before, "after a modify that changed nothing, the next snapshot is a new object")
    }

    private func emptiedDomainStillExists(_ domain: Domain) throws(Stop) {
        try write(domain.storage, "the modify that sets up the domain") { $0["conformance.a"] = .integer(1) }
        let emptied = try write(domain.storage, "a modify that removes every key") { $0 = [:] }
        try expect(emptied.exists && emptied.contents.isEmpty, "a modify that removed every key returned \(describe(emptied)), not an existing empty domain")
        let read = try read(domain.storage)
        try expect(read.exists && read.contents.isEmpty, "an emptied domain reads as \(describe(read)), not as an existing empty domain")
        let other = try self.read(domain.otherWriter)
        try expect(other.exists && other.contents.isEmpty, "the other object reads the emptied domain as \(describe(other))")
    }

    private func readOnlyRefusesWrites(_ domain: Domain) throws(Stop) {
        try write(domain.otherWriter, "the other writer's modify") { $0["conformance.a"] = .integer(1) }
        let before = try read(domain.storage)
        var ran = false
        do {
            try domain.storage.modify(repairing: .failIfUnreadable) { contents in
                ran = true
                contents["conformance.a"] = .integer(2)
            }
            throw Stop("modify of a read-only backend succeeded")
        } catch let stop as Stop {
            throw stop
        } catch {}
        let after = try read(domain.otherWriter)
        try expect(after.contents == before.contents,
                   "a refused modify \(ran ? "ran its transform and " : "")left the domain as \(describe(after)), not \(describe(before))")
    }

    private func sameSnapshotWhileUnchanged(_ domain: Domain) throws(Stop) {
        let missing1 = try read(domain.storage), missing2 = try read(domain.storage)
        try expect(missing1 === missing2, "two reads of an unchanged missing domain returned different snapshot objects")
        try write(readOnly ? domain.otherWriter : domain.storage, "the modify that sets up the domain") { $0["conformance.a"] = .integer(1) }
        let first = try read(domain.storage)
        for _ in 0..<3 {
            let again = try read(domain.storage)
            try expect(again === first, "two reads of an unchanged domain returned different snapshot objects")
        }
    }

    /// Three changes by the other writer (creating the domain, changing it, emptying it): after each, the next
    /// read returns a new snapshot holding it.
    ///
    /// Where the backend reports a generation (``DomainStorage/generation``), its promise is checked too: a
    /// generation reported after a read must not be reported again once a change is visible. The package's own
    /// domains that start a watch first (file and administrators' domains) have it started, and are read
    /// until they report one, so that the check is made on each of them.
    private func generationMovesAfterOtherWriter(_ domain: Domain) throws(Stop) {
        (domain.storage as? any VouchingStorage)?.startVouching()
        let steps: [(String, ([String: PropertyListValue]) -> [String: PropertyListValue])] = [
            ("creates the domain", { _ in ["conformance.a": .integer(1)] }),
            ("changes a value", { _ in ["conformance.a": .integer(2)] }),
            ("removes every key", { _ in [:] }),
        ]
        for (what, change) in steps {
            // In the order a suite takes them: the read, then the generation it stays true at.
            var before = try read(domain.storage)
            var generation = domain.storage.generation
            // A watch placed just now may vouch only from the next read on.
            for _ in 0..<3 where generation == nil {
                before = try read(domain.storage)
                generation = domain.storage.generation
            }
            var expected: [String: PropertyListValue] = [:]
            try write(domain.otherWriter, "the other writer's modify that \(what)") { contents in
                contents = change(contents)
                expected = contents
            }
            if let generation, domain.storage.generation == generation {
                throw Stop("after the other writer \(what), the backend reported the generation \(generation) it reported before the change")
            }
            let after = try read(domain.storage)
            try expect(after !== before, "after the other writer \(what), a read returned the same snapshot object as before (\(describe(before)))")
            try expect(after.exists && after.contents == expected,
                       "after the other writer \(what), a read returned \(describe(after)), not \(expected)")
            if let generation, domain.storage.generation == generation {
                throw Stop("after the other writer \(what) and a read of it, the backend reported the generation \(generation) it reported before the change")
            }
        }
    }

    private func watchFiresAfterOtherWriter(_ domain: Domain) throws(Stop) {
        let calls = CallCounter()
        let watch = try startWatch(domain.storage, calls)
        defer { withExtendedLifetime(watch) {} }
        for (index, value) in [PropertyListValue.integer(1), .integer(2)].enumerated() {
            let before = calls.count
            try write(domain.otherWriter, "the other writer's modify") { $0["conformance.a"] = value }
            try expect(calls.wait(forMoreThan: before, within: watchTimeout),
                       "no call within \(watchTimeout) after the other writer's \(index == 0 ? "first" : "second") change")
        }
    }

    /// Three changes by the other writer, each waited for until a call hands it over (or hands over nothing: the
    /// caller then reads). A snapshot handed over holds the state before the first change or one of the changes,
    /// and they never go backwards (the contract allows a call with the state "at that moment or later", so a
    /// call before the first change, or a second call for one change, is no fault). When a backend hands over
    /// nothing, the caller reads, and there is nothing more to check.
    private func handedOverSnapshotsAreCurrent(_ domain: Domain) throws(Stop) {
        let calls = CallCounter()
        let handed = Mutex<[DomainSnapshot?]>([])
        guard let watch = domain.storage.watchChanges(handingOver: { snapshot in
            handed.withLock { $0.append(snapshot) }
            calls.record()
        }) else {
            throw Stop("watchChanges(handingOver:) returned nil: the backend cannot tell of changes made elsewhere (pass watches: false if that is so)")
        }
        defer { withExtendedLifetime(watch) {} }
        /// Which state a snapshot handed over holds: 0 before the first change, else the change's number.
        func state(_ snapshot: DomainSnapshot) throws(Stop) -> Int {
            switch snapshot.contents["conformance.a"] {
            case nil: return 0
            case .integer(let value)? where (1...3).contains(value): return Int(value)
            default: throw Stop("a watch handed over \(describe(snapshot)), which holds none of the other writer's changes")
            }
        }
        for value in 1...3 {
            var examined = handed.withLock { $0.count }
            try write(domain.otherWriter, "the other writer's change \(value)") { $0["conformance.a"] = .integer(value) }
            let deadline = ContinuousClock.now + watchTimeout
            var told = false
            while !told, case let remaining = deadline - ContinuousClock.now, remaining > .zero,
                  calls.wait(forMoreThan: examined, within: remaining) {
                let snapshots = handed.withLock { $0 }
                for snapshot in snapshots[examined...] {
                    guard let snapshot else { told = true; continue }
                    if try state(snapshot) >= value { told = true }
                }
                examined = snapshots.count
            }
            try expect(told, "no call handed over the other writer's change \(value) (or nothing) within \(watchTimeout)")
        }
        calls.waitUntilQuiet(for: quietPeriod)
        var newest = 0
        for case let snapshot? in handed.withLock({ $0 }) {
            let value = try state(snapshot)
            try expect(value >= newest, "a watch handed over the state of change \(value) after that of change \(newest): it went back")
            newest = value
        }
    }

    private func watchStopsAfterCancel(_ domain: Domain) throws(Stop) {
        try watchStops(domain, release: false)
    }

    private func watchStopsWhenReleased(_ domain: Domain) throws(Stop) {
        try watchStops(domain, release: true)
    }

    /// Starts a watch and a control watch, lets both hear a change, stops the first (cancel, or releasing it),
    /// and checks that the next change reaches only the control watch.
    private func watchStops(_ domain: Domain, release: Bool) throws(Stop) {
        let stopped = CallCounter(), control = CallCounter()
        var watch: (any DomainChangeWatch)? = try startWatch(domain.storage, stopped)
        let controlWatch = try startWatch(domain.storage, control)
        defer { withExtendedLifetime(controlWatch) {} }
        try write(domain.otherWriter, "the other writer's first modify") { $0["conformance.a"] = .integer(1) }
        try expect(stopped.wait(forMoreThan: 0, within: watchTimeout) && control.wait(forMoreThan: 0, within: watchTimeout),
                   "could not be checked: the watches did not fire within \(watchTimeout) after the first change")
        // Nothing in flight when the watch stops: a call already running may finish, and none should be.
        stopped.waitUntilQuiet(for: quietPeriod)
        if release { watch = nil } else { watch?.cancel() }
        withExtendedLifetime(watch) {}
        let callsWhenStopped = stopped.count
        let controlBefore = control.count
        try write(domain.otherWriter, "the other writer's second modify") { $0["conformance.a"] = .integer(2) }
        try expect(control.wait(forMoreThan: controlBefore, within: watchTimeout),
                   "could not be checked: a watch still running did not fire within \(watchTimeout) after the second change")
        _ = stopped.wait(forMoreThan: callsWhenStopped, within: quietPeriod)
        try expect(stopped.count == callsWhenStopped,
                   "the watch was \(release ? "released" : "cancelled") and still fired after the next change")
    }

    // MARK: Helpers

    /// Why a check stopped.
    private struct Stop: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(Stop) {
        if !condition { throw Stop(message()) }
    }

    private func expectMissing(_ snapshot: DomainSnapshot, _ what: String) throws(Stop) {
        try expect(!snapshot.exists && snapshot.contents.isEmpty, "\(what) reads as \(describe(snapshot)), not as missing")
    }

    private func read(_ storage: any DomainStorage) throws(Stop) -> DomainSnapshot {
        do {
            return try storage.snapshot()
        } catch {
            throw Stop("snapshot() of \(storage.location) threw \(error)")
        }
    }

    @discardableResult
    private func write(_ storage: any DomainStorage, _ what: String,
                       _ transform: (inout [String: PropertyListValue]) -> Void) throws(Stop) -> DomainSnapshot {
        do {
            return try storage.modify(repairing: .failIfUnreadable) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
                transform(&contents)
            }
        } catch {
            throw Stop("\(what) of \(storage.location) threw \(error)")
        }
    }

    /// Runs a modify whose transform applies `change` and then throws a marker error.
    /// - Returns: Whether the modify threw that very error.
    private func throwsMarker(_ storage: any DomainStorage, _ change: (inout [String: PropertyListValue]) -> Void) throws(Stop) -> Bool {
        let marker = TransformMarker()
        do {
            try storage.modify(repairing: .failIfUnreadable) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
                change(&contents)
                throw .unknownError(error: marker)
            }
        } catch {
            if case .unknownError(.some(let thrown as TransformMarker)) = error { return thrown === marker }
            return false
        }
        throw Stop("modify succeeded although its transform threw")
    }

    private func startWatch(_ storage: any DomainStorage, _ calls: CallCounter) throws(Stop) -> any DomainChangeWatch {
        guard let watch = storage.watchChanges({ calls.record() }) else {
            throw Stop("watchChanges returned nil: the backend cannot tell of changes made elsewhere (pass watches: false if that is so)")
        }
        return watch
    }

    private func describe(_ snapshot: DomainSnapshot) -> String {
        snapshot.exists ? "\(snapshot.contents)" : "a missing domain"
    }
}

/// The error a check's transform throws, told apart by identity.
private final class TransformMarker: Error, Sendable {}
