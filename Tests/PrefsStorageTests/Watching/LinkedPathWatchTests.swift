import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

/// Writes a watch of the domain's directory cannot hear by itself (issue 19, items 2 and 3): through a hard
/// link in another directory, and behind symbolic links. Each round, another process (TestWorker
/// `serve-links`) changes the domain; the next read must see it, and the watcher must be told.
@Suite("Watching through hard links and symbolic links")
struct LinkedPathWatchTests {
    let directory = TemporaryDirectory()
    static let rounds = 20
    /// How long one round waits for its notification before counting it missed: generous, so that only a
    /// watcher that is never told fails; nothing is asserted about how long a notification takes.
    static let patience: TimeInterval = 20

    private func value(_ domain: FileDomainStorage) throws -> PropertyListValue? {
        try domain.snapshot().contents["settings"]?.dictionaryValue?["value"]
    }

    /// Runs the rounds: each sends `command(round)` to the worker, waits for its "done", then reads and
    /// waits for a call of the watch handler. Returns the stale reads and the missed notifications.
    private func rounds(reading domain: FileDomainStorage, calls: CallCounter, worker: ChildProcess,
                        _ command: (Int) -> String) throws -> (stale: Int, missed: Int) {
        var stale = 0, missed = 0
        for round in 1...Self.rounds {
            _ = try value(domain)  // the read that caches what the change must not hide
            let before = calls.count
            worker.send(command(round))
            let reply = worker.readLine()
            guard reply == "done \(round)" else {
                Issue.record("worker replied \(String(describing: reply)): \(worker.readErrors())")
                break
            }
            if try value(domain) != .integer(round) { stale += 1 }
            if !calls.wait(forAtLeast: before + 1, timeout: Self.patience) { missed += 1 }
        }
        worker.closeInput()
        #expect(worker.wait() == 0)
        return (stale, missed)
    }

    @Test("A write in place through a hard link made after the read, in another directory, is read at once and told to the watcher")
    func writesThroughAHardLinkAreSeen() throws {
        let prefs = directory.appending("prefs"), other = directory.appending("other")
        #expect(mkdir(other, 0o700) == 0)
        let domain = try FileDomainStorage(directory: prefs, name: "linked")
        try domain.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["value": .integer(0)]) }
        let calls = CallCounter()
        let watch = domain.watch { calls.fire() }
        defer { watch.cancel() }
        let worker = try ChildProcess.worker("serve-links", prefs, "linked", "settings")
        let (stale, missed) = try rounds(reading: domain, calls: calls, worker: worker) { "hardlink \($0) \(other)/link.plist" }
        #expect(stale == 0, "\(stale) of \(Self.rounds) reads were stale")
        #expect(missed == 0, "\(missed) of \(Self.rounds) changes were never told")
    }

    @Test("A directory on the watched path that is a symbolic link, retargeted to a new directory, is still watched")
    func retargetedDirectoryLinksAreWatched() throws {
        let link = directory.appending("current")
        let first = directory.appending("real-0")
        let domainAtFirst = try FileDomainStorage(directory: first, name: "linked")
        try domainAtFirst.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["value": .integer(0)]) }
        #expect(symlink(first, link) == 0)
        let domain = try FileDomainStorage(directory: link, name: "linked")
        let calls = CallCounter()
        let watch = FileWatch(directory: link, fileName: "linked.plist", fallback: .none, pollingInterval: .milliseconds(20)) {
            calls.fire()
        }
        defer { watch.cancel() }
        let worker = try ChildProcess.worker("serve-links", link, "linked", "settings")
        let (stale, missed) = try rounds(reading: domain, calls: calls, worker: worker) {
            "retarget \($0) \(link) \(directory.appending("real-\($0)"))"
        }
        #expect(stale == 0, "\(stale) of \(Self.rounds) reads were stale")
        #expect(missed == 0, "\(missed) of \(Self.rounds) changes were never told")
    }

    @Test("A domain file that is a symbolic link, whose target is replaced by rename in another directory, is still watched")
    func replacedLinkTargetsAreWatched() throws {
        let prefs = directory.appending("prefs"), targets = directory.appending("targets")
        let target = try FileDomainStorage(directory: targets, name: "linked")
        try target.modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["value": .integer(0)]) }
        #expect(mkdir(prefs, 0o700) == 0)
        #expect(symlink(target.path, prefs + "/linked.plist") == 0)
        let domain = try FileDomainStorage(directory: prefs, name: "linked")
        let calls = CallCounter()
        let watch = FileWatch(directory: prefs, fileName: "linked.plist", fallback: .none, pollingInterval: .milliseconds(20)) {
            calls.fire()
        }
        defer { watch.cancel() }
        let worker = try ChildProcess.worker("serve-links", prefs, "linked", "settings")
        let (stale, missed) = try rounds(reading: domain, calls: calls, worker: worker) { "replace-target \($0) \(targets)" }
        #expect(stale == 0, "\(stale) of \(Self.rounds) reads were stale")
        #expect(missed == 0, "\(missed) of \(Self.rounds) changes were never told")
    }
}
