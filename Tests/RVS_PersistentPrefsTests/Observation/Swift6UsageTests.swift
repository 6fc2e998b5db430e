import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A user's main-actor model, written the way a Swift 6 app would: it keeps the token, and its
/// handler updates main-actor state. This file compiling without warnings in Swift 6 mode (the
/// package builds its tests with -warnings-as-errors) is part of the proof.
@MainActor
private final class LaunchCounterModel {
    let prefs: ObservedPrefs
    private(set) var launchCount = -1
    private(set) var appearanceHistory: [String] = []
    private var tokens: [NSKeyValueObservation] = []

    init(prefs: ObservedPrefs) {
        self.prefs = prefs
        tokens.append(prefs.observe(\.launchCount, options: [.initial, .new]) { [weak self] _, change in
            self?.launchCount = change.newValue ?? -1
        })
        tokens.append(prefs.observe(\.values, options: [.old, .new]) { [weak self] prefs, change in
            if change.oldValue?["appearance"] as? String != change.newValue?["appearance"] as? String {
                self?.appearanceHistory.append(prefs.appearance)
            }
        })
    }

    func stop() { tokens.forEach { $0.invalidate() } }
}

@Suite("Observation: usable from Swift 6 code without warnings", .timeLimit(.minutes(1)))
struct Swift6UsageTests {
    @Test("A main-actor model keeps tokens whose handlers update its state")
    @MainActor
    func mainActorModelObserves() {
        let model = LaunchCounterModel(prefs: ObservedPrefs(suite: observationSuite(), values: ["launchCount": 3]))
        #expect(model.launchCount == 3)
        model.prefs.launchCount += 1
        model.prefs.appearance = "dark"
        model.prefs.appearance = "dark"
        model.prefs.appearance = "light"
        #expect(model.launchCount == 4)
        #expect(model.appearanceHistory == ["dark", "light"])
        model.stop()
    }

    @Test("Turning watching off drops the main-actor handler's calls for changes made elsewhere that were queued before")
    @MainActor
    func watchingOffDropsQueuedCalls() async {
        let suite = observationSuite()
        let watched = ObservedPrefs(suite: suite)
        watched.watchesExternalChanges = true
        var heard: [Int] = []
        let token = watched.observe(\.launchCount, options: [.new]) { _, change in heard.append(change.newValue ?? -1) }
        let before = watched.externalChanges.deliveriesCompleted
        ObservedPrefs(suite: suite).launchCount = 7
        // Holding the main actor meanwhile: the delivery queues its call to it.
        let giveUp = Date().addingTimeInterval(30)
        while watched.externalChanges.deliveriesCompleted == before && Date() < giveUp { usleep(1_000) }
        #expect(watched.externalChanges.deliveriesCompleted > before, "the change was never delivered")
        watched.watchesExternalChanges = false
        // What was queued on the main actor runs before a task queued after it.
        await Task { @MainActor in }.value
        #expect(heard.isEmpty, "heard \(heard) after watching was turned off")
        token.invalidate()
    }

    @Test("A task iterates changes with for await while another context writes")
    @MainActor
    func forAwaitInATask() async {
        var prefs: ObservedPrefs? = ObservedPrefs(suite: observationSuite())
        let changes = prefs!.changes
        let reader = Task.detached {
            var launchCounts: [Int] = []
            for await change in changes {
                launchCounts.append(change.values["launchCount"] as? Int ?? 0)
            }
            return launchCounts
        }
        for value in 1...3 { prefs!.launchCount = value }
        prefs = nil
        #expect(await result(of: reader) == [1, 2, 3])
    }
}
