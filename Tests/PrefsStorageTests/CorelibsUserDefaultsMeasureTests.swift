import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import Synchronization
import TestSupport

// The measure SPEC §3 names: the 36 behaviours swift-corelibs-foundation's own `TestUserDefaults` checks of
// `UserDefaults`, each checked here of a fresh `DefaultsSuite` over a private domain file (where that suite
// uses `UserDefaults.standard` or `UserDefaults(suiteName: nil)!`). Written for this package in Swift Testing,
// one test per corelibs test and named after it, so that the count compares; no behaviour left out.

/// A fresh suite over `<tmp>/app.plist`, with no arguments, as a new `UserDefaults` of one's own.
private final class FreshSuite {
    let directory = TemporaryDirectory()
    let suite: DefaultsSuite

    init() throws {
        suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory.path, name: "app"), arguments: [])
    }
}

/// Registers `value` under `key1`, removes whatever the persistent domain holds there, and returns the suite.
private func registered(_ value: Any) throws -> (FreshSuite, DefaultsSuite) {
    let fresh = try FreshSuite()
    fresh.suite.register(defaults: ["key1": value])
    fresh.suite.removeObject(forKey: "key1")
    return (fresh, fresh.suite)
}

/// Sets `value` under `key1` and returns the suite.
private func stored(_ value: Any) throws -> (FreshSuite, DefaultsSuite) {
    let fresh = try FreshSuite()
    fresh.suite.set(value, forKey: "key1")
    return (fresh, fresh.suite)
}

private let fiveBytes: [UInt8] = [0, 1, 2, 3, 4]

@Suite("swift-corelibs-foundation's TestUserDefaults behaviours, of a DefaultsSuite (SPEC §3)")
struct CorelibsUserDefaultsMeasureTests {
    @Test("test_createUserDefaults: a fresh suite takes a value") func test_createUserDefaults() throws {
        let (fresh, suite) = try stored(4)
        #expect(suite.lastError == nil)
        withExtendedLifetime(fresh) {}
    }

    // MARK: Registered defaults

    @Test("test_getRegisteredDefaultItem") func test_getRegisteredDefaultItem() throws {
        let (fresh, suite) = try registered(NSNumber(value: 5))
        #expect(suite.integer(forKey: "key1") == 5)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_NSString") func test_getRegisteredDefaultItem_NSString() throws {
        let (fresh, suite) = try registered("hello" as NSString)
        #expect(suite.string(forKey: "key1") == "hello")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_String") func test_getRegisteredDefaultItem_String() throws {
        let (fresh, suite) = try registered("hello")
        #expect(suite.string(forKey: "key1") == "hello")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_NSURL") func test_getRegisteredDefaultItem_NSURL() throws {
        let (fresh, suite) = try registered(NSURL(fileURLWithPath: "/hello/world"))
        #expect(suite.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world"))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_URL") func test_getRegisteredDefaultItem_URL() throws {
        let (fresh, suite) = try registered(URL(fileURLWithPath: "/hello/world"))
        #expect(suite.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world"))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_NSData") func test_getRegisteredDefaultItem_NSData() throws {
        let (fresh, suite) = try registered(NSData(bytes: fiveBytes, length: fiveBytes.count))
        #expect(suite.data(forKey: "key1") == Data(fiveBytes))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_Data") func test_getRegisteredDefaultItem_Data() throws {
        let (fresh, suite) = try registered(Data(fiveBytes))
        #expect(suite.data(forKey: "key1") == Data(fiveBytes))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_BoolFromString") func test_getRegisteredDefaultItem_BoolFromString() throws {
        let (fresh, suite) = try registered("YES")
        #expect(suite.bool(forKey: "key1"))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_IntFromString") func test_getRegisteredDefaultItem_IntFromString() throws {
        let (fresh, suite) = try registered("1234")
        #expect(suite.integer(forKey: "key1") == 1234)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_getRegisteredDefaultItem_DoubleFromString") func test_getRegisteredDefaultItem_DoubleFromString() throws {
        let (fresh, suite) = try registered("12.34")
        #expect(suite.double(forKey: "key1") == 12.34)
        withExtendedLifetime(fresh) {}
    }

