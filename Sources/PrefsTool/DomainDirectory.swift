// The inspector's domains as files of one directory.
//
// Everything goes through FileDomainStorage, the type the library itself stores with: reads take a fresh
// snapshot, and every change is one read-modify-write under the domain's lock, written to a temporary
// file and renamed over the old one. So the inspector can be used on the files of a running app without
// tearing them or losing the app's concurrent writes, and it refuses bad names and values the same way.

import Foundation
import Glibc
import RVS_PersistentPrefs

/// The domains of one directory, named as `defaults` names them, read and changed through the
/// library's own storage type; every failure is a ``HarnessError``.
package struct DomainDirectory: DomainCatalog {
    package let path: String
    /// The administrator's system and managed files above and below these domains.
    package let layers: AdministratorLayers
    /// The administrator's layer this directory is (`--system`, `--managed`), whose files are written as
    /// ``AdministratorFile`` writes them; `nil` for a user's domains.
    package let layer: AdministratorLayer?
    /// The group container ($RVS_PREFS_GROUP_CONTAINER) when it is another directory than `path`: its group
    /// suites are domains too, found there when `path` has no file of that name (see GroupSuites.swift).
    package let groupContainer: String?
    /// Why there is no user directory (a service with no usable home, SPEC §12), when there is none: the domains
    /// are then the administrators' layers, read as a program reads them, and every write is refused with this.
    package let unavailable: String?

    /// The domains in `path`: a user's, or those of an administrator's `layer`; with `groupContainer`, the
    /// group suites there as well.
    package init(path: String, layer: AdministratorLayer? = nil, groupContainer: String? = nil) {
        self.path = path
        self.layer = layer
        self.layers = AdministratorLayers(preferencesDirectory: path)
        self.groupContainer = layer == nil ? groupContainer.flatMap { $0 == path ? nil : $0 } : nil
        unavailable = nil
    }

    /// The domains of a user with no preferences directory, `reason` saying why: the administrators' layers,
    /// as the library serves them to such a program (SPEC §12), and no file of the user's own.
    package init(withoutDirectory reason: String) {
        (path, layer, groupContainer, unavailable) = ("", nil, nil, reason)
        layers = AdministratorLayers(preferencesDirectory: nil)
    }

    package var place: String {
        if unavailable != nil { return "with no preferences directory" }
        return layer.map { "in \(path) (the \($0.rawValue) layer)" } ?? "in \(path)"
    }

    /// The user's domain `name` as a program's suite holds it: its file, or with no user directory the library's
    /// domain that holds nothing and refuses every write with the reason.
    package func userDomain(named name: String) throws(HarnessError) -> any DomainStorage {
        if let unavailable {
            if let problem = DomainName.problem(with: name) { throw .failure("cannot use the domain: \(problem)") }
            return NoDirectoryDomainStorage.shared(reason: unavailable)
        }
        return try fileStorage(.named(name))
    }

    /// The user's global domain file; `nil` with no user directory.
    package func globalDomain() throws(HarnessError) -> (any DomainStorage)? {
        unavailable == nil ? try fileStorage(.global) : nil
    }

    /// A named domain is written as the library writes it: an entry the administrator forces is not changed.
    /// An administrator's file is written as the administrator's layer needs it (see AdministratorFile).
    package func storage(_ domain: DomainReference) throws(HarnessError) -> any DomainStorage {
        if unavailable != nil, case .named(let name) = domain { return try userDomain(named: name) }
        let (directory, name) = try fileLocation(domain)
        // A file of an administrator's layer is written as that layer's files are, however it was named (--system,
        // or --directory or an absolute path that lead to the layer's directory): under the same lock, so that
        // two administrators' writes never lose each other's change, and leaving no lock file there.
        if layer != nil || AdministratorLayer.layer(ofDirectory: directory) != nil {
            return AdministratorFile(directory: directory, name: name)
        }
        let file = try fileStorage(domain)
        guard case .named(let name) = domain else { return file }
        return AdministeredDomain(file, suite: layers.suite(named: name, persistent: file, global: nil))
    }

    /// The user's domains, and those only the administrator's system or managed files hold, each marked.
    package func listing() throws(HarnessError) -> [DomainListing] {
        if let layer { return try domainNames().map { DomainListing(name: $0, marks: [layer.rawValue]) } }
        let (system, managed) = layers.markedDomains()
        let group = Set(groupSuiteNames())
        return Set(try domainNames()).union(system).union(managed).union(group).sorted().map { name in
            DomainListing(name: name, marks: (group.contains(name) ? ["group"] : []) + (system.contains(name) ? ["system"] : [])
                                            + (managed.contains(name) ? ["managed"] : []))
        }
    }

    /// The file storage of `domain`, whether or not its file exists.
    /// - Throws: When the name cannot be one file name (the library's own rule), before anything is touched.
    package func fileStorage(_ domain: DomainReference) throws(HarnessError) -> FileDomainStorage {
        let (directory, name) = try fileLocation(domain)
        do {
            return try FileDomainStorage(directory: directory, name: name)
        } catch {
            throw .failure("cannot use the domain: \(error)")
        }
    }

    /// The directory and domain name of `domain`'s file.
    /// - Throws: When the name cannot be one file name (the library's own rule).
    package func fileLocation(_ domain: DomainReference) throws(HarnessError) -> (directory: String, name: String) {
        let (directory, name): (String, String)
        // With no user directory, only a file given by its path has a place.
        if let unavailable, !domain.isFile { throw .failure(unavailable) }
        switch domain {
        case .global: (directory, name) = (path, DefaultsLocations.globalDomainName)
        case .named(let named): (directory, name) = (self.directory(ofNamed: named), named)
        case .file(let fileDirectory, let fileName): (directory, name) = (fileDirectory, fileName)
        }
        if let problem = DomainName.problem(with: name) { throw .failure("cannot use the domain: \(problem)") }
        return (directory, name)
    }

    /// The domains with a file in the directory, by name; the global domain is left out, as `defaults domains`
    /// leaves it out. A domain whose name starts with a dot is one like any other (the library's temporary and
    /// lock files do not end in `.plist`).
    package func domainNames() throws(HarnessError) -> [String] {
        unavailable == nil ? Self.domainFiles(in: path) : []
    }

    /// The names of the domain files (regular files, the global domain's left out) in `path`, sorted.
    static func domainFiles(in path: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let global = DefaultsLocations.globalDomainName + DomainName.fileExtension
        return names.filter { name in
            guard name.hasSuffix(DomainName.fileExtension), name.count > DomainName.fileExtension.count, name != global else { return false }
            var info = stat()
            return lstat(path + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }.map { String($0.dropLast(DomainName.fileExtension.count)) }.sorted()
    }

    package var hasGlobalDomain: Bool {
        unavailable == nil && FileManager.default.fileExists(atPath: path + "/" + DefaultsLocations.globalDomainName + DomainName.fileExtension)
    }

    /// Removes the file of `domain`, which must exist, readable or not, under the domain's lock, so
    /// that a running app's write is never interleaved with the removal.
    package func remove(_ domain: DomainReference, named word: String) throws(HarnessError) {
        if layer != nil {
            // No lock file is left in an administrator's directory: the removal locks the directory.
            let (directory, name) = try fileLocation(domain)
            let removed: Bool
            do {
                removed = try AdministratorFile(directory: directory, name: name).remove()
            } catch {
                throw HarnessError(error)
            }
            if !removed { throw doesNotExist(word) }
            return
        }
        let storage = try fileStorage(domain)
        guard FileManager.default.fileExists(atPath: storage.location) else { throw doesNotExist(word) }
        do {
            try storage.removeDomainFile()
        } catch {
            throw HarnessError(error)
        }
    }
}
