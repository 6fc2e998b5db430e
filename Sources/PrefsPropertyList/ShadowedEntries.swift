import Foundation

/// The entries of a decoded file that no `[String: PropertyListValue]` can hold: those whose key is
/// equal under Swift's `String ==` to another key of the same dictionary but spelled with other code
/// points (`"e\u{301}"` beside a precomposed `"é"`), which lost to it under the rule of
/// ``EquivalentKeys``.
///
/// CoreFoundation and Python keep both entries, so a file they wrote may hold both; the storage layer
/// keeps this table beside the decoded contents and writes the entries back, so that a write to any
/// other part of the domain loses none of another program's settings.
///
/// A tree that follows the decoded value: each node belongs to one dictionary or array, holds the
/// entries shadowed in that dictionary, and leads, by the exact spelling of a key or by an index, to
/// the nodes of the containers below it. A file without such keys has no table at all (`nil`), so the
/// common case costs nothing beyond one check per dictionary read.
package struct ShadowedEntries: Sendable, Equatable {
    /// One shadowed entry: its key as spelled in the file, and its value.
    package struct Entry: Sendable, Equatable {
        package let key: String
        package let value: PropertyListValue

        package init(key: String, value: PropertyListValue) {
            self.key = key
            self.value = value
        }

        package static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.key.unicodeScalars.elementsEqual(rhs.key.unicodeScalars) && lhs.value.isIdentical(to: rhs.value)
        }
    }

    /// The way from a container to one of its elements.
    package enum Step: Hashable, Sendable {
        /// The value of the dictionary entry whose key has exactly these code points (a shadowed
        /// entry's key included, for entries shadowed inside its value).
        case key(ExactKey)
        /// The array element at this index.
        case index(Int)
    }

    /// The entries of this node's dictionary hidden behind an equal key, in no particular order.
    package private(set) var entries: [Entry] = []
    /// The nodes of containers further down.
    package private(set) var children: [Step: ShadowedEntries] = [:]

    package init() {}

    package var isEmpty: Bool { entries.isEmpty && children.isEmpty }

    /// Adds the entries shadowed in the dictionary reached from this node by `path`.
    package mutating func add(_ shadowed: [Entry], at path: ArraySlice<Step>) {
        guard let step = path.first else { return entries.append(contentsOf: shadowed) }
        children[step, default: ShadowedEntries()].add(shadowed, at: path.dropFirst())
    }

    /// The node reached by `step`, if anything is shadowed there.
    package func child(_ step: Step) -> ShadowedEntries? { children.isEmpty ? nil : children[step] }

    /// What still applies once the value this node belongs to has been replaced by `value`, as a write
    /// of the domain replaces it: `nil` when nothing does.
    ///
    /// A shadowed entry stays while its dictionary is still a dictionary at the same place and still
    /// holds a key equal to it, spelled otherwise: the entry that shadows it, changed or not, so that
    /// changing the value a Swift program reads under `"é"` keeps another program's `"e\u{301}"` as it
    /// was. Removing that key removes the shadowed entries with it (a Swift program cannot tell the two
    /// apart, and a key it removed must not read back), and so does writing the key in the shadowed
    /// spelling (the new value replaces the old under that spelling). The entries are written back as
    /// they were read; the nodes below follow the same rules, by exact key and by index (an element
    /// moved within an array therefore leaves what was shadowed in it behind).
    package func retained(in value: PropertyListValue) -> ShadowedEntries? {
        var kept = ShadowedEntries()
        switch value {
        case .dictionary(let values):
            kept.entries = entries.filter { entry in
                guard let index = values.index(forKey: entry.key) else { return false }
                return !values.keys[index].unicodeScalars.elementsEqual(entry.key.unicodeScalars)
            }
            for (step, child) in children {
                guard case .key(let key) = step else { continue }
                if let index = values.index(forKey: key.string),
                   values.keys[index].unicodeScalars.elementsEqual(key.string.unicodeScalars) {
                    if let retained = child.retained(in: values.values[index]) { kept.children[step] = retained }
                } else if kept.entries.contains(where: { ExactKey($0.key) == key }) {
                    kept.children[step] = child  // inside a shadowed entry, which is written back unchanged
                }
            }
        case .array(let values):
            for (step, child) in children {
                guard case .index(let index) = step, values.indices.contains(index),
                      let retained = child.retained(in: values[index]) else { continue }
                kept.children[step] = retained
            }
        default:
            return nil
        }
        return kept.isEmpty ? nil : kept
    }

    /// Whether `self` and `other` would be written as the same entries (keys by code point).
    package static func == (lhs: ShadowedEntries, rhs: ShadowedEntries) -> Bool {
        lhs.entries.count == rhs.entries.count
            && lhs.entries.allSatisfy { entry in rhs.entries.contains(entry) }
            && lhs.children == rhs.children
    }
}

/// A string compared and hashed by its Unicode scalars, not by Swift's canonical equivalence, so that
/// `"é"` and `"e\u{301}"` are different keys, as they are in a file.
package struct ExactKey: Hashable, Sendable {
    package let string: String

    package init(_ string: String) { self.string = string }

    package static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.unicodeScalars.elementsEqual(rhs.string.unicodeScalars)
    }

    package func hash(into hasher: inout Hasher) {
        for scalar in string.unicodeScalars { hasher.combine(scalar.value) }
    }
}
