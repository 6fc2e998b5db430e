import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Entries that say which values they allow (SPEC §14), over an injected suite.
final class ConstrainedSettings: RVS_PersistentPrefs {
    @Entry("port", range: 1...65535, description: "The port the service listens on") var port = 8080
    @Entry("volume", range: 0.0...1.0) var volume = 0.5
    @Entry("level", allowed: ["debug", "info", "warning", "error"]) var level = "info"
    @Entry("appearance", allowed: [TypedAppearance.light, .dark]) var appearance = TypedAppearance.light
    @Entry("name", description: "Shown in the title bar") var name = "untitled"
    @Entry("lastOpened") var lastOpened: Date? = nil

    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?, key: String = "settings") {
        self.suite = suite
        super.init(key: key)
    }

    override var userDefaults: DefaultsSuite? { suite }
}

/// Float entries and an integer one, whose constraints other number kinds must meet as the entry reads them.
final class NumberKindSettings: RVS_PersistentPrefs {
    @Entry("gain", range: 0.1...0.9) var gain: Float = 0.5
    @Entry("steps", allowed: [0.25, 0.5, 1.0]) var steps: Float = 0.5
    @Entry("count", allowed: [1, 2, 4]) var size = 1
    @Entry("fraction", range: 0.0...0.1) var fraction = 0.05
    @Entry("big", allowed: [9_007_199_254_740_993]) var big = 9_007_199_254_740_993
    @Entry("name") var name = ""
    let suite: DefaultsSuite?

    init(suite: DefaultsSuite?) {
        self.suite = suite
        super.init(key: "numbers")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

/// A default its own constraint refuses: a programming error.
final class SelfRefusingSettings: RVS_PersistentPrefs {
    @Entry("retries", range: 1...10) var retries = 50
    override var userDefaults: DefaultsSuite? { DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: []) }
}

@Suite("Entries with constraints, and the schema tools read (SPEC §14)")
struct EntryConstraintTests {
    let fixture: TypedFixture
    let settings: ConstrainedSettings

    init() throws {
        fixture = try TypedFixture()
        settings = ConstrainedSettings(suite: fixture.suite)
    }

    /// The entry `lastError` refuses as not allowed, and the file's bytes stayed as they were.
    private func expectRefused(_ entry: String, bytesBefore: [UInt8]?, _ comment: Comment) {
        guard case .valueNotAllowed(let refused, let reason)? = settings.lastError else {
            Issue.record("\(comment): lastError is \(String(describing: settings.lastError))")
            return
        }
        #expect(refused == entry, comment)
        #expect(!reason.isEmpty, comment)
        #expect(fileBytes(fixture.path) == bytesBefore, "\(comment): the file changed")
    }

    @Test("A value outside an entry's range is refused through the property, the subscript, values and modify, writing nothing")
    func rangeIsEnforcedOnEveryPath() throws {
        settings.port = 7777
        #expect(settings.lastError == nil)
        let before = fileBytes(fixture.path)
        settings.port = 70000
        expectRefused("port", bytesBefore: before, "property")
        settings["port"] = 0
        expectRefused("port", bytesBefore: before, "subscript")
        settings.values = ["port": 65536, "level": "info"]
        expectRefused("port", bytesBefore: before, "values")
        settings.modify("port") { _ in -1 }
        expectRefused("port", bytesBefore: before, "untyped modify")
        settings.modify(\.$port) { $0 += 100_000 }
        expectRefused("port", bytesBefore: before, "typed modify")
        settings.volume = 1.5
        expectRefused("volume", bytesBefore: before, "a real range")
        settings["port"] = "7777"
        expectRefused("port", bytesBefore: before, "a string where the range wants a number")
        #expect(try fixture.stored()["port"] == .integer(7777))
        settings.port = 65535
        settings.volume = 0.0
        #expect(settings.lastError == nil)
        #expect(try fixture.stored()["port"] == .integer(65535))
    }

    @Test("A value not among an entry's allowed values is refused on every path; allowed ones are written")
    func allowedValuesAreEnforced() throws {
        settings.level = "warning"
        settings.appearance = .dark
        #expect(settings.lastError == nil)
        let before = fileBytes(fixture.path)
        settings.level = "verbose"
        expectRefused("level", bytesBefore: before, "property")
        settings["level"] = "loud"
        expectRefused("level", bytesBefore: before, "subscript")
        settings.appearance = .system
        expectRefused("appearance", bytesBefore: before, "an enum's raw value not allowed")
        settings.modify(\.$level) { $0 = "trace" }
        expectRefused("level", bytesBefore: before, "typed modify")
        #expect(try fixture.stored()["level"] == .string("warning"))
        // Removing the entry is allowed: it reads as its default.
        settings["level"] = nil
        #expect(settings.lastError == nil)
        #expect(settings.level == "info")
    }

