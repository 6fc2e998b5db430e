import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// Serialized: the decodings are counted in a static property of TypedCounted, which only this suite uses.
@Suite("Typed entries decode only after the stored value changed", .serialized)
struct EntryCacheTests {
    @Test("Reads of an unchanged domain decode nothing; a change elsewhere in the domain decodes nothing either")
    func decodesOnlyAfterAChange() throws {
        let fixture = try TypedFixture()
        let settings = TypedCountingSettings(suite: fixture.suite)
        settings.counted = TypedCounted(value: 1)
        let start = TypedCounted.count
        #expect(settings.counted == TypedCounted(value: 1))
        #expect(TypedCounted.count == start + 1)
        for _ in 0..<10 { #expect(settings.counted.value == 1) }
        #expect(TypedCounted.count == start + 1, "an unchanged domain was decoded again")

        settings.other = 5  // the domain file changes, this entry does not
        #expect(settings.counted.value == 1)
        #expect(TypedCounted.count == start + 1, "an unchanged entry was decoded again")

        // Another instance, with its own domain object, as another process: its change is seen, and decoded once.
        let elsewhere = TypedCountingSettings(suite: DefaultsSuite(
            persistentDomain: try FileDomainStorage(directory: fixture.directory.path, name: "app"), arguments: []
        ))
        elsewhere.counted = TypedCounted(value: 2)
        #expect(settings.counted.value == 2)
        #expect(settings.counted.value == 2)
        #expect(TypedCounted.count == start + 2, "expected one decoding of the new value")
    }

    @Test("A cached value that did not decode is reported at every read, and decoded again once the value changes")
    func cachedFailureIsReportedEachTime() throws {
        let fixture = try TypedFixture()
        try fixture.seed(["counted": .dictionary(["value": .string("x")])])
        let settings = TypedCountingSettings(suite: fixture.suite)
        #expect(settings.counted == TypedCounted())
        #expect(settings.undecodableEntry == "counted")
        settings.other = 1
        #expect(settings.lastError == nil)
        #expect(settings.counted == TypedCounted())
        #expect(settings.undecodableEntry == "counted")
        try fixture.seed(["counted": .dictionary(["value": .integer(4)])])
        #expect(settings.counted == TypedCounted(value: 4))
        #expect(settings.lastError == nil)
    }

    @Test("A changed storage key reads the other collection, not the cached value")
    func storageKeyChangeIsSeen() throws {
        let fixture = try TypedFixture()
        let settings = fixture.settings()
        settings.launchCount = 1
        settings.key = "other"
        #expect(settings.launchCount == 0)
        settings.launchCount = 2
        settings.key = "settings"
        #expect(settings.launchCount == 1)
    }
}

/// A Codable class: reading it and changing the result in place calls only the entry's getter.
final class TypedAccount: Codable, @unchecked Sendable {
    var name = "anonymous"
}

final class TypedAccountSettings: RVS_PersistentPrefs {
    @Entry("account") var account = TypedAccount()
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "settings")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

@Suite("Typed entries of a class type")
struct EntryClassValueTests {
    @Test("Changing a read object of a class-typed entry in place does not change what later reads return")
    func classValuesAreNotShared() throws {
        let fixture = try TypedFixture()
        let settings = TypedAccountSettings(suite: fixture.suite)
        let stored = TypedAccount()
        stored.name = "ada"
        settings.account = stored
        settings.account.name = "changed without a write"  // the getter's object, changed in place
        #expect(settings.account.name == "ada")
        #expect(try fixture.stored()["account"] == .dictionary(["name": .string("ada")]))
    }
}
