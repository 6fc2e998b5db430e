import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("The search list of a defaults suite")
struct SearchListTests {
    let persistent = InMemoryDomainStorage(location: "persistent")
    let global = InMemoryDomainStorage(contents: ["shared": .string("global"), "onlyGlobal": .integer(3)], location: "global")

    func suite(arguments: [String] = []) -> DefaultsSuite {
        let suite = DefaultsSuite(persistentDomain: persistent, globalDomain: global, arguments: ["program"] + arguments)
        suite.register(defaults: ["shared": .string("registered"), "onlyRegistered": .bool(true)])
        return suite
    }

    @Test("A read takes the value from the first domain that holds the key: arguments, persistent, global, registration")
    func readsInSearchListOrder() throws {
        let suite = suite(arguments: ["-shared", "argument"])
        try persistent.modify(repairing: .failIfUnreadable) { $0["shared"] = .string("persistent") }
        #expect(try suite.lookup("shared")?.domain == .arguments)
        #expect(try suite.value(forKey: "shared") == .string("argument"))

        let withoutArguments = self.suite()
        #expect(try withoutArguments.lookup("shared")?.domain == .persistent)
        try persistent.modify(repairing: .failIfUnreadable) { $0["shared"] = nil }
        #expect(try withoutArguments.lookup("shared")?.domain == .global)
        #expect(try withoutArguments.value(forKey: "onlyRegistered") == .bool(true))
        #expect(try withoutArguments.lookup("onlyRegistered")?.domain == .registration)
        #expect(try withoutArguments.value(forKey: "absent") == nil)
    }

    @Test("A value shadows lower domains whole: dictionaries are not merged across domains")
    func shadowingIsWholeValue() throws {
        let suite = suite()
        suite.register(defaults: ["settings": .dictionary(["a": .integer(1), "b": .integer(2)])])
        try suite.set(.dictionary(["a": .integer(10)]), forKey: "settings")
        #expect(try suite.value(forKey: "settings") == .dictionary(["a": .integer(10)]))
    }

    @Test("Argument values are parsed as property-list text, OpenStep or XML, else taken as strings")
    func argumentDomainParsesPropertyListText() {
        let domain = DefaultsSuite.parseArgumentDomain([
            "program", "-settings", "{appearance = dark; sizes = (1, 2);}", "-name", "plain words",
            "-xml", "<plist version=\"1.0\"><integer>42</integer></plist>", "-dangling",
        ])
        #expect(domain["settings"] == .dictionary(["appearance": .string("dark"), "sizes": .array([.string("1"), .string("2")])]))
        #expect(domain["name"] == .string("plain words"))
        #expect(domain["xml"] == .integer(42))
        #expect(domain["dangling"] == nil)
        #expect(domain.count == 3)
    }

    @Test("Writes and removals touch only the persistent domain, and a removal exposes lower domains again")
    func writesTouchOnlyThePersistentDomain() throws {
        let suite = suite(arguments: ["-fromArguments", "x"])
        let globalBefore = try global.snapshot()
        try suite.set(.string("mine"), forKey: "shared")
        try suite.set(.string("mine"), forKey: "fromArguments")
        #expect(try persistent.snapshot().contents == ["shared": .string("mine"), "fromArguments": .string("mine")])
        #expect(try global.snapshot() === globalBefore)
        #expect(suite.registrationDomain["shared"] == .string("registered"))
        #expect(suite.argumentDomain["fromArguments"] == .string("x"))
        #expect(try suite.value(forKey: "fromArguments") == .string("x"), "the argument domain still shadows the write")

        try suite.removeValue(forKey: "shared")
        #expect(try suite.value(forKey: "shared") == .string("global"))
        try global.modify(repairing: .failIfUnreadable) { $0["shared"] = nil }
        #expect(try suite.value(forKey: "shared") == .string("registered"))
    }

    @Test("dictionaryRepresentation shows each key with the value a read of it returns")
    func dictionaryRepresentationFollowsTheSearchList() throws {
        let suite = suite(arguments: ["-onlyGlobal", "from arguments"])
        try suite.set(.integer(1), forKey: "mine")
        let all = try suite.dictionaryRepresentation()
        #expect(all["mine"] == .integer(1))
        #expect(all["shared"] == .string("global"))
        #expect(all["onlyGlobal"] == .string("from arguments"))
        #expect(all["onlyRegistered"] == .bool(true))
    }

    @Test("An unreadable persistent domain is reported by a read, not skipped for a lower domain")
    func unreadablePersistentDomainIsReported() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.appending("app.plist"), Array("not a property list".utf8))
        let suite = DefaultsSuite(
            persistentDomain: try FileDomainStorage(directory: directory.path, name: "app"),
            globalDomain: global, arguments: []
        )
        #expect(throws: PrefsError.self) { try suite.value(forKey: "shared") }
    }

    @Test("The registration domain is never persisted")
    func registrationIsNotPersisted() throws {
        let directory = TemporaryDirectory()
        let suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory.path, name: "app"), arguments: [])
        suite.register(defaults: ["registered": .integer(1)])
        #expect(try suite.value(forKey: "registered") == .integer(1))
        #expect(directory.contents().isEmpty)
    }
}
