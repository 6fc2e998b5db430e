import Foundation
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// Shared fixtures of the typed-entry tests (issue 13, SPEC §6). Names begin with `Typed…` so that they do
// not collide with the fixtures of other test files in the same module.

/// A SwiftUI-like `Entry` of another module, at the top level of the test module: `@Entry` inside a subclass
/// must still mean the class's own, nested `Entry`.
struct Entry {
    let unrelated: Int
}

enum TypedAppearance: String, Codable, Sendable { case system, light, dark }

/// The same shape as the TestWorker's `WorkerFrame`: what one process writes, the other reads.
struct TypedFrame: Codable, Equatable, Sendable { var x = 0.0, y = 0.0, width = 800.0, height = 600.0 }

/// A RawRepresentable that is not Codable: stored as its raw value all the same.
enum TypedLevel: Int, Sendable { case low = 1, medium = 2, high = 3 }

/// A nested Codable value, with a Date, Data, URL, UUID and an optional inside.
struct TypedProfile: Codable, Equatable, Sendable {
    var name = "anonymous"
    var tags: [String] = []
    var born = Date(timeIntervalSinceReferenceDate: 0)
    var avatar = Data()
    var homepage = URL(string: "https://example.com/")!
    var id = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    var nickname: String?
    var sizes: [String: Int] = [:]
}

/// Throws from `encode(to:)` when told to: an encoding failure.
struct TypedFragile: Codable, Equatable, Sendable {
    var breaks = false
    struct Broken: Error {}
    func encode(to encoder: any Encoder) throws {
        if breaks { throw Broken() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breaks, forKey: .breaks)
    }
}

/// The issue's `Settings`, with every kind of value, over an injected suite.
final class TypedSettings: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("appearance") var appearance = TypedAppearance.system
    @Entry("window") var window = TypedFrame()
    @Entry("volume") var volume: Float = 0.5
    @Entry("lastOpened") var lastOpened: Date? = nil
    @Entry("name") var name = "untitled"
    @Entry("enabled") var enabled = false
    @Entry("ratio") var ratio = 1.5
    @Entry("blob") var blob = Data([1, 2, 3])
    @Entry("homepage") var homepage = URL(string: "https://example.com/start")!
    @Entry("identifier") var identifier = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    @Entry("level") var level = TypedLevel.medium
    @Entry("profile") var profile = TypedProfile()
    @Entry("recent") var recent: [String] = []
    @Entry("fragile") var fragile = TypedFragile()
    @Entry("small") var small: Int8 = 0

    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?, key: String = "settings") {
        self.suite = suite
        super.init(key: key)
    }

    override var userDefaults: DefaultsSuite? { suite }
}

/// Typed entries beside untyped names listed in `keys`.
final class TypedMixedSettings: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("appearance") var appearance = TypedAppearance.system

    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?, key: String = "settings") {
        self.suite = suite
        super.init(key: key)
    }

    override var keys: [String] { ["legacyTheme"] }
    override var userDefaults: DefaultsSuite? { suite }

    var legacyTheme: String {
        get { self["legacyTheme"] as? String ?? "none" }
        set { self["legacyTheme"] = newValue }
    }
}

/// A subclass of a subclass: it adds its own entries to the inherited ones.
class TypedBaseSettings: RVS_PersistentPrefs {
    @Entry("inherited") var inherited = 1
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

final class TypedDerivedSettings: TypedBaseSettings {
    @Entry("own") var own = "x"
}

/// A Decodable that counts how often it is decoded, to see when a read decodes.
struct TypedCounted: Codable, Equatable, Sendable {
    nonisolated(unsafe) static var decodings = 0
    static let lock = NSLock()
    var value = 0

    init(value: Int = 0) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        Self.lock.withLock { Self.decodings += 1 }
    }

    static var count: Int { lock.withLock { decodings } }
}

final class TypedCountingSettings: RVS_PersistentPrefs {
    @Entry("counted") var counted = TypedCounted()
    @Entry("other") var other = 0
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

/// One private domain file with a suite over it, and ways to look at it as another process would.
final class TypedFixture {
    let directory = TemporaryDirectory()
    let faults = FaultInjection()
    let domain: FileDomainStorage
    let suite: DefaultsSuite

    init() throws {
        domain = try FileDomainStorage(directory: directory.path, name: "app", durable: false, system: SystemCalls(faults: faults))
        suite = DefaultsSuite(persistentDomain: domain, globalDomain: nil, arguments: ["test"])
    }

    func settings(key: String = "settings") -> TypedSettings { TypedSettings(suite: suite, key: key) }

    /// The stored collection, read afresh through a domain of its own (what another process sees).
    func stored(key: String = "settings") throws -> [String: PropertyListValue] {
        try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents[key]?.dictionaryValue ?? [:]
    }

    /// Writes the collection as another process would.
    func seed(_ entries: [String: PropertyListValue], key: String = "settings") throws {
        try FileDomainStorage(directory: directory.path, name: "app").modify(repairing: .failIfUnreadable) { $0[key] = .dictionary(entries) }
    }

    var path: String { domain.path }

    /// The write system calls recorded since the last `forgetCalls()`.
    func storageWrites() -> [String] {
        faults.recordedCalls.filter { [.flock, .rename].contains($0.call) }.map { "\($0.call.rawValue)" }
    }

    func forgetCalls() { faults.clearRecordedCalls() }
}

/// `lastError` named by its entry, for `#expect`.
extension RVS_PersistentPrefs {
    var undecodableEntry: String? {
        if case .invalidStoredEntry(let entry, _)? = lastError { return entry }
        return nil
    }
}
