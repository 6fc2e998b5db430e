import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// Support for the base-class tests (SPEC §3). Every test here except those of
// `BaseClassGroupIDTests` injects its own suite through `BaseClassTestPrefs.userDefaults`, so
// that none depends on `groupID`, `RVS_PREFS_DIRECTORY` or the other process-wide settings.

/// A subclass as users write it (entry names in `keys`, typed properties over the subscript), over an
/// injected suite.
class BaseClassTestPrefs: RVS_PersistentPrefs, BaseClassWriteTarget {
    /// The entry names the tests use.
    static let standardKeys = [
        "appearance", "launchCount", "flag", "off", "big", "small", "ratio", "when", "now", "blob", "name",
        "list", "map", "alpha", "mid", "zeta", "narrow", "unsigned", "single",
    ]

    let suite: DefaultsSuite?
    let allowedNames: [String]

    /// `init()` of the base class: the storage key is the type's name.
    init(suite: DefaultsSuite?, allowing names: [String] = BaseClassTestPrefs.standardKeys) {
        self.suite = suite
        self.allowedNames = names
        super.init()
    }

    /// `init(key:values:)` of the base class.
    init(suite: DefaultsSuite?, key: String?, values: [String: Any]?, allowing names: [String] = BaseClassTestPrefs.standardKeys) {
        self.suite = suite
        self.allowedNames = names
        super.init(key: key, values: values)
    }

    override var keys: [String] { allowedNames }
    override var userDefaults: DefaultsSuite? { suite }

    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }

    var launchCount: Int {
        get { self["launchCount"] as? Int ?? 0 }
        set { self["launchCount"] = newValue }
    }
}

/// One private domain file (`<tmp>/prefs/app.plist`, the directory not yet created) with a suite over
/// it, an in-memory global domain, and ways to look at the file as another process would.
final class BaseClassFixture {
    let directory = TemporaryDirectory()
    /// Faults to inject into the domain's system calls; it also records every call made.
    let faults = FaultInjection()
    /// The writable domain of `suite`.
    let domain: FileDomainStorage
    /// The global domain of `suite`.
    let global = InMemoryDomainStorage(location: "global domain (test)")
    let suite: DefaultsSuite

    /// - Parameter arguments: `-key value` pairs for the suite's argument domain.
    init(arguments: [String] = []) throws {
        domain = try FileDomainStorage(
            directory: directory.appending("prefs"), name: "app", durable: false, system: SystemCalls(faults: faults)
        )
        suite = DefaultsSuite(persistentDomain: domain, globalDomain: global, arguments: ["test"] + arguments)
    }

    /// The domain file.
    var path: String { domain.path }

    /// A new instance over this fixture's suite.
    func prefs(key: String? = "settings", values: [String: Any]? = [:]) -> BaseClassTestPrefs {
        BaseClassTestPrefs(suite: suite, key: key, values: values)
    }

    /// A second, independent view of the same file, with its own cache: what another process sees.
    func independentDomain() throws -> FileDomainStorage {
        try FileDomainStorage(directory: domain.directory, name: "app")
    }

    /// A suite over `independentDomain()`: for a second instance that shares nothing in memory.
    func independentSuite() throws -> DefaultsSuite {
        DefaultsSuite(persistentDomain: try independentDomain(), globalDomain: nil, arguments: [])
    }

    /// The domain file's contents, read afresh by someone else.
    func stored() throws -> [String: PropertyListValue] {
        try independentDomain().snapshot().contents
    }

    /// Writes `contents` as the whole domain, as another process would.
    func seed(_ contents: [String: PropertyListValue]) throws {
        try independentDomain().modify(repairing: .failIfUnreadable) { $0 = contents }
    }

    /// Replaces the domain file with `bytes` (creating its directory), as another tool would.
    func writeDomainFile(_ bytes: [UInt8]) {
        try? FileManager.default.createDirectory(atPath: domain.directory, withIntermediateDirectories: true)
        writeFile(path, bytes)
    }

