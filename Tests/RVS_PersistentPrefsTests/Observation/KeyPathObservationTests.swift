import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Observation: any key path of the instance can be observed", .timeLimit(.minutes(1)))
struct KeyPathObservationTests {
    @Test("The Apple-platform call observe(\\.values, options: [.old, .new]) hears a write with the collection before and after it")
    func valuesObserverGetsOldAndNewCollections() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        let log = ObservationLog<([String: Any]?, [String: Any]?)>()
        let token: NSKeyValueObservation = prefs.observe(\.values, options: [.old, .new]) { _, change in
            log.append((change.oldValue, change.newValue))
        }
        prefs.appearance = "dark"
        #expect(prefs.lastError == nil)
        let events = log.events
        #expect(events.count == 1)
        #expect(comparable(events.first?.0) == ["launchCount": .integer(1)])
        #expect(comparable(events.first?.1) == ["launchCount": .integer(1), "appearance": .string("dark")])
        token.invalidate()
    }

    @Test("A typed subclass property (\\.launchCount) is observed with its own value type, and the handler receives the subclass")
    func typedSubclassPropertyIsObservedWithSubclassHandler() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let log = ObservationLog<(Int?, Int?, String)>()
        let token = prefs.observe(\.launchCount, options: [.old, .new]) { prefs, change in
            // `appearance` exists only on the subclass and `Int?` only for this key path: this compiles
            // only because the handler gets `ObservedPrefs` and a `PrefsObservedChange<Int>`.
            let old: Int? = change.oldValue
            let new: Int? = change.newValue
            log.append((old, new, prefs.appearance))
        }
        prefs.launchCount = 5
        prefs.launchCount += 1
        let events = log.events
        #expect(events.map(\.0) == [0, 5])
        #expect(events.map(\.1) == [5, 6])
        #expect(events.map(\.2) == ["system", "system"])
        token.invalidate()
    }

    @Test("Observers of different key paths are all told of the same writes, in the order they were added")
    func everyKeyPathHearsEveryWrite() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let order = ObservationLog<String>()
        let appearances = ObservationLog<ObservedNotification<String>>()
        let tokens = [
            prefs.observe(\.values) { _, _ in order.append("values") },
            prefs.observe(\.launchCount) { _, _ in order.append("launchCount") },
            prefs.observe(\.appearance, options: [.old, .new]) { _, change in
                order.append("appearance")
                appearances.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
            },
            prefs.observe(\.count) { _, _ in order.append("count") },
            prefs.observe(\.key) { _, _ in order.append("key") },
        ]
        prefs.launchCount = 1  // changes launchCount only; every observer is still told
        prefs.appearance = "dark"
        let round = ["values", "launchCount", "appearance", "count", "key"]
        #expect(order.events == round + round)
        #expect(appearances.events == [
            ObservedNotification(isPrior: false, oldValue: "system", newValue: "system"),
            ObservedNotification(isPrior: false, oldValue: "system", newValue: "dark"),
        ])
        tokens.forEach { $0.invalidate() }
    }

    @Test("Each change notification is a .setting change")
    func changesAreSettings() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let kinds = ObservationLog<PrefsObservedChange<Int>.Kind>()
        let token = prefs.observe(\.launchCount, options: [.initial, .prior]) { _, change in kinds.append(change.kind) }
        prefs.launchCount = 1
        #expect(kinds.count == 3)
        #expect(kinds.events.allSatisfy { $0 == .setting })
        token.invalidate()
    }
}
