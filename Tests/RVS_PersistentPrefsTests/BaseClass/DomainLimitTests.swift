import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("BaseClass: a write that would make the domain unreadable")
struct BaseClassDomainLimitTests {
    @Test("A subscript write of a value larger than a read accepts sets lastError to domainTooLarge and keeps every collection readable")
    func oversizedEntryIsRefused() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["other": .dictionary(["kept": .integer(1)])])
        let prefs = fixture.prefs()
        prefs["appearance"] = "dark"
        let before = fixture.fileState()
        prefs["appearance"] = Data(count: FileDomainStorage.maximumFileSize)
        guard case .domainTooLarge(let path, _, let limit)? = prefs.lastError else {
            Issue.record("lastError is \(String(describing: prefs.lastError))")
            return
        }
        #expect(path == fixture.path && limit == FileDomainStorage.maximumFileSize)
        #expect(fixture.fileState() == before)
        #expect(prefs["appearance"] as? String == "dark")
        #expect(try fixture.stored()["other"] == .dictionary(["kept": .integer(1)]))
    }
}
