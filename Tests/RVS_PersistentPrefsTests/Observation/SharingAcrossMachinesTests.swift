import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// What can be simulated on one machine of the article "Sharing Across Machines": watching by polling
/// alone (what another machine's writes on NFS leave), and a file put in place by a sync engine with the
/// modification time it had on the machine that wrote it.
@Suite("Sharing across machines: what can be simulated on one")
struct SharingAcrossMachinesTests {
    let directory = TemporaryDirectory()

    private var domainPath: String { directory.appending("prefs/shared.plist") }

    private func suite() throws -> DefaultsSuite { try directory.fileSuite("shared", in: "prefs") }

    /// The domain file another machine would make, holding `count` under the storage key "settings".
    private func domainFile(count: Int) -> [UInt8] {
        BinaryPropertyList.encode(.dictionary(["settings": .dictionary(["count": .integer(count)])]))
    }

    /// Sets the file's modification time, as a sync engine does to match the machine that wrote it.
    private func setModificationTime(_ path: String, _ time: timespec) {
        var times = [time, time]  // access and modification
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    private func modificationTime(_ path: String) -> timespec {
        var info = Glibc.stat()
        #expect(stat(path, &info) == 0)
        return info.st_mtim
    }

    @Test("A sync engine's replacement with an older modification time is read, and heard by a polling-only watcher")
    func replacementWithOlderModificationTime() throws {
        let prefs = WatchedPrefs(suite: try suite())
        prefs.counter = 1
        // As on NFS for another machine's writes: no events, polling only.
        (prefs.userDefaults!.persistentDomain as! FileDomainStorage).watchSettings = (.inotifyUnavailable, .milliseconds(5))
        let log = CountLog()
        prefs.watchesExternalChanges = true
        let token = prefs.observe(\.counter, options: [.old, .new]) { _, change in
            log.append(old: change.oldValue, new: change.newValue)
        }
        // The engine writes a temporary file, dates it an hour back, and renames it over the domain file.
        let temporary = directory.appending("prefs/.syncthing.shared.plist.tmp")
        try Data(domainFile(count: 2)).write(to: URL(fileURLWithPath: temporary))
        var older = modificationTime(domainPath)
        older.tv_sec -= 3600
        setModificationTime(temporary, older)
        #expect(rename(temporary, domainPath) == 0)
        #expect(log.waitForNew(2))
        #expect(log.all.last?.old == 1)
        #expect(prefs.counter == 2)
        token.invalidate()
    }

    @Test("A rewrite in place of the same size, with the old modification time put back, is still read fresh and heard")
    func inPlaceRewriteWithTheSameModificationTime() throws {
        let prefs = WatchedPrefs(suite: try suite())
        prefs.counter = 1
        #expect(prefs.counter == 1)  // cached now
        (prefs.userDefaults!.persistentDomain as! FileDomainStorage).watchSettings = (.inotifyUnavailable, .milliseconds(5))
        let log = CountLog()
        prefs.watchesExternalChanges = true
        let token = prefs.observe(\.counter, options: [.new]) { _, change in log.append(old: nil, new: change.newValue) }
        let original = modificationTime(domainPath)
        let bytes = domainFile(count: 2)
        #expect(bytes.count == fileBytes(domainPath)?.count)
        let fd = open(domainPath, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        close(fd)
        setModificationTime(domainPath, original)
        // Same inode, same size, same modification time: only the change time tells.
        #expect(prefs.counter == 2)
        #expect(log.waitForNew(2))
        token.invalidate()
    }
}
