import Foundation

// Swift Observation of typed entries (SPEC §5, §6). A typed read goes through `loadEntry`, which calls
// `entryWasRead(_:)` with the entry name, so that tracking code that read one typed property is told of
// changes to that entry only, as for the subscript. Typed writes, in-place changes and `modify` all go
// through `updateEntries`, whose successful writes tell Swift Observation which entries they changed.

extension RVS_PersistentPrefs {
    /// Registers access to the entry `name` with Swift Observation, for every read of a typed entry.
    func entryWasRead(_ name: String) {
        registerObservedAccess(toEntry: name)
    }
}
