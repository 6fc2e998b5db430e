import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A domain file that cannot be read as a domain.
enum BaseClassUnreadableFile: String, CaseIterable, Sendable {
    case notAPropertyList = "text that is not a property list"
    case arrayRoot = "an XML property list whose root is an array"
    case stringRoot = "an XML property list whose root is a string"

    var bytes: [UInt8] {
        switch self {
        case .notAPropertyList:
            return Array("appearance = dark, but not as a property list {{{".utf8)
        case .arrayRoot:
            return Array("""
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><array><string>settings</string></array></plist>
                """.utf8)
        case .stringRoot:
            return Array("""
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><string>settings</string></plist>
                """.utf8)
        }
    }
}

@Suite("A failed read: an unreadable domain file or a stored value that is not a dictionary aborts the writes that needed it")
struct BaseClassFailedReadTests {
    static let dependentWrites = BaseClassWriteKind.allCases.filter(\.readsStoredCollection)
    static let unreadableCases = BaseClassUnreadableFile.allCases.flatMap { file in dependentWrites.map { (file, $0) } }

    func asideFiles(_ fixture: BaseClassFixture) -> [String] {
        fixture.domainDirectoryContents().filter { $0.hasPrefix("app.plist.unreadable-") }
    }

    // MARK: Unreadable domain file

    @Test("Loading from an unreadable domain file reports domainUnreadable with the file's path, and an empty collection",
          arguments: BaseClassUnreadableFile.allCases)
    func unreadableFileIsReportedWithItsPath(file: BaseClassUnreadableFile) throws {
        let fixture = try BaseClassFixture()
        fixture.writeDomainFile(file.bytes)
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
        #expect(prefs.values.isEmpty)
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
        #expect(prefs["appearance"] == nil)
        #expect(prefs.count == 0)
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
    }

    @Test("Over an unreadable domain file, merges, subscript writes and in-place mutations write nothing and move nothing",
          arguments: unreadableCases)
    func unreadableFileAbortsDependentWrites(file: BaseClassUnreadableFile, write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        fixture.writeDomainFile(file.bytes)
        let before = try #require(fixture.fileState())
        let prefs = write.perform(in: fixture)
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
        #expect(fixture.fileState() == before)
        #expect(asideFiles(fixture).isEmpty, "the file was moved aside: \(fixture.domainDirectoryContents())")
    }

    @Test("values = [...], clear(), deleteAll() and values = [:] repair an unreadable file, moving it aside intact",
          arguments: BaseClassWriteKind.allCases.filter(\.isRepair))
    func deliberateReplacementRepairs(repair: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        let garbage = BaseClassUnreadableFile.notAPropertyList.bytes
        fixture.writeDomainFile(garbage)
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))

        repair.perform(on: prefs)

        #expect(prefs.baseClassOutcome == .success)
        let aside = asideFiles(fixture)
        #expect(aside.count == 1, "expected one app.plist.unreadable-* file in \(fixture.domainDirectoryContents())")
        if let name = aside.first {
            #expect(fileBytes(fixture.directory.appending("prefs/" + name)) == garbage, "the unreadable file was not kept intact")
        }
        let stored = try fixture.stored()
        #expect(stored["settings"] == (repair.removesCollection ? nil : .dictionary(repair.after)))
        #expect(prefs.values.count == repair.after.count)
        #expect(prefs.baseClassOutcome == .success)
        prefs["launchCount"] = 1
        #expect(prefs.baseClassOutcome == .success, "after the repair, ordinary writes work again")
    }

    @Test("An unreadable file that becomes readable again is read without any repair")
    func unreadableFileRecovers() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")])])
        let good = try #require(fileBytes(fixture.path))
        let prefs = fixture.prefs()
        fixture.writeDomainFile(BaseClassUnreadableFile.arrayRoot.bytes)
        prefs["appearance"] = "light"
        #expect(prefs.baseClassOutcome == .domainUnreadable(path: fixture.path))
        fixture.writeDomainFile(good)
        #expect(prefs.appearance == "dark")
        #expect(prefs.baseClassOutcome == .success)
    }

    // MARK: Stored value that is not a dictionary

    static let notDictionaries: [PropertyListValue] = [.string("dark"), .integer(1), .bool(true), .array([.string("a")])]

    @Test("A stored value that is not a dictionary reads as an empty collection with invalidStoredValue(key:)",
          arguments: notDictionaries)
    func nonDictionaryIsInvalidStoredValue(stored: PropertyListValue) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": stored])
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "settings"))
        #expect(prefs.values.isEmpty)
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "settings"))
    }

    @Test("Over a stored value that is not a dictionary, merges, subscript writes and in-place mutations write nothing",
          arguments: dependentWrites)
    func nonDictionaryAbortsDependentWrites(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .string("dark"), "other": .dictionary(["flag": .bool(true)])])
        let before = try #require(fixture.fileState())
        let prefs = write.perform(in: fixture)
        #expect(prefs.baseClassOutcome == .invalidStoredValue(key: "settings"))
        #expect(fixture.fileState() == before)
    }

    @Test("values = [...] replaces a stored value that is not a dictionary, and leaves other storage keys alone")
    func assigningValuesRepairsNonDictionary() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .string("dark"), "other": .dictionary(["flag": .bool(true)])])
        let prefs = fixture.prefs()
        prefs.values = ["appearance": "light"]
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == [
            "settings": .dictionary(["appearance": .string("light")]), "other": .dictionary(["flag": .bool(true)]),
        ])
        prefs["launchCount"] = 2
        #expect(prefs.baseClassOutcome == .success)
        #expect(prefs.count == 2)
    }

    @Test("clear(), deleteAll() and values = [:] remove a stored value that is not a dictionary, and leave other storage keys",
          arguments: BaseClassWriteKind.allCases.filter { $0.isRepair && $0.removesCollection })
    func removalRepairsNonDictionary(repair: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .integer(5), "other": .dictionary(["flag": .bool(true)])])
        let prefs = fixture.prefs()
        repair.perform(on: prefs)
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == ["other": .dictionary(["flag": .bool(true)])])
        #expect(prefs.values.isEmpty && prefs.baseClassOutcome == .success)
    }

    @Test("A failed read of the file (EIO) is reported with the file's path and aborts a merge", arguments: [PrefsErrno.ioError, .permissionDenied])
    func failedSystemReadAbortsMerge(errno: PrefsErrno) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["settings": .dictionary(["appearance": .string("dark")])])
        let before = try #require(fixture.fileState())
        fixture.faults.fail(.open, with: errno, times: 10, pathContaining: "app.plist")
        let prefs = fixture.prefs(values: ["appearance": "light"])
        #expect(prefs.baseClassOutcome == .readFailed(path: fixture.path, errno: errno))
        fixture.faults.reset()
        #expect(fixture.fileState() == before)
        #expect(prefs.appearance == "dark")
        #expect(prefs.baseClassOutcome == .success)
    }
}