    // MARK: Stored values

    @Test("test_setValue_NSString") func test_setValue_NSString() throws {
        let (fresh, suite) = try stored("hello" as NSString)
        #expect(suite.string(forKey: "key1") == "hello")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_String") func test_setValue_String() throws {
        let (fresh, suite) = try stored("hello")
        #expect(suite.string(forKey: "key1") == "hello")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_NSURL") func test_setValue_NSURL() throws {
        let (fresh, suite) = try stored(NSURL(fileURLWithPath: "/hello/world"))
        #expect(suite.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world"))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_URL") func test_setValue_URL() throws {
        let fresh = try FreshSuite()
        fresh.suite.set(URL(fileURLWithPath: "/hello/world"), forKey: "key1")
        #expect(fresh.suite.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world"))
    }

    @Test("test_setValue_NSData") func test_setValue_NSData() throws {
        let (fresh, suite) = try stored(NSData(bytes: fiveBytes, length: fiveBytes.count))
        #expect(suite.data(forKey: "key1") == Data(fiveBytes))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_Data") func test_setValue_Data() throws {
        let (fresh, suite) = try stored(Data(fiveBytes))
        #expect(suite.data(forKey: "key1") == Data(fiveBytes))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_BoolFromString") func test_setValue_BoolFromString() throws {
        let (fresh, suite) = try stored("YES")
        #expect(suite.bool(forKey: "key1"))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_IntFromBool") func test_setValue_IntFromBool() throws {
        let (fresh, suite) = try stored(true)
        #expect(suite.integer(forKey: "key1") == 1)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_IntFromFloat") func test_setValue_IntFromFloat() throws {
        let (fresh, suite) = try stored(12.34 as Float)
        #expect(suite.integer(forKey: "key1") == 12)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_IntFromDouble") func test_setValue_IntFromDouble() throws {
        let (fresh, suite) = try stored(12.34)
        #expect(suite.integer(forKey: "key1") == 12)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_IntFromString") func test_setValue_IntFromString() throws {
        let (fresh, suite) = try stored("1234")
        #expect(suite.integer(forKey: "key1") == 1234)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_FloatFromBool") func test_setValue_FloatFromBool() throws {
        let (fresh, suite) = try stored(true)
        #expect(suite.float(forKey: "key1") == 1)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_FloatFromInt") func test_setValue_FloatFromInt() throws {
        let (fresh, suite) = try stored(42)
        #expect(suite.float(forKey: "key1") == 42)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_FloatFromDouble") func test_setValue_FloatFromDouble() throws {
        let (fresh, suite) = try stored(12.34)
        #expect(suite.float(forKey: "key1") == 12.34)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_FloatFromString") func test_setValue_FloatFromString() throws {
        let (fresh, suite) = try stored("1234")
        #expect(suite.float(forKey: "key1") == 1234)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_DoubleFromBool") func test_setValue_DoubleFromBool() throws {
        let (fresh, suite) = try stored(true)
        #expect(suite.double(forKey: "key1") == 1)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_DoubleFromInt") func test_setValue_DoubleFromInt() throws {
        let (fresh, suite) = try stored(42)
        #expect(suite.double(forKey: "key1") == 42)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_DoubleFromFloat") func test_setValue_DoubleFromFloat() throws {
        let (fresh, suite) = try stored(12.34 as Float)
        #expect(suite.double(forKey: "key1") == Double(12.34 as Float))
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_DoubleFromString") func test_setValue_DoubleFromString() throws {
        let (fresh, suite) = try stored("12.34")
        #expect(suite.double(forKey: "key1") == 12.34)
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_StringFromBool") func test_setValue_StringFromBool() throws {
        let (fresh, suite) = try stored(true)
        #expect(suite.string(forKey: "key1") == "1")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_StringFromInt") func test_setValue_StringFromInt() throws {
        let (fresh, suite) = try stored(42)
        #expect(suite.string(forKey: "key1") == "42")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_StringFromFloat") func test_setValue_StringFromFloat() throws {
        let (fresh, suite) = try stored(12.34 as Float)
        #expect(suite.string(forKey: "key1") == "12.34")
        withExtendedLifetime(fresh) {}
    }

