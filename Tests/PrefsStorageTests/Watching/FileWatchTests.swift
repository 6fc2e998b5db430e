import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

@Suite("Watching a domain file for changes made by anyone")
struct FileWatchTests {
    let directory = TemporaryDirectory()

    private func write(_ domain: FileDomainStorage, _ value: Int, key: String = "settings") throws {
        try domain.modify(repairing: .failIfUnreadable) { $0[key] = .dictionary(["value": .integer(value)]) }
    }

    @Test("A domain file replaced by rename wakes its watcher, which then reads the new value")
    func renameOverIsSeen() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "watched")
        try write(domain, 1)
        let calls = CallCounter()
        let watch = domain.watch { calls.fire() }
        #expect(watch.mode.events && !watch.mode.polls)
        try write(domain, 2)
        #expect(calls.wait(forAtLeast: 1))
        #expect(try domain.snapshot().contents["settings"] == .dictionary(["value": .integer(2)]))
        watch.cancel()
    }

    @Test("A domain whose directory and name begin with a combining mark is created, named and watched as written")
    func combiningMarksAfterSlashes() throws {
        // "/\u{301}" is one Character: code splitting paths by Character would miss these slashes.
        let domainDirectory = directory.path + "/\u{301}d/sub"
        let domain = try FileDomainStorage(directory: domainDirectory, name: "\u{301}x")
        let calls = CallCounter()
        // Watched before the directory exists, so the watch must find the missing level by name.
        let watch = domain.watch { calls.fire() }
        #expect(watch.mode.events)
        try write(try FileDomainStorage(directory: domainDirectory, name: "\u{301}x"), 1)
        #expect(calls.wait(forAtLeast: 1))
        #expect(FileManager.default.fileExists(atPath: domainDirectory + "/\u{301}x.plist"))
        #expect(DefaultsSuite(persistentDomain: domain, arguments: []).persistentDomainName == "\u{301}x")
        let before = calls.count
        try write(try FileDomainStorage(directory: domainDirectory, name: "\u{301}x"), 2)
        #expect(calls.wait(forAtLeast: before + 1))
        #expect(try domain.snapshot().contents["settings"] == .dictionary(["value": .integer(2)]))
        watch.cancel()
    }

    @Test("Changes to other files of the same directory (another domain, the lock file) wake nobody")
    func otherFilesAreIgnored() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "watched")
        let other = try FileDomainStorage(directory: directory.path, name: "other")
        try write(domain, 1)
        // A change of the mount table tells every watcher once (a bind mount unmounted sends no event of its
        // own, so the watch cannot know which paths it moved). Tests running beside this one make and remove
        // bind mounts: only a run during which the mount table stood still must wake nobody.
        // (Counted by the engine, with the overflows of its queue, which wake everyone too: a mount made and
        // removed between two reads of /proc/self/mountinfo leaves it as it was, yet woke every watcher.)
        let wokenBefore = WatchEngine.shared.everyPathWoken
        let calls = CallCounter()
        let watch = domain.watch { calls.fire() }
        // A later watch is called after an earlier one for events drained together, so once the
        // sentinel has been told of the other domain's write, the first watch has had its chance.
        let sentinelCalls = CallCounter()
        let sentinel = other.watch { sentinelCalls.fire() }
        try write(other, 7)
        #expect(sentinelCalls.wait(forAtLeast: 1))
        // Nor must it where the watch polls (inotify instances are counted per user: other test runs of the same
        // user can take them all), since a file written within the last moments is told at every poll.
        let wokeNobodyElse = WatchEngine.shared.everyPathWoken == wokenBefore && !watch.mode.polls
        #expect(calls.count == 0 || !wokeNobodyElse, "\(calls.count) calls, watch mode \(watch.mode)")
        watch.cancel()
        sentinel.cancel()
    }

    @Test("A watch started before its directory exists sees the domain appear once each level is created")
    func lateDirectoryCreationIsSeen() throws {
        let deep = directory.appending("a/b/c")
        let calls = CallCounter()
        let watch = FileWatch(directory: deep, fileName: "late.plist") { calls.fire() }
        #expect(watch.mode.events)
        let domain = try FileDomainStorage(directory: deep, name: "late")
        try write(domain, 42)
        #expect(calls.wait(forAtLeast: 1))
        // Now the directory itself is watched: a further write is seen too.
        let seen = calls.count
        try write(domain, 43)
        #expect(calls.wait(forAtLeast: seen + 1))
        #expect(try domain.snapshot().contents["settings"] == .dictionary(["value": .integer(43)]))
        watch.cancel()
    }

    @Test("Levels made in quick succession while the watch moves down are never missed: 50 rounds")
    func quicklyMadeLevelsAreNeverMissed() throws {
        for round in 0..<50 {
            let deep = directory.appending("round\(round)/a/b/c/d")
            let calls = CallCounter()
            let watch = FileWatch(directory: deep, fileName: "late.plist") { calls.fire() }
            try write(try FileDomainStorage(directory: deep, name: "late"), round)
            #expect(calls.wait(forAtLeast: 1), "round \(round)")
            watch.cancel()
        }
    }

    @Test("A directory removed and made again is watched again")
    func recreatedDirectoryIsWatchedAgain() throws {
        let place = directory.appending("group")
        let domain = try FileDomainStorage(directory: place, name: "again")
        try write(domain, 1)
        let calls = CallCounter()
        let watch = domain.watch { calls.fire() }
        try FileManager.default.removeItem(atPath: place)
        #expect(calls.wait(forAtLeast: 1))
        let afterRemoval = calls.count
        try write(domain, 2)
        #expect(calls.wait(forAtLeast: afterRemoval + 1))
        let afterRecreation = calls.count
        try write(domain, 3)
        #expect(calls.wait(forAtLeast: afterRecreation + 1))
        watch.cancel()
    }

    @Test("With inotify unavailable (forced), polling with stat() still sees each write",
          arguments: [DomainWatching.Fallback.inotifyUnavailable, .watchLimitReached])
    func forcedPollingSeesWrites(fallback: DomainWatching.Fallback) throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "polled")
        let calls = CallCounter()
        let watch = FileWatch(directory: directory.path, fileName: "polled.plist", fallback: fallback,
                              pollingInterval: .milliseconds(5)) { calls.fire() }
        #expect(watch.mode.polls && !watch.mode.events)
        for value in 1...3 {
            let before = calls.count
            try write(domain, value)
            #expect(calls.wait(forAtLeast: before + 1))
        }
        watch.cancel()
    }

    @Test("On a file system where events are incomplete (forced), the watch takes events and polls too")
    func incompleteEventsAlsoPoll() throws {
        let domain = try FileDomainStorage(directory: directory.path, name: "nfs")
        let calls = CallCounter()
        let watch = FileWatch(directory: directory.path, fileName: "nfs.plist", fallback: .eventsIncomplete,
                              pollingInterval: .milliseconds(5)) { calls.fire() }
        #expect(watch.mode.polls && watch.mode.events)
        try write(domain, 1)
        #expect(calls.wait(forAtLeast: 1))
        watch.cancel()
    }

    @Test("The file systems inotify fully covers are told apart from network and user-space ones")
    func fileSystemKinds() throws {
        #expect(FileSystemKind(type: 0xEF53).eventsAreComplete)         // ext4
        #expect(FileSystemKind(type: 0x0102_1994).eventsAreComplete)    // tmpfs
        #expect(!FileSystemKind(type: 0x6969).eventsAreComplete)        // NFS
        #expect(!FileSystemKind(type: 0x6573_5546).eventsAreComplete)   // FUSE
        #expect(!FileSystemKind(type: 0xFF53_4D42).eventsAreComplete)   // CIFS
        #expect(!FileSystemKind(type: 0x1234_5678).eventsAreComplete)   // unknown
        #expect(try SystemCalls.live.fileSystemType(directory.path) != 0)
    }

    // 200 cycles here; Scripts/soak.sh runs 10,000 (SOAK_WATCH_CYCLES), which took 67 s of the suite.
    @Test("200 watch start/stop cycles leave the process's descriptor and thread counts where they began")
    func startStopCyclesLeakNothing() async throws {
        try await onOwnThread {
            // In a process of its own: tests running in parallel here open descriptors and threads.
            let worker = try ChildProcess.worker("watch-cycles", directory.path, "cycles", "settings", "200")
            let line = try #require(worker.readLine(), "worker failed: \(worker.readErrors())")
            #expect(worker.wait() == 0)
            let figures = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, Int)? in
                let parts = field.split(separator: "=")
                return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? -1) : nil
            })
            #expect(figures["fds_before"] == figures["fds_after"], "\(line)")
            #expect(figures["threads_before"] == figures["threads_after"], "\(line)")
            // While watching, one thread and four descriptors more: inotify, the wake-up, and the mount table twice
            // (the thread's and the reads', since each descriptor reports a change once).
            #expect(figures["threads_during"] == (figures["threads_before"] ?? 0) + 1, "\(line)")
            #expect(figures["fds_during"] == (figures["fds_before"] ?? 0) + 4, "\(line)")
            #expect(figures["cycles"] == 200)
        }
    }
}
