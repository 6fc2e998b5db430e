import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// A watch follows a directory's inode, not its path: reads it validates must not be stale once a
/// directory on the path was moved away and the path made again.
@Suite("Watched reads after a directory on the path was moved")
struct WatchedPathMovedTests {
    let directory = TemporaryDirectory()

    private func write(_ domain: FileDomainStorage, _ value: Int) throws {
        try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .integer(value) }
    }

    @Test("a directory still watched only as another's ancestor vouches for no read once its parent moved")
    func ancestorOnlyWatchLosesItsProof() throws {
        let upper = directory.path + "/p/a", lower = upper + "/b"
        let domain = try FileDomainStorage(directory: upper, name: "up")
        try write(domain, 1)
        let below = FileWatch(directory: lower, fileName: "x.plist") {}
        // Watched for its entries, then kept only as the lower watch's ancestor.
        let own = domain.watch {}
        #expect(try domain.snapshot().contents["settings"] == .integer(1))
        #expect(try domain.snapshot().contents["settings"] == .integer(1))
        own.cancel()
        #expect(try domain.snapshot().contents["settings"] == .integer(1))
        #expect(rename(directory.path + "/p", directory.path + "/p-old") == 0)
        try write(try FileDomainStorage(directory: upper, name: "up"), 2)
        #expect(try domain.snapshot().contents["settings"] == .integer(2), "stale read after the parent moved")
        below.cancel()
    }
}
