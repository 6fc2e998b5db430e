import PrefsStorage

extension RVS_PersistentPrefs {
    /// Whether an administrator forces the entry `entry` of this collection (see <doc:Administration>):
    /// a read returns the forced value, and a write that sets or removes it is refused with
    /// ``PrefsError/forcedByAdministrator(entries:path:)``.
    ///
    /// Leaves ``lastError`` as it is. A managed file that cannot be honoured (an owner or mode others
    /// could have changed, or not a property list) forces nothing.
    /// - Parameter entry: An entry name.
    public func isForced(_ entry: String) -> Bool {
        locked {
            guard let collection = try? collection() else { return false }
            let forced = collection.suite.forced(forKey: collection.storageKey)
            return forced.whole != nil || forced.entries[entry] != nil
        }
    }
}

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// Whether an administrator forces the typed entry at `entry` (`\.$appearance` for
    /// `@Entry("appearance") var appearance`); see ``RVS_PersistentPrefs/isForced(_:)``.
    public func isForced<Value>(_ entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>) -> Bool {
        isForced(self[keyPath: entry].name)
    }
}
