// The inspector's access to the domains of one directory.
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
struct DomainDirectory {
    let path: String

    /// What `read` prints for the global domain, and what may name it besides `-g`.
    static let globalDomainDisplayName = "NSGlobalDomain"

    /// The file name of a domain as the user names it: `-g` and `NSGlobalDomain` mean the global domain.
    static func fileName(of domain: String) -> String {
        ["-g", "-globalDomain", globalDomainDisplayName].contains(domain) ? DefaultsLocations.globalDomainName : domain
    }

    /// The storage of `domain`, whether or not its file exists.
    /// - Throws: When the name cannot be one file name (the library's own rule), before anything is touched.
    func storage(_ domain: String) throws(HarnessError) -> FileDomainStorage {
        let name = Self.fileName(of: domain)
        if let problem = DomainName.problem(with: name) { throw .failure("cannot use the domain: \(problem)") }
        do {
            return try FileDomainStorage(directory: path, name: name)
        } catch {
            throw .failure("cannot use the domain: \(error)")
        }
    }

    /// The storage of `domain`, whose file must exist: reading, deleting or exporting a domain that does
    /// not exist is an error, as in `defaults`, and must not create anything.
    func existingStorage(_ domain: String) throws(HarnessError) -> FileDomainStorage {
        let storage = try storage(domain)
        guard FileManager.default.fileExists(atPath: storage.location) else {
            throw .failure("Domain \(domain) does not exist in \(path)")
        }
        return storage
    }

    /// The contents of `storage`, read afresh.
    func contents(of storage: FileDomainStorage) throws(HarnessError) -> [String: PropertyListValue] {
        do {
            return try storage.snapshot().contents
        } catch {
            throw .failure(error.description)
        }
    }

    /// The contents of `domain`, which must exist.
    func contents(of domain: String) throws(HarnessError) -> [String: PropertyListValue] {
        try contents(of: existingStorage(domain))
    }

    /// The value of `key` in `domain`, both of which must exist.
    func value(_ key: String, in domain: String) throws(HarnessError) -> PropertyListValue {
        guard let value = try contents(of: domain)[key] else {
            throw .failure("The domain/default pair of (\(domain), \(key)) does not exist")
        }
        return value
    }

    /// The domains with a file in the directory, by name; the global domain and the harness's hidden
    /// temporary files start with a dot and are left out, as `defaults domains` leaves out the global one.
    func domainNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { name in
            guard name.hasSuffix(DomainName.fileExtension), !name.hasPrefix(".") else { return false }
            var info = stat()
            return lstat(path + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }.map { String($0.dropLast(DomainName.fileExtension.count)) }.sorted()
    }

    /// Every domain of the directory, the global one first when it has a file: what `read` and `find`
    /// go through.
    func everyDomain() -> [String] {
        let global = path + "/" + DefaultsLocations.globalDomainName + DomainName.fileExtension
        return (FileManager.default.fileExists(atPath: global) ? [Self.globalDomainDisplayName] : []) + domainNames()
    }

    /// One locked read-modify-write of `storage`. `transform` may throw a ``HarnessError`` to write nothing.
    func modify(
        _ storage: FileDomainStorage,
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
            throw refusal ?? .failure(error.description)
        }
    }

    /// Removes the file of `domain`, which must exist, under the domain's lock, so that a running app's
    /// write is never interleaved with the removal.
    func remove(_ domain: String) throws(HarnessError) {
        let storage = try existingStorage(domain)
        do {
            try storage.removeDomainFile()
        } catch {
            throw .failure(error.description)
        }
    }
}
