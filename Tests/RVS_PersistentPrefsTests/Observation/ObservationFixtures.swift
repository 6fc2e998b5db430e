import Foundation
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// Shared fixtures of the observation tests (issue 4). Names begin with `Observ…` so that they do not
// collide with the fixtures of other test files in the same module.

/// The SPEC's `AppPreferences`, over an injected suite (an in-memory or file domain, never the
/// user's real preferences), with two more entry names that the `TestWorker` writes.
final class ObservedPrefs: RVS_PersistentPrefs, BaseClassWriteTarget {
    let suite: DefaultsSuite?

    init(key: String = "settings", suite: DefaultsSuite?, values: [String: Any]? = [:]) {
        self.suite = suite
        super.init(key: key, values: values)
    }

    override var keys: [String] { ["launchCount", "appearance", "round", "writer"] }
    override var userDefaults: DefaultsSuite? { suite }

    var launchCount: Int {
        get { self["launchCount"] as? Int ?? 0 }
        set { self["launchCount"] = newValue }
    }

    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }
}

/// A suite over `domain` with the given argument domain (never this test process's own arguments).
func observationSuite(_ domain: any DomainStorage = InMemoryDomainStorage(), arguments: [String] = []) -> DefaultsSuite {
    DefaultsSuite(persistentDomain: domain, arguments: ["program"] + arguments)
}

/// What handlers saw, in order; appended to from any thread.
final class ObservationLog<Event>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Event] = []

    func append(_ event: Event) { lock.withLock { storage.append(event) } }
    var events: [Event] { lock.withLock { storage } }
    var count: Int { lock.withLock { storage.count } }
}

/// One notification as a handler received it, with collections made comparable.
struct ObservedNotification<Value: Equatable>: Equatable {
    var isPrior: Bool
    var oldValue: Value?
    var newValue: Value?
}

/// A collection of native values as a comparable property-list dictionary (`nil` stays `nil`).
func comparable(_ values: [String: Any]?) -> [String: PropertyListValue]? {
    values.map { PropertyListValue($0)?.dictionaryValue ?? ["<not a property list>": .bool(true)] }
}

extension ObservedPrefs {
    /// Observes `\.values`, logging every notification in comparable form.
    func logValues(_ options: PrefsObservingOptions, into log: ObservationLog<ObservedNotification<[String: PropertyListValue]>>) -> PrefsObservation {
        observe(\.values, options: options) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: comparable(change.oldValue), newValue: comparable(change.newValue)))
        }
    }

    /// Observes `\.launchCount`, logging every notification.
    func logLaunchCount(_ options: PrefsObservingOptions, into log: ObservationLog<ObservedNotification<Int>>) -> PrefsObservation {
        observe(\.launchCount, options: options) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
        }
    }
}

/// Every element of `stream` until it ends. Only call when the stream is known to end (its instance
/// is gone), so the wait is bounded by the elements already buffered.
func collectAll(_ stream: AsyncStream<PrefsChange>) async -> [[String: PropertyListValue]] {
    var collected: [[String: PropertyListValue]] = []
    for await change in stream { collected.append(change.collection) }
    return collected
}

/// The result of `task`. Cancelling the waiting test (when its time limit passes) cancels `task` too,
/// so that a sequence that never ends fails the test instead of hanging the run.
func result<Success: Sendable>(of task: Task<Success, Never>) async -> Success {
    await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
}
