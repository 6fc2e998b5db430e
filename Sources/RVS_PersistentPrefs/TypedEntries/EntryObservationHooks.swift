import Foundation

// Swift Observation of typed entries (SPEC §5, §6): where the `Observable` conformance hooks in.
//
// A typed read goes through `loadStoredEntry`, which calls `entryWasRead(_:)` with the entry name, so that
// the conformance can register access per entry, as it does for the subscript. Typed writes, in-place
// changes and `modify` all go through `updateEntries(setting:incompatible:_:)`, the same locked update as a
// subscript write, so a mutation hook placed there (or in the notification of a successful write) covers
// them without anything here.

extension RVS_PersistentPrefs {
    /// Called for every read of a typed entry, under the operation lock. No-op until the `Observable`
    /// conformance registers per-entry access here.
    func entryWasRead(_ name: String) {}
}
