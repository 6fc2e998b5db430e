// Handlers as people write them (SPEC §12): the Sharing article's "Hear the other side" example, the
// Observation article's @MainActor SettingsModel and a typed entry's observer and `updates(of:)`, each with
// a handler body that captures and contains closures, while another process (this program, run as
// `MainActorHandlers writer DIRECTORY`) writes 200 times. Every main-actor handler must run on the main
// thread, and each must hear the last write; so must a main-actor model's Swift Observation tracking, whose
// onChange must run on the main actor. Built in Swift 6 mode here, and as MainActorHandlersSwift5 (the same
// file) in Swift 5 mode. It exits 0 when every check holds, and 1 with the reason otherwise.
import Foundation
import Observation
import RVS_PersistentPrefs

enum Appearance: String, Codable, Sendable { case system, light, dark }

final class AppPreferences: RVS_PersistentPrefs {
    @Entry("appearance") var appearance = Appearance.system
    @Entry("counter") var counter = 0
}

let key = "com.example.app.preferences"
let writes = 200

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("MainActorHandlers: \(message)\n".utf8))
    exit(1)
}

// The other process: 200 writes, the last one setting count to 200.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "writer" {
    let prefs = AppPreferences(key: key)
    for round in 1...writes {
        prefs.appearance = round % 2 == 0 ? .dark : .light
        prefs.counter = round
        if let error = prefs.lastError { fail("the writer's write \(round) failed: \(error)") }
    }
    exit(0)
}

/// The Observation article's main-actor model, its handler holding a closure.
@MainActor
final class SettingsModel {
    let prefs = AppPreferences(key: key)
    private(set) var appearance = Appearance.system
    private(set) var heard: [Int] = []
    private var tokens: [PrefsObservation] = []

    init() {
        prefs.watchesExternalChanges = true
        appearance = prefs.appearance
        tokens.append(prefs.observe(\.appearance, options: [.new]) { [weak self] _, change in
            MainActor.assertIsolated("the model's handler ran off the main actor")
            let names = [change.newValue].compactMap { $0 }.map { $0.rawValue }
            self?.appearance = names.first.flatMap(Appearance.init(rawValue:)) ?? .system
        })
        tokens.append(prefs.observe(\.counter, options: [.old, .new]) { [weak self] _, change in
            MainActor.assertIsolated("the model's counter handler ran off the main actor")
            self?.heard.append(change.newValue.map { $0 } ?? -1)
        })
    }
}

/// Marks the main queue, so that a nonisolated closure can tell whether it runs the main actor's work (after an
/// async `main` parks the main thread, a worker thread drains the main queue on Linux).
let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// The Observation article's Swift Observation, from a main-actor model: tracking the counter, told of the other
/// process's writes through `onChange`, which must run on the main actor (SPEC §12).
@MainActor
final class TrackedModel {
    let prefs = AppPreferences(key: key)
    private(set) var counter = 0
    private(set) var changes = 0

    init() {
        prefs.watchesExternalChanges = true
        track()
    }

    private func track() {
        counter = withObservationTracking { prefs.counter } onChange: { [weak self] in
            if DispatchQueue.getSpecific(key: mainQueueKey) != true {
                fail("Swift Observation's onChange ran off the main actor for a change made elsewhere")
            }
            Task { @MainActor in
                self?.changes += 1
                self?.track()
            }
        }
    }
}

/// A handler of another actor runs on that actor.
actor Tally {
    private var prefs: AppPreferences?
    private var token: PrefsObservation?
    private(set) var last = 0

    func start() {
        let prefs = AppPreferences(key: key)
        prefs.watchesExternalChanges = true
        token = prefs.observe(\.counter, options: [.new]) { _, change in
            self.assertIsolated("the actor's handler ran off its actor")
            self.last = [change.newValue ?? 0].map { $0 }.max() ?? 0
        }
        self.prefs = prefs
    }
}

@MainActor
func run() async {
    let directory = ProcessInfo.processInfo.environment["RVS_PREFS_DIRECTORY"] ?? ""
    if directory.isEmpty { fail("set RVS_PREFS_DIRECTORY to a directory of its own") }

    // The Sharing article's example, with a closure inside the handler (the crash).
    let prefs = AppPreferences(key: key)
    prefs.watchesExternalChanges = true
    var sharingHeard = 0
    let token = prefs.observe(\.appearance, options: [.old, .new]) { _, change in
        MainActor.assertIsolated("the Sharing example's handler ran off the main actor")
        print("appearance:", change.newValue.map { $0.rawValue } ?? "-")
        sharingHeard += 1
    }

    let model = SettingsModel()
    _ = mainQueueKey
    let tracked = TrackedModel()
    let tally = Tally()
    await tally.start()
    var updatesHeard = 0
    let updates = Task { @MainActor in
        for await value in prefs.updates(of: \.$counter) {
            MainActor.assertIsolated("updates(of:) resumed off the main actor")
            updatesHeard = [value].map { $0 }.first ?? 0
            if value == writes { break }
        }
    }

    // A write through the instance on the main thread tells a main-actor handler before it returns.
    let before = sharingHeard
    prefs.appearance = .dark
    if sharingHeard != before + 1 { fail("a main-thread write did not tell its main-actor handler synchronously") }

    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    writer.arguments = ["writer"]
    do { try writer.run() } catch { fail("cannot start the writer: \(error)") }
    while writer.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    if writer.terminationStatus != 0 { fail("the writer failed") }

    // Every observer ends with the last write: wait for it, on the main actor, without blocking it.
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        let actorLast = await tally.last
        if model.heard.last == writes && actorLast == writes && updatesHeard == writes && tracked.counter == writes { break }
        if ContinuousClock.now > deadline {
            fail("not told of the last write in 30 s: model \(model.heard.last ?? -1), actor \(actorLast), updates \(updatesHeard), tracked \(tracked.counter)")
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
    _ = await updates.value
    // Each notification told once, in order: what the model heard only goes up.
    if zip(model.heard, model.heard.dropFirst()).contains(where: { $0 >= $1 }) { fail("the model heard counts out of order: \(model.heard)") }
    if sharingHeard < 2 { fail("the Sharing example's handler heard no change made elsewhere") }
    withExtendedLifetime(token) {}
    print("MainActorHandlers: \(model.heard.count) notifications on the main actor, the last \(writes); the actor's handler heard \(writes); onChange \(tracked.changes) times on the main actor")
}

await run()
