import Foundation
import Glibc
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// A suite keeps what a read found while nothing it came from can have changed (SPEC §2.4 still holds):
/// these prove that what is kept is never stale, whoever changed what, and that an unchanged read asks
/// the file nothing.
@Suite("Reads a suite keeps: fresh after every change, and no stat or open while unchanged")
struct KeptReadTests {
    /// The fixture's suite, its writable domain recording the system calls it makes.
    private static func suite(_ fixture: AdministrationFixture, administered: Bool, faults: FaultInjection) throws -> DefaultsSuite {
        mkdir(fixture.directory.appending("home"), 0o700)
        mkdir(fixture.directory.appending("home/.config"), 0o700)
        mkdir(fixture.preferences, 0o700)
        let domain = try FileDomainStorage(directory: fixture.preferences, name: fixture.domainName, durable: false,
                                           system: SystemCalls(faults: faults))
        let locations = fixture.locations
        return DefaultsSuite(persistentDomain: domain, globalDomain: nil,
                             systemDomains: administered ? locations.systemDomains(named: fixture.domainName) : [],
                             managedDomains: administered ? locations.managedDomains(named: fixture.domainName) : [],
                             argumentDomain: [:])
    }

    private static func collection(_ suite: DefaultsSuite, _ key: String) throws -> [String: PropertyListValue]? {
        var problems: [PrefsError] = []
        let found = try suite.find(key, collection: true, problems: &problems)
        #expect(problems.isEmpty, "\(problems)")
        return found?.value.dictionaryValue
    }

    @Test("Another process's 300 writes are each read at once, and the reads of the unchanged file between them make no stat or open",
          arguments: [false, true])
    func writesElsewhereAreReadAtOnce(administered: Bool) async throws {
        try await onOwnThread {
            let fixture = AdministrationFixture()
            if administered {
                fixture.install(["volume": .integer(3)], at: fixture.xdgFile)
                fixture.install(["flag": .bool(true)], at: fixture.managedFile)
            }
            let faults = FaultInjection()
            let suite = try Self.suite(fixture, administered: administered, faults: faults)
            let writer = try ChildProcess.worker("serve", fixture.preferences, fixture.domainName, fixture.storageKey)
            var stale = 0
            var callingReads = 0
            var everyPathWoken = 0
            var firstCalls = ""
            // A suite's first two reads start no watch, and validate by the files (issue 27: a process reading once
            // pays for no watch): the reads counted below come after them.
            for _ in 0..<2 { _ = try Self.collection(suite, fixture.storageKey) }
            for round in 0..<300 {
                let value = 1_000_000 + round % 2
                writer.send("\(value)")
                #expect(writer.readLine() == "done \(value)")
                var expected: [String: PropertyListValue] = ["value": .integer(value)]
                if administered { expected.merge(["volume": .integer(3), "flag": .bool(true)]) { old, _ in old } }
                // A change of the mount table (tests beside this one make and remove bind mounts) or an overflow of
                // the queue wakes every path, and the next read of each looks at its file again: such a round is
                // still checked for staleness, but its reads may call.
                let wokenBefore = WatchEngine.shared.everyPathWoken
                if try Self.collection(suite, fixture.storageKey) != expected { stale += 1 }
                faults.clearRecordedCalls()
                for _ in 0..<3 where try Self.collection(suite, fixture.storageKey) != expected { stale += 1 }
                if !faults.recordedCalls.isEmpty {
                    if WatchEngine.shared.everyPathWoken == wokenBefore {
                        callingReads += 1
                        if firstCalls.isEmpty { firstCalls = "round \(round): \(faults.recordedCalls)" }
                    } else {
                        everyPathWoken += 1
                    }
                }
            }
            writer.closeInput()
            #expect(writer.wait() == 0)
            #expect(stale == 0)
            // Where the process's watch vouches for the file, as on this machine's local disk.
            let rounds = "rounds whose unchanged reads called stat or open: \(callingReads) of 300"
            let woken = "and \(everyPathWoken) more in which the engine woke every path"
            #expect(callingReads == 0, "\(rounds) (\(woken)); the first: \(firstCalls)")
            #expect(everyPathWoken < 300, "every round woke every path: the watch never vouched")
        }
    }

    @Test("A mode change of a directory on the managed file's path after a kept read is read at once: the file is ignored while others may write there, and honoured again after",
          arguments: [0, 1])
    func directoryModeChangesAreReadAtOnce(levelsUp: Int) throws {
        let fixture = AdministrationFixture()
        let suite = try Self.suite(fixture, administered: true, faults: FaultInjection())
        fixture.install(["flag": .bool(true)], at: fixture.managedFile)
        // Enough reads that the suite keeps what it found, the watch vouching.
        for _ in 0..<4 { #expect(try Self.collection(suite, fixture.storageKey) == ["flag": .bool(true)]) }
        var directory = (fixture.managedFile as NSString).deletingLastPathComponent
        for _ in 0..<levelsUp { directory = (directory as NSString).deletingLastPathComponent }
        var info = stat()
        #expect(stat(directory, &info) == 0)
        let mode = info.st_mode & 0o7777
        #expect(chmod(directory, mode | 0o022) == 0)
        defer { chmod(directory, mode) }
        var problems: [PrefsError] = []
        let found = try suite.find(fixture.storageKey, collection: true, problems: &problems)
        #expect(found?.value.dictionaryValue == nil, "a forced entry was honoured after \(directory) became writable by others")
        #expect(problems.contains { if case .administratorFileIgnored = $0 { true } else { false } }, "\(problems)")
        #expect(chmod(directory, mode) == 0)
        #expect(try Self.collection(suite, fixture.storageKey) == ["flag": .bool(true)])
    }

    @Test("A registration, an administrator's new system default and forced entry, and a write of this process are each read at once")
    func changesHereAndByTheAdministratorAreReadAtOnce() throws {
        let fixture = AdministrationFixture()
        let suite = try Self.suite(fixture, administered: true, faults: FaultInjection())
        #expect(try Self.collection(suite, fixture.storageKey) == nil)
        #expect(try Self.collection(suite, fixture.storageKey) == nil)
        suite.register(propertyListDefaults: [fixture.storageKey: .dictionary(["value": .integer(1)])])
        #expect(try Self.collection(suite, fixture.storageKey) == ["value": .integer(1)])
        try suite.setValue(.dictionary(["value": .integer(2)]), forKey: fixture.storageKey)
        #expect(try Self.collection(suite, fixture.storageKey) == ["value": .integer(2)])
        // The administrator's tools replace files by rename; each is read by the next read, not later.
        fixture.install(["volume": .integer(3)], at: fixture.xdgFile)
        #expect(try Self.collection(suite, fixture.storageKey) == ["value": .integer(2), "volume": .integer(3)])
        fixture.install(["value": .integer(9)], at: fixture.managedFile)
        #expect(try Self.collection(suite, fixture.storageKey) == ["value": .integer(9), "volume": .integer(3)])
        #expect(unlink(fixture.managedFile) == 0)
        #expect(try Self.collection(suite, fixture.storageKey) == ["value": .integer(2), "volume": .integer(3)])
    }
}
