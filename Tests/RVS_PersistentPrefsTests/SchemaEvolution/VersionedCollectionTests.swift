import Foundation
import Synchronization
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

// SPEC §9, versioned collections: schemaVersion and migrate(_:from:), the version kept beside the
// collection, the migration run once under the domain's lock, and a newer collection never written over.

/// Version 0 of an app: no versioning at all.
final class VersionZeroSettings: RVS_PersistentPrefs {
    override var keys: [String] { ["vol", "theme", "volume", "migrations"] }
}

/// Version 2: `vol` (a percentage) became `volume` (a fraction); counts its migrations in the collection.
final class VersionTwoSettings: RVS_PersistentPrefs {
    nonisolated(unsafe) static var migrationsRun: [Int] = []
    override class var schemaVersion: Int { 2 }
    override var keys: [String] { ["volume", "theme", "migrations"] }

    override func migrate(_ values: inout [String: Any], from version: Int) {
        Self.migrationsRun.append(version)
        if let percent = values.removeValue(forKey: "vol") as? Int { values["volume"] = Double(percent) / 100 }
        values["migrations"] = (values["migrations"] as? Int ?? 0) + 1
    }
}

/// Version 1 of the same app: older than 2, newer than 0.
final class VersionOneSettings: RVS_PersistentPrefs {
    override class var schemaVersion: Int { 1 }
    override var keys: [String] { ["vol", "theme", "volume", "migrations"] }
}

/// A migration that produces a value no property list holds.
final class BrokenMigrationSettings: RVS_PersistentPrefs {
    override class var schemaVersion: Int { 1 }
    override var keys: [String] { ["theme"] }
    override func migrate(_ values: inout [String: Any], from version: Int) { values["theme"] = NSNull() }
}

/// A migration that adds a name the class does not allow, or makes a value its entry's constraint refuses.
final class CarelessMigrationSettings: RVS_PersistentPrefs {
    nonisolated(unsafe) static var addsJunk = true
    override class var schemaVersion: Int { 1 }
    @Entry("port", range: 1...100) var port = 80
    override func migrate(_ values: inout [String: Any], from version: Int) {
        values["port"] = values.removeValue(forKey: "oldPort")
        if Self.addsJunk { values["junk"] = 1 }
    }
}

@Suite("Versioned collections (SPEC §9)", .serialized)
struct VersionedCollectionTests {
    let directory = TemporaryDirectory()

    func domain() throws -> FileDomainStorage { try FileDomainStorage(directory: directory.path, name: "app") }
    func suite() throws -> DefaultsSuite { DefaultsSuite(persistentDomain: try domain(), arguments: []) }

    func storedDomain() throws -> [String: PropertyListValue] { try domain().snapshot().contents }

