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

    /// Two instances over one new domain of this kind, the first with `launchCount` 1, and the domain's location.
    func instances(in directory: TemporaryDirectory) throws -> (counter: MisuseSettings, other: MisuseSettings, location: String) {
        let (suite, location) = try makeSuite(in: directory)
        let counter = MisuseSettings(key: "settings", suite: suite)
        counter.launchCount = 1
        return (counter, MisuseSettings(key: "other", suite: suite), location)
    }

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
        let (counter, other, location) = try kind.instances(in: directory)
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

extension ModifyReentryTests {
    @Test("A write or removal of the same file through another storage object (durable and ordinary) inside a transform fails at once instead of waiting for itself")
    func anotherObjectForTheSameFileInsideATransform() throws {
        let directory = TemporaryDirectory()
        let ordinary = try FileDomainStorage.shared(directory: directory.path, name: "app")
        let durable = try FileDomainStorage.shared(directory: directory.path, name: "app", durable: true)
        #expect(ordinary !== durable)
        // A file to remove (with none, a removal has nothing to do and takes no lock).
        try ordinary.modify(repairing: .failIfUnreadable) { $0["seed"] = .integer(0) }
        var failures: [PrefsError] = []
        try ordinary.modify(repairing: .failIfUnreadable) { contents in
            contents["outer"] = .integer(1)
            do throws(PrefsError) { try durable.modify(repairing: .failIfUnreadable) { $0["inner"] = .integer(2) } } catch { failures.append(error) }
            do throws(PrefsError) { try durable.removeDomainFile() } catch { failures.append(error) }
        }
        #expect(failures.count == 2)
        for failure in failures {
            guard case .writeFailed(let path, _, let errno) = failure else {
                Issue.record("\(failure)")
                continue
            }
            #expect(path == ordinary.path)
            #expect(errno.rawValue == EDEADLK)
        }
        #expect(try FileDomainStorage(directory: directory.path, name: "app").snapshot().contents == ["seed": .integer(0), "outer": .integer(1)])
        // Afterwards the other object writes as usual.
        try durable.modify(repairing: .failIfUnreadable) { $0["inner"] = .integer(2) }
        #expect(try ordinary.snapshot().contents == ["seed": .integer(0), "outer": .integer(1), "inner": .integer(2)])
    }

    @Test("Starting and stopping another instance's watch of the same in-memory domain inside a transform works",
          arguments: ReentryDomain.allCases)
    func watchingInsideATransform(kind: ReentryDomain) throws {
        let directory = TemporaryDirectory()
        let (counter, other, _) = try kind.instances(in: directory)
        var watched: (on: Bool, off: Bool)?
        let result = counter.modify(\.$launchCount) { count in
            other.watchesExternalChanges = true
            let on = other.watchesExternalChanges
            other.watchesExternalChanges = false
            watched = (on, other.watchesExternalChanges)
            count += 1
        }
        #expect(result == 2)
        #expect(watched?.on == true)
        #expect(watched?.off == false)
    }
}
