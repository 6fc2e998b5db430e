import Foundation
import Glibc
import Testing
import PrefsPropertyList
import PrefsStorage

/// What `localizedDescription` says: code that logs `error.localizedDescription`, as much Swift code does,
/// must get the same message as `description`, not Foundation's generic "The operation could not be
/// completed" that Linux gives an error without one.
@Suite("localizedDescription of the library's errors")
struct ErrorDescriptionTests {
    @Test("A PrefsError's localizedDescription is its description, with the path and the failed step")
    func prefsErrorLocalizedDescription() {
        let errors: [PrefsError] = [
            .writeFailed(path: "/tmp/x/app.plist", step: .renameOverDomainFile("/tmp/x/app.plist"), errno: .noSpace),
            .domainUnreadable(path: "/tmp/x/app.plist", reason: "not a property list"),
            .incorrectKeys(invalidElements: ["unknown"]),
        ]
        for error in errors {
            #expect(error.localizedDescription == error.description)
            #expect((error as any Error).localizedDescription == error.description)
        }
        #expect(errors[0].localizedDescription.contains("/tmp/x/app.plist"))
    }

    @Test("An errno's and a codec error's localizedDescription are their messages")
    func errnoAndCodecLocalizedDescription() throws {
        #expect(PrefsErrno.noSpace.localizedDescription == String(cString: strerror(ENOSPC)))
        let failure = #expect(throws: PropertyListCodingError.self) {
            try PropertyListValue(propertyListData: Data("not a property list".utf8))
        }
        let reason = try #require(failure).reason
        #expect(!reason.isEmpty && failure?.localizedDescription == reason)
    }
}
