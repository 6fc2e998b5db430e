import Foundation

extension PropertyListValue {
    /// Converts the entries of a collection that are property-list values, and names those that are not,
    /// so that a write can report every offending entry at once.
    static func convertEntries(_ values: [String: Any]) -> (converted: [String: PropertyListValue], incompatible: [String]) {
        var converted: [String: PropertyListValue] = [:]
        converted.reserveCapacity(values.count)
        var incompatible: [String] = []
        for (name, value) in values {
            if let plist = PropertyListValue(value) { converted[name] = plist } else { incompatible.append(name) }
        }
        return (converted, incompatible)
    }

    /// Converts a whole collection, or names every entry whose value is not a property-list value.
    static func collection(_ values: [String: Any]) throws(PrefsError) -> [String: PropertyListValue] {
        let (converted, incompatible) = convertEntries(values)
        if !incompatible.isEmpty { throw .valuesNotPlistCompatible(invalidElements: incompatible.sorted()) }
        return converted
    }
}
