import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Observation: the options .new, .old, .initial and .prior, with KVO's meanings", .timeLimit(.minutes(1)))
struct ObservingOptionsTests {
    /// Every combination of the four options.
    static let allCombinations: [UInt] = Array(0..<16)

    @Test("Each combination of options gives exactly the notifications and the values it asks for", arguments: allCombinations)
    func everyCombinationGivesWhatItAsksFor(rawOptions: UInt) {
        let options = PrefsObservingOptions(rawValue: rawOptions)
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 10])
        let log = ObservationLog<ObservedNotification<Int>>()
        let token = prefs.logLaunchCount(options, into: log)

        var expected: [ObservedNotification<Int>] = []
        if options.contains(.initial) {
            expected.append(ObservedNotification(isPrior: false, oldValue: nil, newValue: options.contains(.new) ? 10 : nil))
        }
        #expect(log.events == expected, "after observe returned")

        for value in [11, 12] {
            if options.contains(.prior) {
                expected.append(ObservedNotification(isPrior: true, oldValue: options.contains(.old) ? value - 1 : nil, newValue: nil))
            }
            expected.append(ObservedNotification(
                isPrior: false,
                oldValue: options.contains(.old) ? value - 1 : nil,
                newValue: options.contains(.new) ? value : nil
            ))
            prefs.launchCount = value
        }
        #expect(log.events == expected)
        token.invalidate()
    }

    @Test("The options have distinct raw values and the Apple-platform type name")
    func optionsAreDistinct() {
        let all: [NSKeyValueObservingOptions] = [.new, .old, .initial, .prior]
        #expect(Set(all.map(\.rawValue)).count == 4)
        #expect(all.allSatisfy { $0.rawValue.nonzeroBitCount == 1 })
    }

    @Test(".initial calls the handler once, synchronously inside observe, with the current value when .new is asked, and no old value")
    func initialFiresOnceAtRegistration() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 3, "appearance": "dark"])
        let log = ObservationLog<ObservedNotification<[String: PropertyListValue]>>()
        let token = prefs.logValues([.initial, .new, .old], into: log)
        #expect(log.events == [ObservedNotification(isPrior: false, oldValue: nil, newValue: ["launchCount": .integer(3), "appearance": .string("dark")])])

        prefs.launchCount = 4
        #expect(log.count == 2, "one initial notification, then one per write")
        #expect(log.events.last?.oldValue == ["launchCount": .integer(3), "appearance": .string("dark")])
        token.invalidate()
    }

    @Test(".prior arrives before the write, with isPrior set, while the instance still holds the old value; the after-notification follows for the same write")
    func priorComesBeforeTheWrite() {
        let prefs = ObservedPrefs(suite: observationSuite(), values: ["launchCount": 1])
        // What the handler saw: isPrior, old, new, and what the instance itself held at that moment.
        let log = ObservationLog<(Bool, Int?, Int?, Int)>()
        let token = prefs.observe(\.launchCount, options: [.prior, .old, .new]) { prefs, change in
            log.append((change.isPrior, change.oldValue, change.newValue, prefs.launchCount))
        }
        prefs.launchCount = 2
        prefs.values = ["launchCount": 3]
        let events = log.events
        #expect(events.map(\.0) == [true, false, true, false])
        #expect(events.map(\.1) == [1, 1, 2, 2])
        #expect(events.map(\.2) == [nil, 2, nil, 3])
        #expect(events.map(\.3) == [1, 2, 2, 3], "the prior handler runs before the stored value changes")
        token.invalidate()
    }

    @Test(".prior notifications of several observers all come before any after-notification of the same write")
    func allPriorsPrecedeAllAfters() {
        let prefs = ObservedPrefs(suite: observationSuite())
        let order = ObservationLog<String>()
        let first = prefs.observe(\.launchCount, options: [.prior]) { _, change in order.append("first \(change.isPrior ? "prior" : "after")") }
        let second = prefs.observe(\.values, options: [.prior]) { _, change in order.append("second \(change.isPrior ? "prior" : "after")") }
        prefs.launchCount = 1
        #expect(order.events == ["first prior", "second prior", "first after", "second after"])
        first.invalidate()
        second.invalidate()
    }
}
