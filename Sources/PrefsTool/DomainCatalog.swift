// Where the inspector's domains live, behind one protocol: the verbs never know whether a domain is a
// file in a directory or something else (an etcd key, for `--etcd`).
//
// A new place for domains is a type conforming to DomainCatalog, and one line in
// `DefaultsInspector.catalog(_:_:)`, where the catalog is chosen from the command line.

import Foundation
import RVS_PersistentPrefs

/// A domain as the user names it on the command line.
package enum DomainReference: Equatable {
    /// `-g`, `-globalDomain` or `NSGlobalDomain`.
    case global
    /// A domain of the catalog, by name.
    case named(String)
    /// A property-list file given by its absolute path, as macOS `defaults read /path/file.plist` takes
    /// it: its directory and its domain name (the file name without `.plist`).
    case file(directory: String, name: String)

    /// Whether it is a file given by its path, which has a place whatever the catalog.
    package var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    /// What `read` prints for the global domain, and what may name it besides `-g`.
    package static let globalDisplayName = "NSGlobalDomain"

    /// Every word that names the global domain.
    package static let globalNames: Set<String> = ["-g", "-globalDomain", globalDisplayName]

    /// The domain that `word` names.
    /// - Throws: When `word` names the global domain's file instead of the global domain, or is a
    ///   relative path: the message says what to type instead.
    package init(_ word: String) throws(HarnessError) {
        if Self.globalNames.contains(word) {
            self = .global
        } else if word == DefaultsLocations.globalDomainName || word == DefaultsLocations.globalDomainName + DomainName.fileExtension {
            // The library refuses this name for an application domain; the inspector must not reach the
            // global domain through it either, or a typo would edit every program's shared settings.
            throw .usage("'\(word)' is the global domain's file; name the global domain -g (or NSGlobalDomain)")
        } else if word.hasPrefix("/") {
            let path = (word as NSString).standardizingPath
            let file = (path as NSString).lastPathComponent
            let name = file.hasSuffix(DomainName.fileExtension) ? String(file.dropLast(DomainName.fileExtension.count)) : file
            self = .file(directory: (path as NSString).deletingLastPathComponent, name: name)
        } else if word.contains("/") {
            throw .failure("cannot use the domain: the domain name '\(word)' contains '/'; to name a property-list file, give its absolute path, such as $PWD/\(word)")
        } else {
            self = .named(word)
        }
    }
}

/// One line of `harness defaults domains`: a domain's name, and what sets it apart (`system`,
/// `managed`: domains that are read, not written), shown after it.
package struct DomainListing: Equatable {
    package let name: String
    package var marks: [String] = []
}

/// The domains the inspector reads and changes.
package protocol DomainCatalog {
    /// Where the domains are, for messages: "in /home/ada/.config/RVS_PersistentPrefs".
    var place: String { get }

    /// The storage of `domain`, whether or not it exists.
    /// - Throws: When the name cannot be used, before anything is touched.
    func storage(_ domain: DomainReference) throws(HarnessError) -> any DomainStorage

    /// The names of the domains, sorted, the global domain left out.
    /// - Throws: When they cannot be listed (an etcd cluster that cannot be reached).
    func domainNames() throws(HarnessError) -> [String]

    /// Whether the global domain exists.
    var hasGlobalDomain: Bool { get }

    /// What `domains` lists; by default ``domainNames()``, unmarked.
    func listing() throws(HarnessError) -> [DomainListing]

    /// Removes `domain` as a whole, under its lock; it must exist.
    func remove(_ domain: DomainReference, named word: String) throws(HarnessError)
}

extension DomainCatalog {
    /// What `domains` lists: every name, unmarked, unless the catalog knows domains of other kinds.
    package func listing() throws(HarnessError) -> [DomainListing] {
        try domainNames().map { DomainListing(name: $0) }
    }

    /// The storage of the domain the user called `word`.
    package func storage(_ word: String) throws(HarnessError) -> any DomainStorage {
        try storage(DomainReference(word))
    }

    /// The storage of `word`'s domain, which must exist: reading, deleting or exporting a domain that
    /// does not exist is an error, as in `defaults`, and must not create anything.
    package func existingStorage(_ word: String) throws(HarnessError) -> any DomainStorage {
        let storage = try storage(word)
        // With no user directory the domain has no file of the user's to change: say why, not that it is missing.
        if let unavailable = storage as? NoDirectoryDomainStorage { throw .failure(unavailable.reason) }
        guard try snapshot(of: storage).exists else { throw doesNotExist(word) }
        return storage
    }

    /// The error for a domain that must exist and does not.
    package func doesNotExist(_ word: String) -> HarnessError {
        if word.hasPrefix("/") { return .failure("Domain file \(word) does not exist") }
        return .failure("Domain \(word) does not exist \(place); `\(Tool.command) domains` lists those that do")
    }

    /// `storage` read afresh.
    package func snapshot(of storage: any DomainStorage) throws(HarnessError) -> DomainSnapshot {
        do {
            return try storage.snapshot()
        } catch {
            throw HarnessError(error)
        }
    }

    /// The contents of `storage`, read afresh.
    package func contents(of storage: any DomainStorage) throws(HarnessError) -> [String: PropertyListValue] {
        try snapshot(of: storage).contents
    }

    /// The contents of `word`'s domain, which must exist.
    package func contents(of word: String) throws(HarnessError) -> [String: PropertyListValue] {
        try contents(of: existingStorage(word))
    }

    /// The value of `key` in `domain`, both of which must exist.
    package func value(_ key: String, in domain: String) throws(HarnessError) -> PropertyListValue {
        guard let value = try contents(of: domain)[key] else {
            throw .failure("The domain/default pair of (\(domain), \(key)) does not exist; `\(Tool.command) read \(domain)` lists its keys")
        }
        return value
    }

    /// Every domain, the global one first when it exists: what `read` and `find` go through; those that
    /// `domains` lists, so those only an administrator's layer or a group container holds as well.
    package func everyDomain() throws(HarnessError) -> [String] {
        (hasGlobalDomain ? [DomainReference.globalDisplayName] : []) + (try listing().map(\.name))
    }

    /// One locked read-modify-write of `storage`. `transform` may throw a ``HarnessError`` to write nothing.
    package func modify(
        _ storage: any DomainStorage,
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(HarnessError) -> Void
    ) throws(HarnessError) {
        var refusal: HarnessError?
        do throws(PrefsError) {
            try storage.modify(repairing: policy) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
                do throws(HarnessError) {
                    try transform(&contents)
                } catch {
                    refusal = error
                    throw PrefsError.unknownError(error: error)
                }
            }
        } catch {
            throw refusal ?? HarnessError(error)
        }
    }
}