    @Test("An old collection is migrated at the first operation; the version is kept beside it, never among its entries")
    func migratesOnceAndKeepsTheVersionBeside() throws {
        VersionTwoSettings.migrationsRun = []
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["vol": .integer(40), "theme": .string("dark")]) }
        let settings = VersionTwoSettings(key: "settings", suite: try suite())
        #expect(settings.lastError == nil)
        #expect(VersionTwoSettings.migrationsRun == [0])
        #expect(settings.values.keys.sorted() == ["migrations", "theme", "volume"])
        #expect(settings["volume"] as? Double == 0.4)
        let stored = try storedDomain()
        #expect(stored["settings.schemaVersion"] == .integer(2))
        #expect(stored["settings"]?.dictionaryValue?["schemaVersion"] == nil)
        // Another instance, and later operations, find it current.
        let again = VersionTwoSettings(key: "settings", suite: try suite())
        again["theme"] = "light"
        #expect(VersionTwoSettings.migrationsRun == [0])
        #expect(try storedDomain()["settings"]?.dictionaryValue?["migrations"] == .integer(1))
    }

    @Test("A read of a missing collection creates nothing; the first write stamps the version with it")
    func freshCollectionIsStampedByItsFirstWrite() throws {
        VersionTwoSettings.migrationsRun = []
        let settings = VersionTwoSettings(key: "settings", suite: try suite())
        #expect(settings.values.isEmpty)
        #expect(directory.contents().isEmpty, "a read created files")
        settings["theme"] = "dark"
        let stored = try storedDomain()
        #expect(stored["settings.schemaVersion"] == .integer(2))
        #expect(stored["settings"] == .dictionary(["theme": .string("dark")]))
        #expect(VersionTwoSettings.migrationsRun.isEmpty)  // nothing was stored: nothing to migrate
        let later = VersionTwoSettings(key: "settings", suite: try suite())
        #expect(later["migrations"] == nil)
    }

    @Test("An older app's writes through its instance's UserDefaults face to a collection stored by a newer version are refused, changing nothing: set, removeObject, setPersistentDomain, removePersistentDomain")
    func newerCollectionIsNeverWrittenOverThroughTheFace() throws {
        VersionTwoSettings.migrationsRun = []
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["vol": .integer(40)]) }
        _ = VersionTwoSettings(key: "settings", suite: try suite())
        let before = fileBytes(try domain().path)
        for (version, old) in [(1, VersionOneSettings(key: "settings", suite: try suite()) as RVS_PersistentPrefs),
                               (0, VersionZeroSettings(key: "settings", suite: try suite()))] {
            let face = try #require(old.userDefaults)
            let writes: [(String, () -> Void)] = [
                ("set(_:forKey:)", { face.set(["theme": "light"], forKey: old.key) }),
                ("set(nil, forKey:)", { face.set(nil, forKey: old.key) }),
                ("removeObject(forKey:)", { face.removeObject(forKey: old.key) }),
                ("setPersistentDomain", { face.setPersistentDomain(["settings": ["theme": "light"]], forName: "app") }),
                ("removePersistentDomain", { face.removePersistentDomain(forName: "app") }),
                // The stamp too: without it, the older class would migrate the newer collection again.
                ("removeObject(forKey: stamp)", { face.removeObject(forKey: "settings.schemaVersion") }),
                ("set(_:forKey: stamp)", { face.set(version, forKey: "settings.schemaVersion") }),
            ]
            for (name, write) in writes {
                write()
                guard case .collectionFromNewerVersion(let stored, let supported)? = face.lastError else {
                    Issue.record("version \(version), \(name): expected collectionFromNewerVersion, got \(String(describing: face.lastError))")
                    continue
                }
                #expect((stored, supported) == (2, version), "\(name)")
                #expect(fileBytes(try domain().path) == before, "version \(version), \(name) changed the file")
            }
        }
        // Another collection of the same domain is still the older app's to write.
        let face = try #require(VersionZeroSettings(key: "settings", suite: try suite()).userDefaults)
        face.set(3, forKey: "unrelated")
        #expect(face.lastError == nil)
        #expect(try storedDomain()["settings"] == .dictionary(["volume": .real(0.4), "migrations": .integer(1)]))
    }

    @Test("A collection stored by a newer version is read as it is and every write to it is refused, changing nothing")
    func newerCollectionIsNeverWrittenOver() throws {
        VersionTwoSettings.migrationsRun = []
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["vol": .integer(40)]) }
        _ = VersionTwoSettings(key: "settings", suite: try suite())
        let before = fileBytes(try domain().path)
        let old = VersionOneSettings(key: "settings", suite: try suite())
        #expect(old.lastError == nil)
        #expect(old["volume"] as? Double == 0.4)
        old["theme"] = "light"
        guard case .collectionFromNewerVersion(let stored, let supported)? = old.lastError else {
            Issue.record("expected collectionFromNewerVersion, got \(String(describing: old.lastError))")
            return
        }
        #expect((stored, supported) == (2, 1))
        old.values = ["theme": "light"]
        #expect(old.lastError != nil)
        old.clear()
        #expect(old.lastError != nil)
        let unversioned = VersionZeroSettings(key: "settings", suite: try suite())
        unversioned["theme"] = "light"
        #expect(unversioned.lastError != nil)
        #expect(fileBytes(try domain().path) == before)
    }

    @Test("Repairing an unreadable domain file stamps the version, so the collection written is not migrated again")
    func repairStampsTheVersion() throws {
        VersionTwoSettings.migrationsRun = []
        let path = try domain().path
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        writeFile(path, Array("not a property list".utf8))
        let settings = VersionTwoSettings(key: "settings", suite: try suite())
        settings.values = ["theme": "dark"]
        #expect(settings.lastError == nil)
        #expect(try storedDomain()["settings.schemaVersion"] == .integer(2))
        _ = VersionTwoSettings(key: "settings", suite: try suite())
        #expect(VersionTwoSettings.migrationsRun.isEmpty)
    }

    @Test("A migration whose result is not a property list fails the operation and writes nothing")
    func brokenMigrationWritesNothing() throws {
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["theme": .string("dark")]) }
        let before = fileBytes(try domain().path)
        let settings = BrokenMigrationSettings(key: "settings", suite: try suite())
        guard case .valuesNotPlistCompatible(["theme"])? = settings.lastError else {
            Issue.record("expected valuesNotPlistCompatible, got \(String(describing: settings.lastError))")
            return
        }
        #expect(fileBytes(try domain().path) == before)
    }

    @Test("A migration that adds a name the class does not allow, or makes a value its entry's constraint refuses, is refused as a write is, and nothing is stored; a stray name stored before it is left to the app")
    func migrationIsValidatedAsAWrite() throws {
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["oldPort": .integer(5000)]) }
        let before = fileBytes(try domain().path)
        CarelessMigrationSettings.addsJunk = true
        let adding = CarelessMigrationSettings(key: "settings", suite: try suite())
        guard case .incorrectKeys(["junk"])? = adding.lastError else {
            Issue.record("expected incorrectKeys([junk]), got \(String(describing: adding.lastError))")
            return
        }
        #expect(fileBytes(try domain().path) == before)
        CarelessMigrationSettings.addsJunk = false
        let refused = CarelessMigrationSettings(key: "settings", suite: try suite())
        guard case .valueNotAllowed(let entry, _)? = refused.lastError else {
            Issue.record("expected valueNotAllowed, got \(String(describing: refused.lastError))")
            return
        }
        #expect(entry == "port")
        #expect(fileBytes(try domain().path) == before)
        // A name stored before the migration, which it leaves as it is, does not stop it: the app removes it.
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["oldPort": .integer(50), "stray": .integer(1)]) }
        let migrated = CarelessMigrationSettings(key: "settings", suite: try suite())
        #expect(migrated.lastError == nil, "\(String(describing: migrated.lastError))")
        #expect(migrated.port == 50)
        migrated["stray"] = nil
        #expect(migrated.lastError == nil, "\(String(describing: migrated.lastError))")
        #expect(try storedDomain()["settings"] == .dictionary(["port": .integer(50)]))
    }

    @Test("4 processes starting at once on an old collection: the migration runs exactly once")
    func migrationRunsOnceAcrossProcesses() throws {
        try domain().modify(repairing: .failIfUnreadable) { $0["settings"] = .dictionary(["vol": .integer(40), "theme": .string("dark")]) }
        let workers = try (0..<4).map { _ in try ChildProcess.worker("migrate", directory.path, "app", "settings") }
        for worker in workers { #expect(worker.readLine() == "ready", "worker failed: \(worker.readErrors())") }
        // This process holds the domain's lock while every worker reads the old version and then waits for
        // the lock, so that all four are inside the race at once, whatever the scheduler does.
        let holder = LockHolder(try domain())
        for worker in workers { worker.send("go") }
        let waiting = Self.waitForBlockedLockWaiters(Set(workers.map(\.processIdentifier)))
        holder.release()
        #expect(waiting, "the workers did not all wait for the domain's lock")
        var outcomes: [String] = []
        for worker in workers {
            outcomes.append(worker.readLine() ?? "none: \(worker.readErrors())")
            #expect(worker.readLine() == "volume=0.4 migrations=1")
            #expect(worker.wait() == 0)
        }
        #expect(outcomes.sorted() == ["current", "current", "current", "migrated"])
        let stored = try storedDomain()
        #expect(stored["settings"] == .dictionary(["volume": .real(0.4), "theme": .string("dark"), "migrations": .integer(1)]))
        #expect(stored["settings.schemaVersion"] == .integer(2))
    }

    /// Waits until each of `processes` waits for an advisory lock (a line `-> FLOCK` of /proc/locks);
    /// `false` if that did not happen within a minute.
    static func waitForBlockedLockWaiters(_ processes: Set<Int32>) -> Bool {
        for _ in 0..<60_000 {
            let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
            let blocked = Set(locks.split(separator: "\n").compactMap { line -> Int32? in
                let fields = line.split(separator: " ")
                guard fields.count > 5, fields[1] == "->", fields[2] == "FLOCK" else { return nil }
                return Int32(fields[5])
            })
            if processes.isSubset(of: blocked) { return true }
            usleep(1_000)
        }
        return false
    }
}

