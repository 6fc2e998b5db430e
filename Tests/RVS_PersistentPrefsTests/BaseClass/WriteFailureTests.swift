import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("A failed disk write: writeFailed with the path, reported at once, and the stored bytes unchanged")
struct BaseClassWriteFailureTests {
    static let seeded: [String: PropertyListValue] = [
        "settings": .dictionary(BaseClassWriteKind.before),
        "other": .dictionary(["flag": .bool(true)]),
    ]

    /// The steps of a write that can fail, aimed at the file they concern.
    static let faults: [(SystemCall, String, PrefsErrno)] = [
        (.write, ".app.plist.tmp", .noSpace),
        (.open, ".app.plist.tmp", .permissionDenied),
        (.rename, "app.plist", .readOnlyFileSystem),
        (.close, ".app.plist.tmp", .ioError),
        (.open, "app.plist.lock", .readOnlyFileSystem),
    ]

    @Test("Every kind of write reports a full disk as writeFailed with the domain file's path, and changes nothing",
          arguments: BaseClassWriteKind.allCases)
    func everyWriteReportsAFullDisk(write: BaseClassWriteKind) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let before = try #require(fixture.fileState())
        fixture.faults.fail(.write, with: .noSpace)

        let prefs = write.perform(in: fixture)

        #expect(prefs.baseClassOutcome == .writeFailed(path: fixture.path, errno: .noSpace))
        #expect(fixture.fileState() == before)
        #expect(fixture.domainDirectoryContents() == ["app.plist", "app.plist.lock"], "a temporary file was left behind")
        #expect(try fixture.stored() == Self.seeded)
    }

    @Test("A write failing at any step is writeFailed with the domain file's path and the error, and the file stays as it was",
          arguments: faults)
    func everyStepReportsItsFailure(call: SystemCall, path: String, errno: PrefsErrno) throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(Self.seeded)
        let before = try #require(fixture.fileState())
        let prefs = fixture.prefs()
        #expect(prefs.baseClassOutcome == .success)
        fixture.faults.fail(call, with: errno, pathContaining: path)

        prefs["launchCount"] = 4

        #expect(prefs.baseClassOutcome == .writeFailed(path: fixture.path, errno: errno))
        #expect(fixture.fileState() == before)
        #expect(prefs.launchCount == 1, "a read after the failure shows the previous value")
        #expect(prefs.baseClassOutcome == .success, "the read clears the write's error")
        prefs["launchCount"] = 4
        #expect(prefs.baseClassOutcome == .success, "the failure is not sticky")
        #expect(try fixture.stored()["settings"] == .dictionary(["appearance": .string("light"), "launchCount": .integer(4)]))
    }

    @Test("A first write that fails creates no domain file")
    func failedFirstWriteCreatesNoFile() throws {
        let fixture = try BaseClassFixture()
        fixture.faults.fail(.rename, with: .noSpace)
        let prefs = fixture.prefs(values: ["appearance": "dark"])
        #expect(prefs.baseClassOutcome == .writeFailed(path: fixture.path, errno: .noSpace))
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
        #expect(prefs.values.isEmpty)
    }
}