    /// The domain file's bytes and identity.
    func fileState() -> BaseClassFileState? { BaseClassFileState(path: path) }

    /// Every file and directory under the test's private directory, recursively.
    func everything() -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// The names in the domain's directory.
    func domainDirectoryContents() -> [String] { directory.contents("prefs") }

    /// The system calls since `forgetCalls()` that take the domain's lock or change the file system.
    func storageWrites() -> [String] {
        faults.recordedCalls.filter { [.flock, .write, .rename, .mkdir, .unlink, .fsync].contains($0.call) }
            .map { "\($0.call.rawValue) \($0.path)" }
    }

    func forgetCalls() { faults.clearRecordedCalls() }
}

/// The bytes of a file with its device and inode: equal only if the file was neither rewritten nor replaced.
struct BaseClassFileState: Equatable, CustomStringConvertible {
    let bytes: [UInt8]
    let device: UInt64
    let inode: UInt64

    init?(path: String) {
        guard let info = baseClassStat(path), let bytes = fileBytes(path) else { return nil }
        self.bytes = bytes
        self.device = UInt64(info.st_dev)
        self.inode = UInt64(info.st_ino)
    }

    var description: String { "\(bytes.count) bytes, inode \(inode)" }
}

private func baseClassStat(_ path: String) -> Glibc.stat? {
    var info = Glibc.stat()
    return stat(path, &info) == 0 ? info : nil
}

/// `lastError` as a comparable value, so that `#expect` shows both sides when they differ.
enum BaseClassOutcome: Equatable, Sendable, CustomStringConvertible {
    case success
    case incorrectKeys([String])
    case valuesNotPlistCompatible([String])
    case userDefaultsUnavailable
    case invalidStoredValue(key: String)
    case domainUnreadable(path: String)
    case readFailed(path: String, errno: PrefsErrno)
    case writeFailed(path: String, errno: PrefsErrno)
    case other(String)

    init(_ error: PrefsError?) {
        switch error {
        case nil: self = .success
        case .incorrectKeys(let names)?: self = .incorrectKeys(names)
        case .valuesNotPlistCompatible(let names)?: self = .valuesNotPlistCompatible(names)
        case .userDefaultsUnavailable?: self = .userDefaultsUnavailable
        case .invalidStoredValue(let key)?: self = .invalidStoredValue(key: key)
        case .domainUnreadable(let path, _)?: self = .domainUnreadable(path: path)
        case .readFailed(let path, _, let errno)?: self = .readFailed(path: path, errno: errno)
        case .writeFailed(let path, _, let errno)?: self = .writeFailed(path: path, errno: errno)
        case let error?: self = .other("\(error)")
        }
    }

    var description: String {
        switch self {
        case .success: return "success"
        case .incorrectKeys(let names): return "incorrectKeys(\(names))"
        case .valuesNotPlistCompatible(let names): return "valuesNotPlistCompatible(\(names))"
        case .userDefaultsUnavailable: return "userDefaultsUnavailable"
        case .invalidStoredValue(let key): return "invalidStoredValue(\(key))"
        case .domainUnreadable(let path): return "domainUnreadable(\(path))"
        case .readFailed(let path, let errno): return "readFailed(\(path), \(errno))"
        case .writeFailed(let path, let errno): return "writeFailed(\(path), \(errno))"
        case .other(let text): return "other(\(text))"
        }
    }
}

/// Counts the notifications an observer receives, `.prior` ones included.
final class BaseClassNotificationCounter {
    var count = 0
}

extension RVS_PersistentPrefs {
    /// The outcome of the most recent operation.
    var baseClassOutcome: BaseClassOutcome { BaseClassOutcome(lastError) }
}

extension BaseClassWriteKind {
    /// Performs the write on the collection `settings` of a new instance over `fixture`, with `entries`
    /// instead of its own if given; returns the instance whose `lastError` tells the outcome.
    @discardableResult
    func perform(_ entries: [String: Any]? = nil, in fixture: BaseClassFixture) -> BaseClassTestPrefs {
        perform(entries) { fixture.prefs(values: $0) }
    }
}
