import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// A value that no property list can hold.
private struct NotAPropertyList {
    let field = 1
}

/// `lastError` as text that `#expect` can compare and show.
private func outcome(_ error: PrefsError?) -> String {
    switch error {
    case nil: return "success"
    case .valuesNotPlistCompatible(let names)?: return "valuesNotPlistCompatible(\(names))"
    case .userDefaultsUnavailable?: return "userDefaultsUnavailable"
    case .domainUnreadable?: return "domainUnreadable"
    case let error?: return "other(\(error))"
    }
}

/// A suite over a private domain file `<tmp>/prefs/app.plist` (the directory not yet created), with an
/// in-memory global domain.
private final class FileSuiteFixture {
    let directory = TemporaryDirectory()
    let global = InMemoryDomainStorage(contents: ["onlyGlobal": .string("global"), "shared": .string("global")], location: "global (test)")
    let domain: FileDomainStorage
    let suite: DefaultsSuite

    init(arguments: [String] = []) throws {
        domain = try FileDomainStorage(directory: directory.appending("prefs"), name: "app")
        suite = DefaultsSuite(persistentDomain: domain, globalDomain: global, arguments: ["program"] + arguments)
    }

    var prefsDirectory: String { directory.appending("prefs") }

    /// What another process would read from the domain file now.
    func stored() throws -> [String: PropertyListValue] {
        try FileDomainStorage(directory: prefsDirectory, name: "app").snapshot().contents
    }

    /// Replaces the domain file with bytes that are not a property list.
    func makeUnreadable() {
        try? FileManager.default.createDirectory(atPath: prefsDirectory, withIntermediateDirectories: true)
        writeFile(domain.path, Array("not a property list".utf8))
    }
}

@Suite("The UserDefaults API of a suite")
struct UserDefaultsAPITests {
    let persistent = InMemoryDomainStorage(location: "persistent")

    func inMemorySuite() -> DefaultsSuite {
        DefaultsSuite(persistentDomain: persistent, arguments: [])
    }

    // MARK: register(defaults:)

