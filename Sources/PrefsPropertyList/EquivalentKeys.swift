import Foundation

/// How a reader builds a dictionary from a file whose keys Swift's `String ==` may merge.
///
/// CoreFoundation and Python compare keys by code point, so a file they write may hold both a
/// precomposed `"é"` and `"e\u{301}"`, which are one key to a Swift dictionary. Such a file stays
/// readable: one entry goes into the dictionary, key and value together, chosen by the keys alone (see
/// ``survives(_:over:)``), so a dictionary reads the same whatever order its writer used (Python sorts
/// keys, CoreFoundation writes them in hash order) and whatever the format. The others are set aside as
/// shadowed entries, which the storage layer writes back (``ShadowedEntries``).
package enum EquivalentKeys {
    /// What to do with a key repeated with identical code points.
    package enum IdenticalKeys {
        /// Refuse the file: no writer that serializes a dictionary produces one in a binary file.
        case reject
        /// The later entry wins, as XML readers (Foundation's, Python's) have always done.
        case laterWins
    }

    /// Adds an entry; an entry that loses to an equal key spelled otherwise, or that this entry
    /// displaces, goes to `shadowed`. Returns `false` for a key repeated with identical code points
    /// (of an entry in `values` or in `shadowed`) under `.reject`.
    package static func insert(
        _ element: PropertyListValue, forKey key: String, into values: inout [String: PropertyListValue],
        shadowed: inout [ShadowedEntries.Entry], identical: IdenticalKeys
    ) -> Bool {
        // One hash on the common path; `updateValue` replaces only the value, never the key.
        guard let earlier = values.updateValue(element, forKey: key), let index = values.index(forKey: key) else {
            return true
        }
        let existing = values.keys[index]
        if existing.unicodeScalars.elementsEqual(key.unicodeScalars) {
            return identical == .laterWins
        }
        values.values[index] = earlier
        if let repeated = shadowed.firstIndex(where: { $0.key.unicodeScalars.elementsEqual(key.unicodeScalars) }) {
            guard identical == .laterWins else { return false }
            shadowed[repeated] = ShadowedEntries.Entry(key: key, value: element)
            return true
        }
        if survives(key, over: existing) {
            shadowed.append(ShadowedEntries.Entry(key: existing, value: earlier))
            values.remove(at: index)
            values[key] = element
        } else {
            shadowed.append(ShadowedEntries.Entry(key: key, value: element))
        }
        return true
    }

    /// The order in which a writer puts a dictionary's keys: code-point order (UTF-8 byte order), as
    /// Python's `plistlib` sorts them.
    ///
    /// Not Swift's `<`, which is no total order over keys that are not in normalization form C: neither
    /// `"e\u{301}" < "\u{E9}z"` nor the reverse holds, though the two differ, so a sort by `<` could order
    /// one dictionary's keys differently from one encoding to the next. Code-point order is total, and
    /// puts two spellings of an equal key in a fixed order too.
    ///
    /// Compared with `memcmp` over the strings' UTF-8 storage where both have it (native strings), which
    /// orders unsigned bytes as code-point order does: a writer sorts every key of a domain on each write.
    package static func precedes(_ key: String, _ other: String) -> Bool {
        let compared = key.utf8.withContiguousStorageIfAvailable { keyBytes in
            other.utf8.withContiguousStorageIfAvailable { otherBytes -> Bool in
                let common = min(keyBytes.count, otherBytes.count)
                if common > 0, let first = keyBytes.baseAddress, let second = otherBytes.baseAddress {
                    let order = memcmp(first, second, common)
                    if order != 0 { return order < 0 }
                }
                return keyBytes.count < otherBytes.count
            }
        }
        if let compared, let compared { return compared }
        return key.utf8.lexicographicallyPrecedes(other.utf8)
    }

    /// Whether `key` wins over `other`, a different spelling of an equal key: the spelling in Unicode
    /// normalization form C wins (the precomposed one, which Swift source, keyboards and most text use,
    /// so a write back keeps the canonical spelling; at most one of two canonically equivalent
    /// spellings is NFC); when neither is, the one that comes first in code-point order.
    package static func survives(_ key: String, over other: String) -> Bool {
        let isNFC = { (text: String) in
            text.unicodeScalars.elementsEqual(text.precomposedStringWithCanonicalMapping.unicodeScalars)
        }
        let (keyIsNFC, otherIsNFC) = (isNFC(key), isNFC(other))
        if keyIsNFC != otherIsNFC { return keyIsNFC }
        return key.unicodeScalars.lexicographicallyPrecedes(other.unicodeScalars) { $0.value < $1.value }
    }
}
