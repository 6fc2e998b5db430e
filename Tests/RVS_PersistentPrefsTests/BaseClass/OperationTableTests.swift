import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("The operation table of SPEC §3: initializers, values, subscript, count, clear, flush")
struct BaseClassOperationTableTests {
    // MARK: Initializers

    @Test("init(key:) loads the stored collection, without error")
    func initializerLoads() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark"), "launchCount": .integer(7)])])
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.appearance == "dark")
        #expect(prefs.launchCount == 7)
        #expect(prefs.count == 2)
    }

    @Test("init(key:) on missing storage is an empty collection with no error, and creates nothing")
    func initializerOnMissingStorage() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.values.isEmpty)
        #expect(prefs.count == 0)
        #expect(prefs["appearance"] == nil)
        #expect(fixture.everything().isEmpty, "a load created \(fixture.everything())")
    }

    @Test("init(key:) on a domain that holds other storage keys but not this one is empty, without error")
    func initializerOnMissingStorageKey() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["other": .dictionary(["appearance": .string("dark")])])
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.values.isEmpty)
    }

    @Test("init(key:values:) merges the supplied entries into what is stored, supplied ones winning, and saves")
    func initializerMerges() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed([
            "settings": .dictionary(["appearance": .string("light"), "launchCount": .integer(3)]),
            "other": .dictionary(["appearance": .string("other")]),
        ])
        let prefs = fixture.prefs(values: ["appearance": "dark", "flag": true])
        #expect(prefs.baseClassOutcome == .success)
        let expected: [String: PropertyListValue] = ["appearance": .string("dark"), "launchCount": .integer(3), "flag": .bool(true)]
        #expect(try fixture.stored()["settings"] == .dictionary(expected), "the merge was not saved to the file")
        #expect(try fixture.stored()["other"] == .dictionary(["appearance": .string("other")]))
        #expect(prefs.appearance == "dark" && prefs.launchCount == 3 && prefs["flag"] as? Bool == true)
    }

    @Test("init(key:values:) on missing storage saves the supplied entries")
    func initializerMergeCreatesTheCollection() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(values: ["appearance": "dark"])
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == ["settings": .dictionary(["appearance": .string("dark")])])
    }

    @Test("init with values nil or [:] loads without writing or clearing: the file keeps its bytes and inode",
          arguments: [true, false])
    func initializerWithoutValuesWritesNothing(passNil: Bool) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")]), "other": .dictionary(["launchCount": .integer(1)])])
        let before = try #require(fixture.fileState())
        let names = fixture.domainDirectoryContents()
        fixture.forgetCalls()

        let prefs = fixture.prefs(values: passNil ? nil : [:])

        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.appearance == "dark", "the collection was not loaded")
        #expect(fixture.fileState() == before)
        #expect(fixture.storageWrites().isEmpty, "the initializer wrote: \(fixture.storageWrites())")
        #expect(fixture.domainDirectoryContents() == names)
    }

    @Test("init with values nil or [:] on missing storage creates no file, no lock file and no directory",
          arguments: [true, false])
    func initializerWithoutValuesCreatesNothing(passNil: Bool) throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(values: passNil ? nil : [:])
        #expect(prefs.baseClassOutcome == .success)
        #expect(fixture.everything().isEmpty, "created \(fixture.everything())")
    }

    // MARK: values

    @Test("Reading values reloads: a write by another instance with its own view of the file is seen at once")
    func valuesGetReloads() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        #expect(prefs.values.isEmpty)
        let other = BaseClassTestPrefs(suite: try fixture.independentSuite(), key: "settings", values: [:])
        other.values = ["appearance": "dark"]
        #expect(prefs.values["appearance"] as? String == "dark")
        other["appearance"] = "light"
        #expect(prefs.values["appearance"] as? String == "light")
        try fixture.seed([:])
        #expect(prefs.values.isEmpty)
    }

    @Test("Reading values goes through the search list: arguments, then the file, then global, then registration")
    func valuesGetUsesTheSearchList() throws {
        let fixture = try BaseClassFixture(arguments: ["-fromArguments", "{appearance = argued;}"])
        fixture.suite.register(propertyListDefaults: [
            "settings": .dictionary(["appearance": .string("registered")]),
            "fromArguments": .dictionary(["appearance": .string("registered")]),
        ])
        let prefs = fixture.prefs()
        #expect(prefs.appearance == "registered")
        try fixture.global.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["appearance": .string("global")]) }
        #expect(prefs.appearance == "global")
        prefs.appearance = "mine"
        #expect(prefs.appearance == "mine")
        #expect(prefs.values.count == 1, "the collections of the domains were merged: \(prefs.values)")

        let argued = fixture.prefs(key: "fromArguments")
        argued.values = ["appearance": "written"]
        #expect(argued.baseClassOutcome == .success)
        #expect(argued.appearance == "argued", "the argument domain must shadow the written value")
        #expect(try fixture.stored()["fromArguments"] == .dictionary(["appearance": .string("written")]))
    }

    @Test("Assigning values replaces the whole collection, and leaves other storage keys alone")
    func valuesSetReplacesTheCollection() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed([
            "settings": .dictionary(["appearance": .string("light"), "launchCount": .integer(3)]),
            "other": .dictionary(["flag": .bool(true)]),
        ])
        let prefs = fixture.prefs()
        prefs.values = ["name": "new", "flag": false]
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == [
            "settings": .dictionary(["name": .string("new"), "flag": .bool(false)]),
            "other": .dictionary(["flag": .bool(true)]),
        ])
        #expect(Set(prefs.values.keys) == ["name", "flag"])
    }

    // MARK: Subscript

    @Test("A subscript write updates one entry and keeps the others")
    func subscriptSetKeepsOtherEntries() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed([
            "settings": .dictionary(["appearance": .string("light"), "launchCount": .integer(3)]),
            "other": .dictionary(["appearance": .string("other")]),
        ])
        let prefs = fixture.prefs()
        prefs["appearance"] = "dark"
        #expect(prefs.baseClassOutcome == .success)
        prefs["flag"] = true
        #expect(try fixture.stored() == [
            "settings": .dictionary(["appearance": .string("dark"), "launchCount": .integer(3), "flag": .bool(true)]),
            "other": .dictionary(["appearance": .string("other")]),
        ])
    }

    @Test("A subscript write re-reads the stored collection: entries written meanwhile by another instance are kept")
    func subscriptSetKeepsEntriesWrittenElsewhere() throws {
        let fixture = try BaseClassFixture()
        let first = fixture.prefs()
        let second = BaseClassTestPrefs(suite: try fixture.independentSuite(), key: "settings", values: [:])
        #expect(first.values.isEmpty && second.values.isEmpty)
        first["appearance"] = "dark"
        second["launchCount"] = 5
        first["flag"] = true
        second["name"] = "n"
        let expected: [String: PropertyListValue] = [
            "appearance": .string("dark"), "launchCount": .integer(5), "flag": .bool(true), "name": .string("n"),
        ]
        #expect(try fixture.stored()["settings"] == .dictionary(expected))
        #expect(first.baseClassOutcome == .success && second.baseClassOutcome == .success)
    }

    @Test("Assigning nil through the subscript removes that one entry and keeps the others")
    func subscriptNilRemovesOneEntry() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed([
            "settings": .dictionary(["appearance": .string("dark"), "launchCount": .integer(3), "flag": .bool(true)]),
            "other": .dictionary(["appearance": .string("other")]),
        ])
        let prefs = fixture.prefs()
        prefs["launchCount"] = nil
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs["launchCount"] == nil)
        #expect(try fixture.stored() == [
            "settings": .dictionary(["appearance": .string("dark"), "flag": .bool(true)]),
            "other": .dictionary(["appearance": .string("other")]),
        ])
    }

    @Test("Removing the last entry through the subscript leaves an empty collection, and other storage keys")
    func subscriptNilRemovesTheLastEntry() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")]), "other": .dictionary(["flag": .bool(true)])])
        let prefs = fixture.prefs()
        prefs["appearance"] = nil
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.values.isEmpty)
        #expect(try fixture.stored()["other"] == .dictionary(["flag": .bool(true)]))
        #expect(try fixture.stored()["settings"].map { $0 == .dictionary([:]) } ?? true)
    }

    @Test("An entry whose name is no longer in keys can be removed through the subscript")
    func subscriptNilRemovesAnObsoleteEntry() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark"), "retired": .integer(1)])])
        let prefs = fixture.prefs()
        #expect(prefs["retired"] as? Int == 1, "reads keep names that are not in keys")
        prefs["retired"] = nil
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored()["settings"] == .dictionary(["appearance": .string("dark")]))
    }

    @Test("Several entries whose names left keys can be removed through the subscript one at a time")
    func subscriptNilRemovesSeveralObsoleteEntries() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed([
            "settings": .dictionary(["appearance": .string("dark"), "retiredA": .integer(1), "retiredB": .integer(2)]),
        ])
        let prefs = fixture.prefs()
        prefs["retiredA"] = nil
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored()["settings"] == .dictionary(["appearance": .string("dark"), "retiredB": .integer(2)]))
        prefs["retiredB"] = nil
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored()["settings"] == .dictionary(["appearance": .string("dark")]))
        prefs["launchCount"] = 1
        #expect(prefs.baseClassOutcome == .success, "with the obsolete entries gone, writes work again")
    }

    @Test("A subscript read returns one entry, read afresh")
    func subscriptGetReadsAfresh() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        #expect(prefs["appearance"] == nil)
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")])])
        #expect(prefs["appearance"] as? String == "dark")
        try fixture.seed(["settings": .dictionary(["appearance": .string("light")])])
        #expect(prefs["appearance"] as? String == "light")
    }

    // MARK: count

    @Test("count is the number of entries, read afresh")
    func countReadsAfresh() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs()
        #expect(prefs.count == 0)
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark"), "flag": .bool(true), "name": .string("n")])])
        #expect(prefs.count == 3)
        prefs["launchCount"] = 1
        #expect(prefs.count == 4)
        try fixture.seed(["settings": .dictionary(["flag": .bool(true)])])
        #expect(prefs.count == 1)
        #expect(prefs.baseClassOutcome == .success)
    }

    // MARK: Removal

    static let removals = BaseClassWriteKind.allCases.filter(\.removesCollection)

    @Test("clear(), deleteAll(), values = [:] and values.removeAll() remove only this storage key from the domain file", arguments: removals)
    func removalRemovesOnlyThisStorageKey(removal: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        let other: [String: PropertyListValue] = ["other": .dictionary(["appearance": .string("other")]), "loose": .integer(42)]
        try fixture.seed(other.merging(["settings": .dictionary(["appearance": .string("dark")])]) { old, _ in old })
        let prefs = fixture.prefs()
        removal.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == other)
        #expect(prefs.values.isEmpty)
        #expect(prefs.count == 0)
    }

    @Test("After clear(), deleteAll(), values = [:] or values.removeAll(), a value of the global or registration domain is visible again",
          arguments: removals)
    func removalExposesLowerDomains(removal: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        fixture.suite.register(propertyListDefaults: ["registeredKey": .dictionary(["appearance": .string("registered")])])
        try fixture.global.modify(repairing: .failIfUnreadable) { $0["globalKey"] = .dictionary(["appearance": .string("global")]) }

        for (key, lower) in [("registeredKey", "registered"), ("globalKey", "global")] {
            let prefs = fixture.prefs(key: key)
            prefs.values = ["appearance": "mine"]
            #expect(prefs.appearance == "mine")
            removal.perform(on: prefs)
            #expect(prefs.baseClassOutcome == .success)
            #expect(prefs.appearance == lower)
            #expect(try fixture.stored()[key] == nil)
        }
        #expect(try fixture.global.snapshot().contents["globalKey"] == .dictionary(["appearance": .string("global")]))
        #expect(fixture.suite.registrationDomain["registeredKey"] == .dictionary(["appearance": .string("registered")]))
    }

    @Test("clear(), deleteAll(), values = [:] and values.removeAll() of a collection that is not stored write nothing", arguments: removals)
    func removalOfMissingCollectionWritesNothing(removal: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["other": .dictionary(["flag": .bool(true)])])
        let before = try #require(fixture.fileState())
        let prefs = fixture.prefs()
        removal.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .success)
        #expect(fixture.fileState() == before)
    }

    // MARK: flush

    @Test("flush() reloads and updates lastError: it reports a file that became unreadable, then its repair")
    func flushReloadsAndUpdatesLastError() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(values: ["appearance": "dark"])
        #expect(prefs.baseClassOutcome == .success)
        let good = try #require(fileBytes(fixture.path))

        fixture.writeDomainFile(Array("not a property list".utf8))
        prefs.flush()
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))

        fixture.writeDomainFile(good)
        prefs.flush()
        #expect(prefs.baseClassOutcome == .success)

        prefs["bogus"] = 1
        #expect(prefs.baseClassOutcome == .incorrectKeys(["bogus"]))
        prefs.flush()
        #expect(prefs.baseClassOutcome == .success, "flush() must clear the error of the previous operation")
    }

    @Test("flush() forces no disk write: the file keeps its bytes and inode, and nothing takes the lock")
    func flushNeverWrites() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(values: ["appearance": "dark", "launchCount": 2])
        let before = try #require(fixture.fileState())
        fixture.forgetCalls()
        prefs.flush()
        prefs.flush()
        #expect(prefs.baseClassOutcome == .success)
        #expect(fixture.fileState() == before)
        #expect(fixture.storageWrites().isEmpty, "flush() wrote: \(fixture.storageWrites())")
        #expect(fixture.domainDirectoryContents() == ["app.plist", "app.plist.lock"])
    }

    @Test("flush() copies nothing into the file: a collection from the global domain stays there")
    func flushDoesNotPersistLowerDomains() throws {
        let fixture = try BaseClassFixture()
        try fixture.global.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["appearance": .string("global")]) }
        let prefs = fixture.prefs()
        prefs.flush()
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.appearance == "global")
        #expect(fixture.everything().isEmpty, "flush() created \(fixture.everything())")
    }

    @Test("flush() repairs nothing: an unreadable file stays in place, not moved aside")
    func flushDoesNotRepair() throws {
        let fixture = try BaseClassFixture()
        fixture.writeDomainFile(Array("garbage".utf8))
        let before = try #require(fixture.fileState())
        let prefs = fixture.prefs()
        prefs.flush()
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
        #expect(fixture.fileState() == before)
        #expect(fixture.domainDirectoryContents() == ["app.plist"])
    }
}
