import Foundation

// Returning a typed entry to its default, and telling whether it is there.

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// Removes a typed entry from the stored collection, so that it reads as its default again.
    ///
    /// ```swift
    /// settings.reset(\.$appearance)
    /// settings.appearance   // .system, the default, and nothing is stored for it
    /// ```
    ///
    /// Unlike assigning the default, which stores it, this leaves the entry absent, so that a later
    /// release that changes the default reaches this user too. The names the entry was stored under
    /// before are removed in the same update. It is a write like any other: one locked single-entry
    /// update, validated, told to observers, and reported in ``RVS_PersistentPrefs/lastError``.
    /// - Parameter entry: The key path of the entry's projected value: `\.$appearance` for `@Entry(…) var appearance`.
    public func reset<Value>(_ entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>) {
        let entry = self[keyPath: entry]
        storeEntry(entry, nil)
    }

    /// Whether a typed entry reads as its default: absent, stored equal to the default, or stored in a form
    /// that does not decode (which reads as the default, see ``RVS_PersistentPrefs/lastError``).
    ///
    /// ```swift
    /// if settings.isDefaultValue(\.$appearance) { print("appearance follows the system") }
    /// ```
    /// - Parameter entry: The key path of the entry's projected value.
    /// - Returns: Whether the value a read returns equals the entry's default.
    public func isDefaultValue<Value: Equatable>(_ entry: KeyPath<Self, RVS_PersistentPrefs.Entry<Value>>) -> Bool {
        let entry = self[keyPath: entry]
        return readEntry(entry) == entry.defaultValue
    }
}
