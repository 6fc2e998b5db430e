import Foundation

extension PropertyListValue {
    /// Whether `self` and `other` would be stored as the same bytes: the structural identity that decides
    /// whether a write changes anything.
    ///
    /// Stricter than `==`, which follows Swift's equality: `==` takes `0.0` and `-0.0` for one number and
    /// two canonically equivalent spellings of a string (`"é"` precomposed or not) for one string, though
    /// a file holds them differently and other programs tell them apart. Here reals (and dates) compare by
    /// bit pattern, strings and dictionary keys by Unicode scalars, and nothing is encoded to compare.
    package func isIdentical(to other: PropertyListValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.unsignedInteger(let a), .unsignedInteger(let b)): return a == b
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)): return Self.dictionary(a, isIdenticalTo: b)
        default: return false
        }
    }

    /// Whether two dictionaries hold the same keys, spelled with the same scalars, with identical values.
    package static func dictionary(_ a: [String: PropertyListValue], isIdenticalTo b: [String: PropertyListValue]) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let index = b.index(forKey: key) else { return false }
            let (otherKey, otherValue) = b[index]
            guard otherKey.unicodeScalars.elementsEqual(key.unicodeScalars), value.isIdentical(to: otherValue) else {
                return false
            }
        }
        return true
    }
}
