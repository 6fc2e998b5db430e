extension DefaultsSuite {
    /// Whether an administrator forces `key`: a managed domain of the suite holds it (see
    /// <doc:Administration>). As `UserDefaults.objectIsForced(forKey:)`; a managed file that cannot be
    /// honoured forces nothing.
    public func objectIsForced(forKey key: String) -> Bool {
        sources.contains { source in
            source.role == .managed && (try? source.storage.snapshot().contents[key]) != nil
        }
    }

    /// Whether an administrator forces `key` in the domain named `domain`: its file in the managed
    /// directory holds it. As `UserDefaults.objectIsForced(forKey:inDomain:)`; the suite's own domain
    /// is named by ``persistentDomainName``.
    public func objectIsForced(forKey key: String, inDomain domain: String) -> Bool {
        if domain == persistentDomainName { return objectIsForced(forKey: key) }
        return sources.contains { source in
            guard source.role == .managed, let managed = source.storage as? AdministratorDomainStorage,
                  let file = try? FileDomainStorage.shared(directory: managed.file.directory, name: domain) else { return false }
            let sibling = AdministratorDomainStorage.shared(file, verifiesOwnership: true)
            return (try? sibling.snapshot().contents[key]) != nil
        }
    }
}
