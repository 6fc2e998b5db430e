import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A struct: not a property-list value, whatever it holds.
struct BaseClassPoint: Codable {
    var x = 1
    var y = 2
}

/// Values that are not property-list values, alone or anywhere inside containers.
enum BaseClassNonPlistValue: String, CaseIterable, Sendable {
    case null = "NSNull"
    case url = "URL"
    case uuid = "UUID"
    case structure = "a Codable struct"
    case integerKeys = "[Int: String]"
    case noneInArray = "Optional.none inside an array"
    case noneInDictionary = "Optional.none inside a dictionary"
    case nullDeepInside = "NSNull three levels down"
    case urlDeepInArrays = "URL inside nested arrays"
    case structInDictionaryInArray = "a struct in a dictionary in an array"
    case set = "a Set"
    case beyondUInt64 = "an Int128 above UInt64.max"

    var value: Any {
        switch self {
        case .null: return NSNull()
        case .url: return URL(fileURLWithPath: "/tmp/example")
        case .uuid: return UUID()
        case .structure: return BaseClassPoint()
        case .integerKeys: return [1: "one", 2: "two"] as [Int: String]
        case .noneInArray: return [1, Optional<Int>.none as Any, 3] as [Any]
        case .noneInDictionary: return ["fine": 1, "missing": Optional<String>.none as Any] as [String: Any]
        case .nullDeepInside: return ["level1": [["level3": ["ok", NSNull()] as [Any]]]] as [String: Any]
        case .urlDeepInArrays: return [[[URL(fileURLWithPath: "/deep")]]]
        case .structInDictionaryInArray: return [["point": BaseClassPoint()] as [String: Any]] as [Any]
        case .set: return Set(["a", "b"])
        case .beyondUInt64: return Int128(UInt64.max) + 1
        }
    }
}

@Suite("Validation before anything is written: names in keys first, then property-list values")
struct BaseClassValidationTests {
    static let seeded: [String: PropertyListValue] = [
        "settings": .dictionary(["appearance": .string("dark"), "launchCount": .integer(3)]),
        "other": .dictionary(["name": .string("untouched")]),
    ]

    // MARK: Names

    @Test("Names not in keys are rejected with incorrectKeys naming them, sorted", arguments: BaseClassWriteKind.allCases.filter(\.takesEntries))
    func unknownNamesAreRejectedSorted(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let entries: [String: Any] = write.validatesEntriesTogether
            ? ["zz": 1, "appearance": "light", "aa": 2, "mm": 3]
            : ["zz": 1]
        let prefs = write.perform(entries, in: fixture)
        let expected = write.validatesEntriesTogether ? ["aa", "mm", "zz"] : ["zz"]
        #expect(prefs.baseClassOutcome == .incorrectKeys(expected))
        #expect(try fixture.stored() == Self.seeded)
    }

