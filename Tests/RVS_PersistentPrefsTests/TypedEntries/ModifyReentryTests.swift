import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The domain kinds a transform may reach again through another instance.
enum ReentryDomain: String, CaseIterable, Sendable {
    case file, inMemory

    func makeSuite(in directory: TemporaryDirectory) throws -> (DefaultsSuite, location: String) {
        switch self {
        case .file:
            let domain = try FileDomainStorage(directory: directory.path, name: "app")
            return (DefaultsSuite(persistentDomain: domain, globalDomain: nil, arguments: []), domain.path)
        case .inMemory:
            let domain = InMemoryDomainStorage(location: "reentry domain")
            return (DefaultsSuite(persistentDomain: domain, arguments: []), domain.location)
        }
    }
}

@Suite("modify: a transform that reaches its domain again through another instance", .timeLimit(.minutes(1)))
struct ModifyReentryTests {
    @Test("Reading another instance of the same domain inside a transform returns what the domain held before the change; writing it fails at once, naming the domain, and changes nothing",
          arguments: ReentryDomain.allCases)
    func anotherInstanceOfTheDomainInsideATransform(kind: ReentryDomain) throws {
        let directory = TemporaryDirectory()
        let (suite, location) = try kind.makeSuite(in: directory)
        let counter = MisuseSettings(key: "settings", suite: suite)
        let other = MisuseSettings(key: "other", suite: suite)
        counter.launchCount = 1
        other.launchCount = 7
        other.name = "before"
        var read: (typed: Int, untyped: Any?, values: Int?)?
        var writeError: PrefsError?
        let result = counter.modify(\.$launchCount) { count in
            read = (other.launchCount, other["name"], other.values["launchCount"] as? Int)
            other.name = "inside"
            writeError = other.lastError
            count += other.launchCount
        }
        #expect(result == 8)
        #expect(counter.lastError == nil)
        #expect(read?.typed == 7)
        #expect(read?.untyped as? String == "before")
        #expect(read?.values == 7)
        guard case .writeFailed(let path, _, let errno)? = writeError else {
            Issue.record("the write inside the transform: \(String(describing: writeError))")
            return
        }
        #expect(path == location)
        #expect(errno.rawValue == EDEADLK)
        #expect(other.name == "before")
        #expect(counter.launchCount == 8)
        // Both instances are usable at once afterwards.
        other.name = "after"
        #expect(other.lastError == nil)
        #expect(other.name == "after")
    }
}