    @Test("register(defaults:) takes [String: Any] and supplies the values when no other domain holds them, writing nothing")
    func registerDefaultsTakesNativeValues() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.register(defaults: ["count": 3, "name": "light", "settings": ["appearance": "dark", "sizes": [1, 2]]])
        #expect(suite.lastError == nil)
        #expect(suite.integer(forKey: "count") == 3)
        #expect(suite.string(forKey: "name") == "light")
        let settings = try #require(suite.dictionary(forKey: "settings"))
        #expect(settings["appearance"] as? String == "dark")
        #expect(settings["sizes"] as? [Int] == [1, 2])
        #expect(try suite.lookup("count")?.domain == .registration)
        #expect(suite.registrationDomain["settings"] == .dictionary(["appearance": .string("dark"), "sizes": .array([.integer(1), .integer(2)])]))
        #expect(fixture.directory.contents().isEmpty, "registering wrote to disk")
    }

    @Test("register(defaults:) with a value that is not a property-list value registers nothing and names the keys in lastError")
    func registerDefaultsRefusesNonPropertyListValues() {
        let suite = inMemorySuite()
        suite.register(defaults: ["fine": 1, "null": NSNull(), "uuid": UUID(), "nested": ["s": NotAPropertyList()]])
        #expect(outcome(suite.lastError) == "valuesNotPlistCompatible([\"nested\", \"null\", \"uuid\"])")
        #expect(suite.registrationDomain.isEmpty)
        #expect(suite.object(forKey: "fine") == nil)
        #expect(suite.lastError == nil, "a successful read clears lastError")
    }

    @Test("register(defaults:) keeps PropertyListValue values as they are when given as [String: PropertyListValue]")
    func registerDefaultsKeepsPropertyListValues() {
        let suite = inMemorySuite()
        let typed: [String: PropertyListValue] = ["k": .string("v"), "n": .integer(2)]
        suite.register(defaults: typed)
        #expect(suite.lastError == nil)
        #expect(suite.registrationDomain == typed)
    }

    // MARK: object(forKey:) and the typed getters

    @Test("object(forKey:) returns every kind of stored value as the native value, castable with as?")
    func objectReturnsNativeValues() throws {
        let suite = inMemorySuite()
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        try persistent.modify(repairing: .failIfUnreadable) {
            $0 = [
                "string": .string("s"), "bool": .bool(true), "integer": .integer(-7), "real": .real(2.5), "date": .date(date),
                "data": .data(Data([1, 2])), "array": .array([.string("a"), .integer(1)]),
                "dictionary": .dictionary(["n": .integer(1)]),
            ]
        }
        #expect(suite.object(forKey: "string") as? String == "s")
        #expect(suite.object(forKey: "bool") as? Bool == true)
        #expect(suite.object(forKey: "integer") as? Int == -7)
        #expect(suite.object(forKey: "real") as? Double == 2.5)
        #expect(suite.object(forKey: "date") as? Date == date)
        #expect(suite.object(forKey: "data") as? Data == Data([1, 2]))
        let array = try #require(suite.object(forKey: "array") as? [Any])
        #expect(array.count == 2 && array[0] as? String == "a" && array[1] as? Int == 1)
        #expect((suite.object(forKey: "dictionary") as? [String: Any])?["n"] as? Int == 1)
        #expect(suite.object(forKey: "absent") == nil)
        #expect(suite.lastError == nil)
    }

    @Test("object(forKey:) reads through the search list: arguments, persistent, global, registration")
    func objectFollowsTheSearchList() throws {
        let fixture = try FileSuiteFixture(arguments: ["-fromArguments", "argument"])
        let suite = fixture.suite
        suite.register(defaults: ["shared": "registered", "onlyRegistered": "registered", "fromArguments": "registered"])
        suite.set("persistent", forKey: "fromArguments")
        #expect(suite.object(forKey: "fromArguments") as? String == "argument")
        #expect(suite.object(forKey: "shared") as? String == "global")
        suite.set("persistent", forKey: "shared")
        #expect(suite.object(forKey: "shared") as? String == "persistent")
        #expect(suite.object(forKey: "onlyGlobal") as? String == "global")
        #expect(suite.object(forKey: "onlyRegistered") as? String == "registered")
    }

    @Test("bool(forKey:) converts as UserDefaults does: numbers by zero, strings as NSString.boolValue reads them")
    func boolConvertsLikeUserDefaults() throws {
        let suite = inMemorySuite()
        let cases: [(PropertyListValue, Bool)] = [
            (.bool(true), true), (.bool(false), false), (.integer(2), true), (.integer(0), false), (.real(0.5), true),
            (.real(0), false), (.string("YES"), true), (.string("yes"), true), (.string("true"), true), (.string("1"), true),
            (.string(" -5"), true), (.string("NO"), false), (.string("0"), false), (.string("false"), false),
            (.string("abc"), false), (.string(""), false), (.date(Date()), false), (.data(Data([1])), false),
            (.array([.bool(true)]), false),
        ]
        for (value, expected) in cases {
            try persistent.modify(repairing: .failIfUnreadable) { $0["k"] = value }
            #expect(suite.bool(forKey: "k") == expected, "bool(forKey:) of \(value)")
        }
        #expect(suite.bool(forKey: "absent") == false)
    }

    @Test("integer(forKey:) converts as UserDefaults does: reals truncated, Booleans 1 or 0, strings by their leading integer")
    func integerConvertsLikeUserDefaults() throws {
        let suite = inMemorySuite()
        let cases: [(PropertyListValue, Int)] = [
            (.integer(42), 42), (.integer(Int.min), Int.min), (.real(3.7), 3), (.real(-3.7), -3), (.real(1e300), Int.max),
            (.real(-1e300), Int.min), (.real(.nan), 0), (.bool(true), 1), (.bool(false), 0), (.string("3"), 3),
            (.string(" 42 apples"), 42), (.string("3.7"), 3), (.string("-12"), -12), (.string("YES"), 0), (.string("abc"), 0),
            (.date(Date()), 0), (.data(Data([1])), 0), (.dictionary([:]), 0),
        ]
        for (value, expected) in cases {
            try persistent.modify(repairing: .failIfUnreadable) { $0["k"] = value }
            #expect(suite.integer(forKey: "k") == expected, "integer(forKey:) of \(value)")
        }
        #expect(suite.integer(forKey: "absent") == 0)
    }

    @Test("double(forKey:) and float(forKey:) convert as UserDefaults does: integers, Booleans, strings by their leading number")
    func doubleAndFloatConvertLikeUserDefaults() throws {
        let suite = inMemorySuite()
        let cases: [(PropertyListValue, Double)] = [
            (.real(2.5), 2.5), (.integer(3), 3), (.bool(true), 1), (.bool(false), 0), (.string("2.5"), 2.5),
            (.string(" 1e3"), 1000), (.string("-0.25 m"), -0.25), (.string("abc"), 0), (.date(Date()), 0), (.array([]), 0),
        ]
        for (value, expected) in cases {
            try persistent.modify(repairing: .failIfUnreadable) { $0["k"] = value }
            #expect(suite.double(forKey: "k") == expected, "double(forKey:) of \(value)")
            #expect(suite.float(forKey: "k") == Float(expected), "float(forKey:) of \(value)")
        }
        suite.set(Float(0.1), forKey: "single")
        #expect(suite.float(forKey: "single") == Float(0.1))
        #expect(suite.double(forKey: "absent") == 0)
        #expect(suite.float(forKey: "absent") == 0)
    }

    @Test("string(forKey:) returns strings, gives numbers as their decimal text, and nil for anything else")
    func stringConvertsNumbers() throws {
        let suite = inMemorySuite()
        let cases: [(PropertyListValue, String?)] = [
            (.string("text"), "text"), (.integer(3), "3"), (.integer(-40), "-40"), (.real(1.5), "1.5"), (.bool(true), "1"),
            (.bool(false), "0"), (.date(Date()), nil), (.data(Data()), nil), (.array([.string("a")]), nil),
            (.dictionary(["a": .string("b")]), nil),
        ]
        for (value, expected) in cases {
            try persistent.modify(repairing: .failIfUnreadable) { $0["k"] = value }
            #expect(suite.string(forKey: "k") == expected, "string(forKey:) of \(value)")
        }
        #expect(suite.string(forKey: "absent") == nil)
    }

    @Test("array(forKey:), stringArray(forKey:), dictionary(forKey:) and data(forKey:) return only values of their kind")
    func containerAndDataGettersCheckTheKind() throws {
        let suite = inMemorySuite()
        try persistent.modify(repairing: .failIfUnreadable) {
            $0 = [
                "strings": .array([.string("a"), .string("b")]), "mixed": .array([.string("a"), .integer(1)]),
                "dictionary": .dictionary(["n": .integer(1), "list": .array([.real(0.5)])]), "data": .data(Data([9])),
                "string": .string("a"),
            ]
        }
        #expect(suite.array(forKey: "strings") as? [String] == ["a", "b"])
        let mixed = try #require(suite.array(forKey: "mixed"))
        #expect(mixed.count == 2 && mixed[0] as? String == "a" && mixed[1] as? Int == 1)
        #expect(suite.stringArray(forKey: "strings") == ["a", "b"])
        #expect(suite.stringArray(forKey: "mixed") == nil)
        let dictionary = try #require(suite.dictionary(forKey: "dictionary"))
        #expect(dictionary["n"] as? Int == 1)
        #expect(dictionary["list"] as? [Double] == [0.5])
        #expect(suite.data(forKey: "data") == Data([9]))
        for key in ["string", "data", "absent"] {
            #expect(suite.array(forKey: key) == nil, "array(forKey: \(key))")
            #expect(suite.stringArray(forKey: key) == nil, "stringArray(forKey: \(key))")
            #expect(suite.dictionary(forKey: key) == nil, "dictionary(forKey: \(key))")
        }
        #expect(suite.data(forKey: "string") == nil)
        #expect(suite.data(forKey: "strings") == nil)
        #expect(suite.data(forKey: "absent") == nil)
    }

    @Test("url(forKey:) makes a file URL of a stored path, expanding ~, and nil of anything else")
    func urlReadsPaths() throws {
        let suite = inMemorySuite()
        suite.set("/tmp/file.txt", forKey: "absolute")
        suite.set("~/notes.txt", forKey: "home")
        suite.set(3, forKey: "number")
        #expect(suite.url(forKey: "absolute") == URL(fileURLWithPath: "/tmp/file.txt"))
        let home = try #require(suite.url(forKey: "home"))
        #expect(home.isFileURL)
        #expect(home.path == NSString(string: "~").expandingTildeInPath + "/notes.txt")
        #expect(suite.url(forKey: "number") == nil)
        #expect(suite.url(forKey: "absent") == nil)
    }

    // MARK: set(_:forKey:), removeObject(forKey:), synchronize()

    @Test("set(_:forKey:) writes every property-list type to the domain file, and object(forKey:) reads each back equal")
    func setWritesEveryPropertyListType() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        let date = Date(timeIntervalSince1970: 1_000_000_000.25)
        let values: [String: Any] = [
            "string": "s", "bool": false, "integer": Int64(1) << 40, "real": 0.125, "date": date, "data": Data([0, 255]),
            "array": [1, "two", [3.5]], "dictionary": ["inner": ["deep": true]],
        ]
        for (key, value) in values {
            suite.set(value, forKey: key)
            #expect(suite.lastError == nil, "set \(key)")
        }
        let stored = try fixture.stored()
        #expect(stored["string"] == .string("s"))
        #expect(stored["bool"] == .bool(false))
        #expect(stored["integer"] == .integer(1 << 40))
        #expect(stored["real"] == .real(0.125))
        #expect(stored["date"] == .date(date))
        #expect(stored["data"] == .data(Data([0, 255])))
        #expect(stored["array"] == .array([.integer(1), .string("two"), .array([.real(3.5)])]))
        #expect(stored["dictionary"] == .dictionary(["inner": .dictionary(["deep": .bool(true)])]))
        #expect(suite.object(forKey: "integer") as? Int == 1 << 40)
        #expect(suite.object(forKey: "date") as? Date == date)
        #expect(permissions(fixture.domain.path) == 0o600)

        suite.set("replaced", forKey: "string")
        #expect(suite.string(forKey: "string") == "replaced")
        suite.set(nil, forKey: "string")
        #expect(suite.lastError == nil)
        #expect(try fixture.stored()["string"] == nil)
    }

    @Test("set(_:forKey:) stores UInt64.max as CoreFoundation does, a 16-byte integer; it reads back whole and Python reads it")
    func setStoresUnsignedAboveInt64() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.set(NSNumber(value: UInt64.max), forKey: "number")
        #expect(suite.lastError == nil)
        suite.set(UInt64(Int64.max) + 1, forKey: "swift")
        #expect(suite.lastError == nil)
        #expect(try fixture.stored()["number"] == .unsignedInteger(.max))
        #expect(suite.object(forKey: "number") as? UInt64 == .max)
        #expect((suite.object(forKey: "number") as? NSNumber)?.uint64Value == .max)
        #expect(suite.object(forKey: "swift") as? UInt64 == UInt64(Int64.max) + 1)
        #expect(suite.string(forKey: "number") == "18446744073709551615")
        #expect(suite.integer(forKey: "number") == .max)
        #expect(suite.double(forKey: "number") == 18_446_744_073_709_551_615.0)
        let bytes = try #require(fileBytes(fixture.domain.path))
        #expect(bytes.indices.contains { bytes[$0...].starts(with: [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8)) })
        let seen = try python("""
            import plistlib
            d = plistlib.load(open('\(fixture.domain.path)', 'rb'))
            print(d['number'], d['swift'])
            """)
        #expect(String(decoding: seen, as: UTF8.self) == "18446744073709551615 9223372036854775808\n")
    }

    @Test("set(_:forKey:) refuses NSNull, UUID, structs, URLs nested in containers and non-string-keyed dictionaries without a crash, writing nothing")
    func setRefusesNonPropertyListValues() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.set("kept", forKey: "k")
        let before = fileBytes(fixture.domain.path)
        let refused: [(String, Any)] = [
            ("NSNull", NSNull()), ("URL inside an array", [URL(fileURLWithPath: "/tmp")]), ("UUID", UUID()), ("struct", NotAPropertyList()),
            ("integer keys", [1: "a"]), ("NSNull inside an array", ["a", NSNull()]),
            ("nil inside a dictionary", ["a": Optional<Int>.none as Any]),
        ]
        for (description, value) in refused {
            suite.set(value, forKey: "k")
            #expect(outcome(suite.lastError) == "valuesNotPlistCompatible([\"k\"])", "\(description)")
            #expect(fileBytes(fixture.domain.path) == before, "\(description) changed the file")
            #expect(suite.string(forKey: "k") == "kept")
        }
        suite.set("next", forKey: "k")
        #expect(suite.lastError == nil, "a successful write clears lastError")
    }

    @Test("removeObject(forKey:) removes the key from the persistent domain only, exposing lower domains again")
    func removeObjectExposesLowerDomains() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.register(defaults: ["k": "registered"])
        suite.set("mine", forKey: "k")
        suite.set("mine", forKey: "shared")
        #expect(suite.string(forKey: "k") == "mine")
        suite.removeObject(forKey: "k")
        suite.removeObject(forKey: "shared")
        #expect(suite.lastError == nil)
        #expect(suite.string(forKey: "k") == "registered")
        #expect(suite.string(forKey: "shared") == "global")
        #expect(try fixture.stored().isEmpty)
        #expect(try fixture.global.snapshot().contents["shared"] == .string("global"))
    }

    @Test("removeObject(forKey:) of an absent key creates nothing on disk")
    func removeObjectOfAbsentKeyCreatesNothing() throws {
        let fixture = try FileSuiteFixture()
        fixture.suite.removeObject(forKey: "absent")
        #expect(fixture.suite.lastError == nil)
        fixture.suite.set(nil, forKey: "absent")
        #expect(fixture.suite.lastError == nil)
        #expect(fixture.directory.contents().isEmpty)
    }

    @Test("synchronize() returns true and leaves lastError as it was")
    func synchronizeReturnsTrue() {
        let suite = inMemorySuite()
        suite.set(NSNull(), forKey: "k")
        #expect(suite.synchronize())
        #expect(outcome(suite.lastError) == "valuesNotPlistCompatible([\"k\"])")
        suite.set(1, forKey: "k")
        #expect(suite.synchronize())
        #expect(suite.lastError == nil)
    }

    // MARK: dictionaryRepresentation()

    @Test("dictionaryRepresentation() shows every visible key with the native value a read returns, without throwing")
    func dictionaryRepresentationMergesTheDomains() throws {
        let fixture = try FileSuiteFixture(arguments: ["-fromArguments", "argument"])
        let suite = fixture.suite
        suite.register(defaults: ["onlyRegistered": 1, "shared": "registered"])
        suite.set(["a": 1], forKey: "mine")
        let all = suite.dictionaryRepresentation()
        #expect(suite.lastError == nil)
        #expect(all.keys.sorted() == ["fromArguments", "mine", "onlyGlobal", "onlyRegistered", "shared"])
        #expect(all["shared"] as? String == "global")
        #expect(all["onlyRegistered"] as? Int == 1)
        #expect(all["fromArguments"] as? String == "argument")
        #expect((all["mine"] as? [String: Any])?["a"] as? Int == 1)
        #expect(try suite.propertyListRepresentation().count == all.count)
    }

    // MARK: Failures

    @Test("Over an unreadable domain file, reads give nothing and writes fail, each reporting domainUnreadable in lastError")
    func unreadableDomainIsReported() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        fixture.makeUnreadable()
        let before = fileBytes(fixture.domain.path)
        #expect(suite.object(forKey: "k") == nil)
        #expect(outcome(suite.lastError) == "domainUnreadable")
        #expect(suite.dictionaryRepresentation().isEmpty)
        #expect(outcome(suite.lastError) == "domainUnreadable")
        suite.set(1, forKey: "k")
        #expect(outcome(suite.lastError) == "domainUnreadable")
        suite.removeObject(forKey: "k")
        #expect(outcome(suite.lastError) == "domainUnreadable")
        #expect(suite.integer(forKey: "k") == 0)
        #expect(suite.bool(forKey: "k") == false)
        #expect(fileBytes(fixture.domain.path) == before, "a single-key write replaced an unreadable file")
    }

    @Test("lastError is read and written safely while many threads use one suite")
    func lastErrorIsThreadSafe() throws {
        let suite = inMemorySuite()
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            if index % 2 == 0 { suite.set(index, forKey: "k\(index % 8)") } else { suite.set(NSNull(), forKey: "bad") }
            _ = suite.lastError
        }
        let last = outcome(suite.lastError)
        #expect(last == "success" || last == "valuesNotPlistCompatible([\"bad\"])")
        #expect(try persistent.snapshot().contents.count == 4)
    }

    // MARK: Persistent domains

    @Test("persistentDomain(forName:) of the suite's own name returns its contents; nil when it holds nothing")
    func persistentDomainOfOwnName() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        #expect(suite.persistentDomainName == "app")
        #expect(suite.persistentDomain(forName: "app") == nil)
        #expect(suite.lastError == nil)
        suite.set(["appearance": "dark"], forKey: "settings")
        suite.set(2, forKey: "count")
        let domain = try #require(suite.persistentDomain(forName: "app"))
        #expect(domain.keys.sorted() == ["count", "settings"])
        #expect((domain["settings"] as? [String: Any])?["appearance"] as? String == "dark")
        #expect(domain["count"] as? Int == 2)
    }

    @Test("setPersistentDomain(_:forName:) writes <name>.plist beside the suite's domain, and persistentDomain(forName:) reads it")
    func setPersistentDomainWritesASiblingFile() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        #expect(suite.persistentDomain(forName: "com.example.other") == nil)
        #expect(fixture.directory.contents().isEmpty, "a read created something")
        suite.setPersistentDomain(["k": "v", "n": [1, 2]], forName: "com.example.other")
        #expect(suite.lastError == nil)
        let path = fixture.prefsDirectory + "/com.example.other.plist"
        #expect(permissions(path) == 0o600)
        let written = try FileDomainStorage(directory: fixture.prefsDirectory, name: "com.example.other").snapshot().contents
        #expect(written == ["k": .string("v"), "n": .array([.integer(1), .integer(2)])])
        let read = try #require(suite.persistentDomain(forName: "com.example.other"))
        #expect(read["k"] as? String == "v")
        #expect(read["n"] as? [Int] == [1, 2])
        #expect(try fixture.stored().isEmpty, "the suite's own domain was written")
        #expect(suite.object(forKey: "k") == nil, "another domain is not in the suite's search list")
    }

    @Test("setPersistentDomain(_:forName:) replaces the whole domain; with a non-property-list value it writes nothing")
    func setPersistentDomainReplacesWhole() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.set("old", forKey: "old")
        suite.setPersistentDomain(["new": 1], forName: "app")
        #expect(suite.lastError == nil)
        #expect(try fixture.stored() == ["new": .integer(1)])
        let before = fileBytes(fixture.domain.path)
        suite.setPersistentDomain(["fine": 1, "null": NSNull(), "uuid": UUID()], forName: "app")
        #expect(outcome(suite.lastError) == "valuesNotPlistCompatible([\"null\", \"uuid\"])")
        #expect(fileBytes(fixture.domain.path) == before)
    }

    @Test("setPersistentDomain(_:forName:) over an unreadable file moves it aside, never deleting it")
    func setPersistentDomainRepairsAnUnreadableFile() throws {
        let fixture = try FileSuiteFixture()
        fixture.makeUnreadable()
        fixture.suite.setPersistentDomain(["k": 1], forName: "app")
        #expect(fixture.suite.lastError == nil)
        #expect(try fixture.stored() == ["k": .integer(1)])
        let aside = fixture.directory.contents("prefs").filter { $0.hasPrefix("app.plist.unreadable-") }
        #expect(aside.count == 1)
    }

    @Test("removePersistentDomain(forName:) empties the named domain, and removing a missing one creates nothing")
    func removePersistentDomainEmptiesIt() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        suite.removePersistentDomain(forName: "com.example.never")
        #expect(suite.lastError == nil)
        #expect(fixture.directory.contents().isEmpty)

        suite.register(defaults: ["k": "registered"])
        suite.set("mine", forKey: "k")
        suite.setPersistentDomain(["x": 1], forName: "com.example.other")
        suite.removePersistentDomain(forName: "app")
        #expect(suite.lastError == nil)
        #expect(try fixture.stored().isEmpty)
        #expect(suite.persistentDomain(forName: "app") == nil)
        #expect(suite.string(forKey: "k") == "registered")
        #expect(suite.persistentDomain(forName: "com.example.other")?["x"] as? Int == 1, "another domain was touched")
        suite.removePersistentDomain(forName: "com.example.other")
        #expect(suite.persistentDomain(forName: "com.example.other") == nil)
    }

    @Test("A name that cannot be a domain name makes the persistent-domain calls fail with userDefaultsUnavailable, creating nothing")
    func unusableDomainNamesAreRefused() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        for name in ["", ".", "..", "a/b", "../escape", String(repeating: "x", count: 300)] {
            #expect(suite.persistentDomain(forName: name) == nil)
            #expect(outcome(suite.lastError) == "userDefaultsUnavailable", "read of '\(name)'")
            suite.setPersistentDomain(["k": 1], forName: name)
            #expect(outcome(suite.lastError) == "userDefaultsUnavailable", "write of '\(name)'")
            suite.removePersistentDomain(forName: name)
            #expect(outcome(suite.lastError) == "userDefaultsUnavailable", "removal of '\(name)'")
        }
        #expect(fixture.directory.contents().isEmpty)
    }

    @Test("The global domain's names read the suite's global domain, which the persistent-domain calls never write")
    func globalDomainIsReadOnly() throws {
        let fixture = try FileSuiteFixture()
        let suite = fixture.suite
        for name in [".GlobalPreferences", "NSGlobalDomain"] {
            #expect(suite.persistentDomain(forName: name)?["onlyGlobal"] as? String == "global")
            suite.setPersistentDomain(["injected": 1], forName: name)
            #expect(outcome(suite.lastError) == "userDefaultsUnavailable", "write of \(name)")
            suite.removePersistentDomain(forName: name)
            #expect(outcome(suite.lastError) == "userDefaultsUnavailable", "removal of \(name)")
        }
        #expect(try fixture.global.snapshot().contents == ["onlyGlobal": .string("global"), "shared": .string("global")])
        #expect(fixture.directory.contents().isEmpty)
        let withoutGlobal = DefaultsSuite(persistentDomain: fixture.domain, arguments: [])
        #expect(withoutGlobal.persistentDomain(forName: "NSGlobalDomain") == nil)
        #expect(withoutGlobal.lastError == nil)
    }

    @Test("A suite over an in-memory domain answers to its location, and keeps other named domains in memory of its own")
    func inMemorySuitesKeepNamedDomainsInMemory() throws {
        let suite = inMemorySuite()
        #expect(suite.persistentDomainName == "persistent")
        suite.setPersistentDomain(["k": 1], forName: "persistent")
        #expect(try persistent.snapshot().contents == ["k": .integer(1)])
        #expect(suite.integer(forKey: "k") == 1)

        suite.setPersistentDomain(["other": "x"], forName: "com.example.other")
        #expect(suite.lastError == nil)
        #expect(suite.persistentDomain(forName: "com.example.other")?["other"] as? String == "x")
        #expect(try persistent.snapshot().contents == ["k": .integer(1)])
        let anotherSuite = DefaultsSuite(persistentDomain: persistent, arguments: [])
        #expect(anotherSuite.persistentDomain(forName: "com.example.other") == nil, "named in-memory domains belong to one suite")

        suite.removePersistentDomain(forName: "persistent")
        #expect(suite.object(forKey: "k") == nil)
        #expect(suite.persistentDomain(forName: "persistent") == nil)
    }

    @Test("volatileDomain(forName:) returns the argument and registration domains as native values")
    func volatileDomainsAreTheArgumentAndRegistrationDomains() {
        let suite = DefaultsSuite(persistentDomain: persistent, arguments: ["program", "-flag", "on"])
        suite.register(defaults: ["registered": 2])
        #expect(suite.volatileDomain(forName: "NSArgumentDomain")["flag"] as? String == "on")
        #expect(suite.volatileDomain(forName: "NSRegistrationDomain")["registered"] as? Int == 2)
        #expect(suite.volatileDomain(forName: "other").isEmpty)
    }

    // MARK: Several processes

    @Test("Values written with set(_:forKey:) in another process read back with the typed getters here, and NSNull is refused there")
    func anotherProcessWritesThisOneReads() throws {
        let directory = TemporaryDirectory()
        let worker = try ChildProcess.worker("userdefaults-set", directory.path, "shared", "value")
        #expect(worker.readLine() == "ok", "worker failed: \(worker.readErrors())")
        #expect(worker.wait() == 0)
        let suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory.path, name: "shared"), arguments: [])
        #expect(suite.string(forKey: "value-string") == "hello")
        #expect(suite.integer(forKey: "value-integer") == 42)
        #expect(suite.double(forKey: "value-real") == 2.5)
        #expect(suite.bool(forKey: "value-bool"))
        #expect(suite.object(forKey: "value-date") as? Date == Date(timeIntervalSince1970: 1_000_000_000.25))
        #expect(suite.data(forKey: "value-data") == Data([1, 2, 3]))
        let array = try #require(suite.array(forKey: "value-array"))
        #expect(array.count == 2 && array[0] as? String == "a" && array[1] as? Int == 1)
        let dictionary = try #require(suite.dictionary(forKey: "value-dictionary"))
        #expect(dictionary["n"] as? Int == 1 && dictionary["s"] as? String == "x")
        #expect(suite.object(forKey: "value-null") == nil)
        #expect(suite.lastError == nil)
    }

    @Test("Values written with set(_:forKey:) here read back in another process, converted by its typed getters")
    func thisProcessWritesAnotherOneReads() throws {
        let directory = TemporaryDirectory()
        let suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory.path, name: "shared"), arguments: [])
        suite.set("3", forKey: "text")
        suite.set(2.75, forKey: "real")
        suite.set(true, forKey: "flag")
        #expect(suite.lastError == nil)
        let expectations = [
            "text": "string=3 integer=3 double=3.0 bool=true object=present",
            "real": "string=2.75 integer=2 double=2.75 bool=true object=present",
            "flag": "string=1 integer=1 double=1.0 bool=true object=present",
            "absent": "string=nil integer=0 double=0.0 bool=false object=nil",
        ]
        for (key, expected) in expectations.sorted(by: { $0.key < $1.key }) {
            let worker = try ChildProcess.worker("userdefaults-get", directory.path, "shared", key)
            #expect(worker.readLine() == expected, "\(key): \(worker.readErrors())")
            #expect(worker.wait() == 0)
        }
    }
}