    @Test("The base class itself allows no names: it accepts only an empty collection")
    func baseClassAllowsNoNames() throws {
        let fixture = try BaseClassFixture()
        let suite = fixture.suite
        final class Bare: RVS_PersistentPrefs {
            let suite: DefaultsSuite
            init(suite: DefaultsSuite) {
                self.suite = suite
                super.init(key: "bare", values: nil)
            }
            override var userDefaults: DefaultsSuite? { suite }
        }
        let prefs = Bare(suite: suite)
        prefs["anything"] = 1
        #expect(prefs.baseClassOutcome == .incorrectKeys(["anything"]))
        prefs.values = [:]
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored().isEmpty)
    }

    @Test("Names are checked before values: a write with both faults reports incorrectKeys", arguments: BaseClassWriteKind.allCases.filter(\.takesEntries))
    func keysAreCheckedFirst(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let entries: [String: Any] = write.validatesEntriesTogether
            ? ["bogus": NSNull(), "appearance": URL(fileURLWithPath: "/tmp"), "zzz": 1]
            : ["bogus": NSNull()]
        let prefs = write.perform(entries, in: fixture)
        let expected = write.validatesEntriesTogether ? ["bogus", "zzz"] : ["bogus"]
        #expect(prefs.baseClassOutcome == .incorrectKeys(expected))
        #expect(try fixture.stored() == Self.seeded)
    }

    @Test("A stored entry whose name left keys blocks writes of the collection until it is removed")
    func obsoleteStoredNamesAreReported() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark"), "retired": .integer(1)])])
        let before = try #require(fixture.fileState())
        let prefs = fixture.prefs()
        prefs["launchCount"] = 2
        #expect(prefs.baseClassOutcome == .incorrectKeys(["retired"]))
        prefs.values["launchCount"] = 2
        #expect(prefs.baseClassOutcome == .incorrectKeys(["retired"]))
        #expect(fixture.fileState() == before)

        prefs["retired"] = nil
        prefs["launchCount"] = 2
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored()["settings"] == .dictionary(["appearance": .string("dark"), "launchCount": .integer(2)]))
    }

    // MARK: Values

    @Test("A value that is not a property-list value, at any depth, is rejected with valuesNotPlistCompatible naming its entry",
          arguments: BaseClassNonPlistValue.allCases)
    func nonPropertyListValuesAreRejected(bad: BaseClassNonPlistValue) throws {
        for write in BaseClassWriteKind.allCases.filter(\.takesEntries) {
            let fixture = try BaseClassFixture()
            try fixture.seed(Self.seeded)
            let before = try #require(fixture.fileState())
            let prefs = write.perform(["map": bad.value], in: fixture)
            #expect(prefs.baseClassOutcome == .valuesNotPlistCompatible(["map"]), "\(write.testDescription)")
            #expect(fixture.fileState() == before, "\(write.testDescription) changed the file")
        }
    }

    @Test("Offending entries are named by their top-level name, sorted, and the good entries of the write are not saved",
          arguments: BaseClassWriteKind.allCases.filter(\.validatesEntriesTogether))
    func offendingNamesAreSortedAndNothingIsSaved(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let prefs = write.perform([
            "zeta": NSNull(), "alpha": ["nested": [URL(fileURLWithPath: "/x")]] as [String: Any],
            "mid": 1, "appearance": UUID(), "name": "fine",
        ], in: fixture)
        #expect(prefs.baseClassOutcome == .valuesNotPlistCompatible(["alpha", "appearance", "zeta"]))
        #expect(try fixture.stored() == Self.seeded)
    }

    @Test("An Optional.none as a whole entry value of values is rejected, not stored as an absence")
    func topLevelNoneIsRejected() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let prefs = fixture.prefs()
        prefs.values = ["appearance": "x", "name": Optional<String>.none as Any]
        #expect(prefs.baseClassOutcome == .valuesNotPlistCompatible(["name"]))
        #expect(try fixture.stored() == Self.seeded)
    }

    @Test("Every kind of property-list value is accepted, at any depth", arguments: BaseClassWriteKind.allCases.filter(\.takesEntries))
    func propertyListValuesAreAccepted(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        let nested: [String: Any] = [
            "string": "s", "bool": true, "int": -5, "double": 0.5, "date": Date(timeIntervalSinceReferenceDate: 1),
            "data": Data([0, 1]), "array": [1, "two", [3.0, ["four": false] as [String: Any]] as [Any]] as [Any],
            "int8": Int8(-8), "uint32": UInt32(32), "float": Float(1.5), "optional": Optional("wrapped") as Any,
        ]
        let prefs = write.perform(["map": nested, "list": [nested, [nested]] as [Any], "name": "n"], in: fixture)
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored()["settings"]?.dictionaryValue?.keys.sorted() == ["list", "map", "name"])
    }

    // MARK: A rejected write changes nothing

    /// The rejected writes of every kind, each with what `lastError` must say.
    static let rejections: [(BaseClassWriteKind, [String: String], BaseClassOutcome)] = BaseClassWriteKind.allCases.filter(\.takesEntries).flatMap { write in
        [
            (write, ["bogus": "string"], BaseClassOutcome.incorrectKeys(["bogus"])),
            (write, ["map": "url"], .valuesNotPlistCompatible(["map"])),
        ]
    }

    static func entries(_ description: [String: String]) -> [String: Any] {
        description.mapValues { $0 == "url" ? URL(fileURLWithPath: "/tmp") as Any : $0 as Any }
    }

    @Test("A rejected write leaves the stored bytes identical and the other storage keys untouched", arguments: rejections)
    func rejectedWriteLeavesTheFile(write: BaseClassWriteKind, entries: [String: String], outcome: BaseClassOutcome) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let before = try #require(fixture.fileState())
        let prefs = write.perform(Self.entries(entries), in: fixture)
        #expect(prefs.baseClassOutcome == outcome)
        #expect(fixture.fileState() == before)
        #expect(try fixture.stored()["other"] == Self.seeded["other"])
        #expect(prefs.appearance == "dark" && prefs.launchCount == 3)
    }

    @Test("A rejected write on a domain that does not exist yet creates nothing: no file, no lock file, no directory",
          arguments: rejections)
    func rejectedWriteCreatesNothing(write: BaseClassWriteKind, entries: [String: String], outcome: BaseClassOutcome) throws {
        let fixture = try BaseClassFixture()
        let prefs = write.perform(Self.entries(entries), in: fixture)
        #expect(prefs.baseClassOutcome == outcome)
        #expect(fixture.everything().isEmpty, "a rejected write created \(fixture.everything())")
    }

    @Test("A rejected write notifies nobody, not even observers of the prior change", arguments: rejections)
    func rejectedWriteNotifiesNobody(write: BaseClassWriteKind, entries: [String: String], outcome: BaseClassOutcome) throws {
        guard !write.isInitializer else { return }  // nobody can observe an instance before it exists
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let prefs = fixture.prefs()
        let counter = BaseClassNotificationCounter()
        let token = prefs.observe(\.values, options: [.prior, .old, .new]) { _, _ in counter.count += 1 }
        let typed = prefs.observe(\.appearance, options: [.prior]) { _, _ in counter.count += 1 }
        write.perform(Self.entries(entries), on: prefs)
        #expect(prefs.baseClassOutcome == outcome)
        #expect(counter.count == 0, "a rejected write sent \(counter.count) notifications")
        token.invalidate()
        typed.invalidate()
    }
}
