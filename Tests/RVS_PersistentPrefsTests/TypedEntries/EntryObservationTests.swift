import Foundation
import Testing
import Observation
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("Typed entries: observation")
struct EntryObservationTests {
    @Test("observe(\\.appearance, options: [.old, .new]) is given typed old and new values, and only when the entry changed")
    func keyPathObservationIsTyped() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let log = ObservationLog<ObservedNotification<TypedAppearance>>()
        let token = settings.observe(\.appearance, options: [.old, .new]) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
        }
        settings.appearance = .dark
        settings.appearance = .light
        settings.launchCount = 2    // another entry: not told
        settings.appearance = .light  // the same value: not told
        settings["appearance"] = nil
        #expect(log.events == [
            ObservedNotification(isPrior: false, oldValue: .system, newValue: .dark),
            ObservedNotification(isPrior: false, oldValue: .dark, newValue: .light),
            ObservedNotification(isPrior: false, oldValue: .light, newValue: .system),
        ])
        withExtendedLifetime(token) {}
    }

    @Test("Observing an Optional entry with .initial and .prior")
    func optionalEntryWithInitialAndPrior() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let date = Date(timeIntervalSinceReferenceDate: 1_000)
        let log = ObservationLog<ObservedNotification<Date?>>()
        let token = settings.observe(\.lastOpened, options: [.initial, .prior, .old, .new]) { _, change in
            log.append(ObservedNotification(isPrior: change.isPrior, oldValue: change.oldValue, newValue: change.newValue))
        }
        settings.lastOpened = date
        settings.lastOpened = nil
        #expect(log.events == [
            ObservedNotification(isPrior: false, oldValue: nil, newValue: .some(nil)),
            ObservedNotification(isPrior: true, oldValue: .some(nil), newValue: nil),
            ObservedNotification(isPrior: false, oldValue: .some(nil), newValue: .some(date)),
            ObservedNotification(isPrior: true, oldValue: .some(date), newValue: nil),
            ObservedNotification(isPrior: false, oldValue: .some(date), newValue: .some(nil)),
        ])
        withExtendedLifetime(token) {}
    }

    @Test("An entry's observer with .prior is told nothing, prior or after, of a write that leaves its value as it was: the same value, the same member of a struct, a subscript write of it, a removal of an entry not stored")
    func priorObserverIsNotToldOfWritesThatChangeNothing() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.appearance = .dark
        settings.window.width = 5
        let log = ObservationLog<String>()
        let tokens = [
            settings.observe(\.appearance, options: [.prior, .new]) { _, change in log.append("appearance \(change.isPrior ? "prior" : "after")") },
            settings.observe(\.window, options: [.prior]) { _, change in log.append("window \(change.isPrior ? "prior" : "after")") },
            settings.observe(\.lastOpened, options: [.prior]) { _, change in log.append("lastOpened \(change.isPrior ? "prior" : "after")") },
        ]
        settings.appearance = .dark
        settings["appearance"] = "dark"
        settings.window.width = 5
        settings.window = settings.window
        settings.lastOpened = nil
        #expect(log.events.isEmpty, "\(log.events)")
        settings.window.width = 6
        settings.appearance = .light
        #expect(log.events == ["window prior", "window after", "appearance prior", "appearance after"])
        withExtendedLifetime(tokens) {}
    }

    @Test("updates(of:) yields the current value first, then each change of that entry only")
    func updatesYieldCurrentThenChanges() async throws {
        let fixture = try TypedFixture()
        var settings: TypedSettings? = fixture.settings()
        settings!.appearance = .light
        let updates = settings!.updates(of: \.$appearance)
        settings!.launchCount = 5        // another entry: nothing
        settings!.appearance = .light    // the same value: nothing
        settings!.appearance = .dark
        settings!["appearance"] = "sepia"  // does not decode: the default
        settings!["appearance"] = nil      // removed: the default again, but the stored value changed
        settings!.appearance = .light
        settings = nil  // the sequence ends with its instance
        var received: [TypedAppearance] = []
        for await appearance in updates { received.append(appearance) }
        #expect(received == [.light, .dark, .system, .system, .light])
    }

    @Test("updates(of:) of a Codable entry yields in-place changes and modify's changes")
    func updatesOfCodableEntry() async throws {
        let fixture = try TypedFixture()
        var settings: TypedSettings? = fixture.settings()
        let updates = settings!.updates(of: \.$window)
        settings!.window.width = 1000
        settings!.modify(\.$window) { $0.height = 700 }
        settings = nil
        var received: [TypedFrame] = []
        for await frame in updates { received.append(frame) }
        #expect(received == [TypedFrame(), TypedFrame(width: 1000), TypedFrame(width: 1000, height: 700)])
    }

    @Test("updates(of:) can be read from another task while the instance is written")
    func updatesAcrossTasks() async throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let updates = settings.updates(of: \.$launchCount)
        let reader = Task {
            var seen: [Int] = []
            for await count in updates {
                seen.append(count)
                if count == 3 { break }
            }
            return seen
        }
        for value in 1...3 { settings.launchCount = value }
        let seen = await result(of: reader)
        #expect(seen.first == 0 && seen.last == 3 && seen == seen.sorted())
    }
}

@Suite("Typed entries under Swift Observation")
struct EntrySwiftObservationTests {
    @Test("Code that read one typed entry is told of a write to it, not of a write to another entry")
    func typedReadsAreTrackedPerEntry() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        let volumeChanged = ChangeFlag()
        withObservationTracking { _ = settings.volume } onChange: { volumeChanged.fire() }
        settings.launchCount = 3
        #expect(volumeChanged.count == 0)
        settings.volume = 0.8
        #expect(volumeChanged.count == 1)
    }
}

/// A computed property over two entries that reads the second only when the first allows it: a key path whose
/// entries read depend on their values.
final class BranchingSettings: RVS_PersistentPrefs {
    @Entry("muted") var muted = false
    @Entry("volume") var volume = 5
    var effectiveVolume: Int { muted ? 0 : volume }
}

@Suite("Typed entries: observing a key path whose entries read depend on their values")
struct BranchingKeyPathTests {
    let directory = TemporaryDirectory()

    @Test("Muted, a volume change is not told (the value stays 0); unmuted, it is, and so is every later volume change, whether the writes are the instance's own or made elsewhere",
          arguments: [false, true])
    func everyChangeOfTheValueIsTold(madeElsewhere: Bool) throws {
        let observed = BranchingSettings(key: "settings", suite: try directory.fileSuite("branching"))
        let writer = madeElsewhere ? BranchingSettings(key: "settings", suite: try directory.fileSuite("branching")) : observed
        writer.muted = true
        if madeElsewhere { observed.watchesExternalChanges = true }
        let told = WaitableValue<[Int]>([])
        let token = observed.observe(\.effectiveVolume, options: [.new]) { _, change in
            if let value = change.newValue { told.update { $0.append(value) } }
        }
        writer.volume = 6    // muted: still 0, not told
        writer.muted = false // 0 → 6: told
        #expect(told.wait(timeout: 10) { $0.contains(6) }, "\(told.current)")
        writer.volume = 7    // 6 → 7: told
        #expect(told.wait(timeout: 10) { $0.contains(7) }, "the volume change after unmuting was not told: \(told.current)")
        #expect(told.current == [6, 7])
        token.invalidate()
        observed.watchesExternalChanges = false
    }
}
