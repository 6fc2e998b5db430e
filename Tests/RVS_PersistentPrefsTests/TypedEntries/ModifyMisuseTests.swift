import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Typed entries over a suite given to the initializer, so that `userDefaults` is the base class's own
/// (an override of it is the subclass's code, which the base class cannot see into).
final class MisuseSettings: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("name") var name = ""
}

/// What a `modify` transform does with its own instance.
enum TransformMisuse: String, CaseIterable, Sendable {
    case readValues, readEntry, readTyped, write, nestedModify, readUserDefaults, watch

    func perform(on settings: MisuseSettings) {
        switch self {
        case .readValues: _ = settings.values
        case .readEntry: _ = settings["name"]
        case .readTyped: _ = settings.name
        case .write: settings.name = "inside"
        case .nestedModify: settings.modify(\.$name) { $0 += "!" }
        case .readUserDefaults: _ = settings.userDefaults?.object(forKey: "settings")
        case .watch: settings.watchesExternalChanges = true
        }
    }
}

/// Typed entries whose `userDefaults` is overridden, as the documentation allows: the override does not know
/// of transforms, so the base class must refuse the use itself.
final class OverridingMisuseSettings: RVS_PersistentPrefs {
    let suite: DefaultsSuite
    @Entry("launchCount") var launchCount = 0
    @Entry("name") var name = ""
    init(key: String, over suite: DefaultsSuite) {
        self.suite = suite
        super.init(key: key)
    }
    required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }
    override var userDefaults: DefaultsSuite? { suite }
}

@Suite("modify: a transform that uses its own instance fails at once", .timeLimit(.minutes(1)))
struct ModifyMisuseTests {
    @Test("A read inside the transform of an instance whose userDefaults is overridden fails too, though the last read kept its values",
          arguments: [TransformMisuse.readValues, .readEntry, .readTyped])
    func readInsideTransformFailsWithAnOverride(misuse: TransformMisuse) throws {
        let fixture = try TypedFixture()
        let settings = OverridingMisuseSettings(key: "settings", over: fixture.suite)
        settings.launchCount = 1
        // Read twice, so that the next read of each kind would be answered from what these kept.
        for _ in 0..<2 { _ = settings.values; _ = settings["name"]; _ = settings.name }
        let typed = settings.modify(\.$launchCount) { count in
            switch misuse {
            case .readValues: _ = settings.values
            case .readEntry: _ = settings["name"]
            default: _ = settings.name
            }
            count += 1
        }
        #expect(typed == nil)
        #expect(settings.lastError.map { "\($0)" }?.contains("inside its own modify transform") == true)
        #expect(try fixture.stored() == ["launchCount": .integer(1)])
    }

    @Test("Reading, writing, nesting modify, reaching userDefaults or watching inside the transform fails at once; nothing is written and lastError says why",
          arguments: TransformMisuse.allCases)
    func misuseFailsAtOnce(misuse: TransformMisuse) throws {
        let fixture = try TypedFixture()
        let settings = MisuseSettings(key: "settings", suite: fixture.suite)
        settings.launchCount = 1
        let typed = settings.modify(\.$launchCount) { count in
            misuse.perform(on: settings)
            count += 1
        }
        #expect(typed == nil)
        guard case .unknownError(let cause)? = settings.lastError else {
            Issue.record("lastError: \(String(describing: settings.lastError))")
            return
        }
        let reason = cause.map { "\($0)" } ?? ""
        #expect(reason.contains("inside its own modify transform"), "\(reason)")
        #expect(try fixture.stored() == ["launchCount": .integer(1)])

        let untyped = settings.modify("launchCount") { (value: Any?) -> Any? in
            misuse.perform(on: settings)
            return (value as? Int ?? 0) + 1
        }
        #expect(untyped == nil)
        #expect(settings.lastError.map { "\($0)" }?.contains("inside its own modify transform") == true)
        #expect(try fixture.stored() == ["launchCount": .integer(1)])

        // The instance is usable again at once.
        #expect(settings.modify(\.$launchCount) { $0 += 1 } == 2)
        #expect(settings.lastError == nil)
        #expect(settings.launchCount == 2)
    }

    @Test("Another thread using the instance while a transform runs waits for it and is not refused")
    func otherThreadsWait() throws {
        let fixture = try TypedFixture()
        nonisolated(unsafe) let settings = MisuseSettings(key: "settings", suite: fixture.suite)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let reader = Thread {
            started.wait()
            _ = settings.userDefaults  // not the transform's thread: the suite, as usual
            settings.name = "from another thread"
            release.signal()
        }
        reader.start()
        settings.modify(\.$launchCount) { count in
            started.signal()
            count = 5
        }
        release.wait()
        #expect(settings.lastError == nil)
        #expect(settings.launchCount == 5)
        #expect(settings.name == "from another thread")
    }
}
