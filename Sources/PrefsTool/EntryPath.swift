// Key paths into a stored collection: `read DOMAIN KEY ENTRY...`, `write DOMAIN KEY ENTRY... VALUE`.
//
// Storage keys are reverse-DNS names (`com.example.app.preferences`) full of dots, so the dot-separated key
// paths of `plutil` cannot reach inside them; here each entry is its own argument, and a dot is just a
// character of a name.

import RVS_PersistentPrefs

/// A value inside a stored value, one entry name (or array index) an argument.
package enum EntryPath {
    /// How the path is named in messages: `(com.example.app, settings, port)`.
    package static func describe(_ domain: String, _ key: String, _ entries: some Collection<String>) -> String {
        "(" + ([domain, key] + entries).joined(separator: ", ") + ")"
    }

    /// The value at `entries` inside `value`.
    /// - Throws: When an entry is missing, or a value on the way is neither a dictionary nor an array.
    package static func value(at entries: [String], in value: PropertyListValue, _ name: () -> String) throws(HarnessError) -> PropertyListValue {
        var current = value
        for entry in entries {
            switch current {
            case .dictionary(let dictionary):
                guard let inner = dictionary[entry] else { throw .failure("\(name()) does not exist: no entry '\(entry)'") }
                current = inner
            case .array(let array):
                let index = try self.index(entry, in: array, name, allowingEnd: false)
                current = array[index]
            default:
                throw notACollection(current, entry, name)
            }
        }
        return current
    }

    /// `value` with what is at `entries` replaced by what `body` makes of it: `body` is given the value
    /// there (`nil` when there is none) and returns the new one, or `nil` to remove it.
    ///
    /// A missing dictionary on the way is created; in an array, an entry is an index from 0, and the
    /// index one past the end appends.
    package static func updating(
        _ entries: ArraySlice<String>,
        in value: PropertyListValue?,
        _ name: () -> String,
        _ body: (PropertyListValue?) throws(HarnessError) -> PropertyListValue?
    ) throws(HarnessError) -> PropertyListValue? {
        guard let entry = entries.first else { return try body(value) }
        let rest = entries.dropFirst()
        switch value {
        case nil:
            return try updating(rest, in: nil, name, body).map { .dictionary([entry: $0]) }
        case .dictionary(var dictionary)?:
            dictionary[entry] = try updating(rest, in: dictionary[entry], name, body)
            return .dictionary(dictionary)
        case .array(var array)?:
            let index = try self.index(entry, in: array, name, allowingEnd: true)
            let inner = try updating(rest, in: index < array.count ? array[index] : nil, name, body)
            switch (inner, index < array.count) {
            case (let new?, true): array[index] = new
            case (let new?, false): array.append(new)
            case (nil, true): array.remove(at: index)
            case (nil, false): break
            }
            return .array(array)
        case let other?:
            throw notACollection(other, entry, name)
        }
    }

    private static func index(_ entry: String, in array: [PropertyListValue], _ name: () -> String, allowingEnd: Bool) throws(HarnessError) -> Int {
        let end = allowingEnd ? array.count : array.count - 1
        guard let index = Int(entry), index >= 0, index <= end else {
            throw .failure("\(name()): '\(entry)' is not an index of the array, which has \(array.count) elements (the first is 0)")
        }
        return index
    }

    private static func notACollection(_ value: PropertyListValue, _ entry: String, _ name: () -> String) -> HarnessError {
        .failure("\(name()): cannot look up '\(entry)' inside \(PropertyListPrinter.typeName(value, article: true)), only inside a dictionary or an array")
    }
}
