// What a user of the base class needs from the layers below comes with `import RVS_PersistentPrefs`:
// the storage types an app plugs in (DefaultsSuite, FileDomainStorage, InMemoryDomainStorage, …), the
// errors, and PropertyListValue.
@_exported import PrefsPropertyList
@_exported import PrefsStorage