    @Test("test_setValue_StringFromDouble") func test_setValue_StringFromDouble() throws {
        let (fresh, suite) = try stored(12.34)
        #expect(suite.string(forKey: "key1") == "12.34")
        withExtendedLifetime(fresh) {}
    }

    // MARK: Domains

    @Test("test_volatileDomains: a volatile domain keeps every kind of value, in memory, by name")
    func test_volatileDomains() throws {
        let now = Date()
        let contents: [String: Any] = [
            "A Date": now, "A String": "The String", "An Array": [1, 2, 3],
            "A Dictionary": ["Swift": "Imperative", "Haskell": "Functional", "LISP": "LISP", "Today": now],
            "Some Data": Data("The Data".utf8), "A Bool": true,
        ]
        let fresh = try FreshSuite()
        let suite = fresh.suite
        #expect(!suite.volatileDomainNames.contains("TestDomain"))
        suite.setVolatileDomain(contents, forName: "TestDomain")
        #expect(suite.volatileDomainNames.contains("TestDomain"))
        let read = suite.volatileDomain(forName: "TestDomain")
        #expect(read.count == contents.count)
        #expect(read["A Date"] as? Date == now)
        #expect(read["A String"] as? String == "The String")
        #expect(read["An Array"] as? [Int] == [1, 2, 3])
        #expect(read["A Dictionary"] as? [String: AnyHashable] == contents["A Dictionary"] as? [String: AnyHashable])
        #expect(read["Some Data"] as? Data == Data("The Data".utf8))
        #expect(read["A Bool"] as? Bool == true)
        #expect(try fresh.suite.persistentDomain.snapshot().exists == false)  // never written to disk
    }

    @Test("test_persistentDomain: set, read through another suite, remove; didChangeNotification thrice")
    func test_persistentDomain() throws {
        let fresh = try FreshSuite()
        let domainName = "org.swift.Foundation.TestPersistentDomainName"
        let notifications = Mutex(0)
        let observer = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: fresh.suite, queue: nil) { _ in
            notifications.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let today = Date()
        let contents: [String: Any] = [
            "An Integer": 1234, "A Double": 5678.1234, "A String": "Some string",
            "An Array": [1, 2, 3, 4, "Surprise"] as [AnyHashable],
            "A Dictionary": ["Swift": "Imperative", "Haskell": "Functional", "LISP": "LISP", "Today": today] as [String: AnyHashable],
        ]
        let first = fresh.suite
        first.removePersistentDomain(forName: domainName)
        #expect((first.persistentDomain(forName: domainName) ?? [:]).isEmpty)
        first.setPersistentDomain(contents, forName: domainName)

        let second = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: fresh.directory.path, name: "app"), arguments: [])
        let returned = try #require(second.persistentDomain(forName: domainName))
        #expect(returned.count == contents.count)
        #expect(returned["An Integer"] as? Int == 1234)
        #expect(returned["A Double"] as? Double == 5678.1234)
        #expect(returned["A String"] as? String == "Some string")
        #expect(returned["An Array"] as? [AnyHashable] == [1, 2, 3, 4, "Surprise"] as [AnyHashable])
        #expect(returned["A Dictionary"] as? [String: AnyHashable] == contents["A Dictionary"] as? [String: AnyHashable])
        first.removePersistentDomain(forName: domainName)

        let third = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: fresh.directory.path, name: "app"), arguments: [])
        #expect((third.persistentDomain(forName: domainName) ?? [:]).isEmpty)
        #expect(notifications.withLock { $0 } == 3)
    }
}
