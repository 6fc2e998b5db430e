import Foundation
import RVS_PersistentPrefs

// `TestWorker migrate DIR DOMAIN STORAGE_KEY`: the versioned-collection race of SPEC §9. The worker prints
// "ready", waits for a line "go" on standard input (so that the parent starts every worker's first operation
// at once), then creates its instance of a class at schema version 2 over the collection, whose first
// operation migrates a version-0 collection. It prints "migrated" if its own `migrate` ran, else "current",
// and then "volume=… migrations=…" as it reads the collection afterwards.

/// Version 0 stored `vol` as a percentage (an Int); version 2 stores `volume` as a fraction, and counts in
/// `migrations` how many times a migration ran over the collection.
final class VersionedWorkerPreferences: RVS_PersistentPrefs {
    nonisolated(unsafe) static var ranMigration = false

    override class var schemaVersion: Int { 2 }
    override var keys: [String] { ["volume", "migrations", "vol", "theme"] }
    override var userDefaults: DefaultsSuite? { OpenPreferences.suite }

    override func migrate(_ values: inout [String: Any], from version: Int) {
        Self.ranMigration = true
        if version < 1, let percent = values.removeValue(forKey: "vol") as? Int { values["volume"] = Double(percent) / 100 }
        values["migrations"] = (values["migrations"] as? Int ?? 0) + 1
    }
}

func runVersionedWorker(storageKey: String) {
    say("ready")
    guard readLine() == "go" else { fail("migrate: expected 'go' on standard input") }
    let prefs = VersionedWorkerPreferences(key: storageKey)
    if let error = prefs.lastError { fail("migrate: \(error)") }
    say(VersionedWorkerPreferences.ranMigration ? "migrated" : "current")
    let values = prefs.values
    say("volume=\(values["volume"] as? Double ?? -1) migrations=\(values["migrations"] as? Int ?? 0)")
}