    @Test("A write of other entries is not refused for a constrained entry it does not set")
    func otherEntriesAreNotChecked() throws {
        try fixture.seed(["port": .integer(99999)])  // written by someone else, breaking the range
        settings.name = "x"
        #expect(settings.lastError == nil)
        #expect(try fixture.stored() == ["port": .integer(99999), "name": .string("x")])
    }

    @Test("The schema lists each entry's type, default, range, allowed values and description, as an XML property list")
    func schemaDescribesTheEntries() throws {
        let schema = settings.schema
        #expect(schema.storageKey == "settings")
        #expect(schema.entries.map(\.name) == ["appearance", "lastOpened", "level", "name", "port", "volume"])
        let port = try #require(schema.entries.first { $0.name == "port" })
        #expect(port.type == "integer" && port.defaultValue == .integer(8080) && port.range == 1...65535)
        #expect(port.description == "The port the service listens on")
        let level = try #require(schema.entries.first { $0.name == "level" })
        #expect(level.allowed == ["debug", "info", "warning", "error"].map(PropertyListValue.string))
        let lastOpened = try #require(schema.entries.first { $0.name == "lastOpened" })
        #expect(lastOpened.type == nil && lastOpened.defaultValue == nil)

        let data = try schema.propertyListData()
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("<?xml"))
        // Read back by Python's plistlib, as a tool outside the library would.
        let summary = try python("""
            import plistlib, sys
            root = plistlib.loads(sys.stdin.buffer.read())
            e = root["settings"]
            print(e["port"]["type"], e["port"]["default"], e["port"]["range"], e["port"]["description"])
            print(e["volume"]["type"], e["volume"]["range"], e["level"]["allowed"], e["appearance"]["allowed"])
            print(sorted(e["lastOpened"].keys()), e["name"]["description"])
            """, input: Array(data))
        #expect(String(decoding: summary, as: UTF8.self) == """
            integer 8080 [1, 65535] The port the service listens on
            real [0, 1] ['debug', 'info', 'warning', 'error'] ['light', 'dark']
            [] Shown in the title bar

            """)
    }

    @Test("A default its own constraint refuses stops the program with a message naming the entry, in optimized builds too")
    func defaultBreakingItsConstraintIsAProgrammingError() async {
        // `preconditionFailure` prints its message in unoptimized builds only; a user's release build must say it too.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SelfRefusingSettings(key: "refusing").retries
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the default of the entry \"retries\" breaks its own constraint"), "message: \(message)")
    }

    @Test("A constraint is met by a number of any kind as the entry reads it: a Double within a Float range or among Float allowed values, 2.0 among integers; the schema writes Float bounds as declared")
    func constraintsCompareNumbersAsTheEntryReadsThem() throws {
        let numbers = NumberKindSettings(suite: fixture.suite)
        for (name, value) in [("gain", 0.9 as Any), ("gain", 0.1), ("steps", 0.5), ("count", 2.0), ("gain", Float(0.1)),
                              ("fraction", 0.1)] {
            numbers[name] = value
            #expect(numbers.lastError == nil, "\(name) = \(value): \(String(describing: numbers.lastError))")
        }
        #expect(numbers.gain == 0.1 && numbers.steps == 0.5 && numbers.size == 2 && numbers.fraction == 0.1)
        // Refused: a Double just off a Float entry's allowed value (as prefsctl, reading the schema's decimals,
        // refuses it), a Float whose exact value is above a Double entry's bound, and 2^53 as a real, which reads
        // back as 9007199254740992, not the allowed 9007199254740993.
        for (name, value) in [("gain", 0.95 as Any), ("steps", 0.3), ("count", 3.0), ("steps", 0.2500000001),
                              ("fraction", Float(0.1)), ("big", 9_007_199_254_740_992.0)] {
            numbers[name] = value
            guard case .valueNotAllowed(let entry, _)? = numbers.lastError else {
                Issue.record("\(name) = \(value) was not refused: \(String(describing: numbers.lastError))")
                continue
            }
            #expect(entry == name)
        }
        // A Double stored for a Float entry (as a tool writes it) keeps its constraint: other writes go on.
        numbers.values = numbers.values.merging(["name": "z"]) { _, new in new }
        #expect(numbers.lastError == nil, "\(String(describing: numbers.lastError))")
        let gain = try #require(numbers.schema.entries.first { $0.name == "gain" })
        #expect(gain.range == 0.1...0.9)
        let steps = try #require(numbers.schema.entries.first { $0.name == "steps" })
        #expect(steps.allowed == [.real(0.25), .real(0.5), .real(1.0)])
    }
}
