// What the installed schemas add to completion: the domains that have one, and their storage keys and entries,
// so that `prefsctl describe DOMAIN KEY <TAB>` offers the app's entries before anything is stored.

import Foundation
import RVS_PersistentPrefs

enum SchemaCompletion {
    /// The domains with an installed schema, in every data directory.
    static func domains() -> [String] {
        InstalledSchema.dataDirectories().flatMap { directory -> [String] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + InstalledSchema.subdirectory)) ?? []
            return names.filter { $0.hasSuffix(DomainName.fileExtension) }.map { String($0.dropLast(DomainName.fileExtension.count)) }
        }
    }

    /// The storage keys (after DOMAIN) or entries (after DOMAIN KEY) the domain's schema describes; nothing
    /// deeper, nor for a domain without one (or whose schema cannot be read: completion never complains).
    static func names(_ operands: [String]) -> [String] {
        guard let domain = operands.first, operands.count <= 2, let schema = try? InstalledSchema.find(for: domain) else { return [] }
        if operands.count == 1 { return schema.collections.keys.sorted() }
        return schema.collections[operands[1]]?.keys.sorted() ?? []
    }
}