/// Holds a domain's lock, from a thread of its own, until released.
private final class LockHolder: Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    init(_ domain: FileDomainStorage) {
        let (locked, released) = (locked, released)
        Thread.detachNewThread {
            _ = try? domain.modify(repairing: .failIfUnreadable) { _ in
                locked.signal()
                released.wait()
            }
        }
        locked.wait()
    }

    func release() { released.signal() }
}

/// A domain in which another process "migrates" the collection to a newer version at the worst instant:
/// after a write's checks, just before its locked update runs.
private final class MigratedMeanwhileDomain: DomainStorage {
    let inner = InMemoryDomainStorage()
    let pending = Mutex<[String: PropertyListValue]?>(nil)
    var location: String { "migrated meanwhile" }

    func snapshot() throws(PrefsError) -> DomainSnapshot { try inner.snapshot() }

    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        if let meanwhile = pending.withLock({ current in defer { current = nil }; return current }) {
            try inner.modify(repairing: policy) { $0.merge(meanwhile) { _, new in new } }
        }
        return try inner.modify(repairing: policy, transform)
    }
}

@Suite("Versioned collections: the newer-version refusal holds at the instant of the write")
struct VersionedCollectionRaceTests {
    @Test("A write an older version began just as a newer one migrated is refused under the lock, writing nothing")
    func migrationJustBeforeTheWriteIsNotWrittenOver() throws {
        let domain = MigratedMeanwhileDomain()
        let old = VersionOneSettings(key: "settings", suite: DefaultsSuite(persistentDomain: domain, arguments: []))
        old["theme"] = "dark"
        #expect(old.lastError == nil)
        let migrated: [String: PropertyListValue] = ["settings": .dictionary(["volume": .real(0.4)]), "settings.schemaVersion": .integer(2)]
        domain.pending.withLock { $0 = migrated }
        old["theme"] = "light"
        guard case .collectionFromNewerVersion(let stored, let supported)? = old.lastError else {
            Issue.record("expected collectionFromNewerVersion, got \(String(describing: old.lastError))")
            return
        }
        #expect((stored, supported) == (2, 1))
        #expect(try domain.snapshot().contents == migrated)
    }
}
