/// The role of one domain in a suite's search list: where it stands, and how it combines with the others.
///
/// A read takes the value of a key from the first whole-value domain that holds it (``arguments``,
/// ``persistent``, ``global``, ``registration``, in that order). The two domains an administrator keeps
/// work entry by entry instead: ``managed`` entries win over every other domain's, and ``system`` entries
/// fill in what no other domain supplies.
///
/// A struct with static roles rather than an enumeration, so that a later kind of domain adds a role
/// without breaking anyone's exhaustive `switch`: compare with `==`, or switch with a `default`.
///
/// ## Topics
///
/// ### The Search List, in Order
/// - ``managed``
/// - ``arguments``
/// - ``persistent``
/// - ``global``
/// - ``system``
/// - ``registration``
///
/// ### Describing a Role
/// - ``name``
/// - ``description``
public struct SearchDomain: Hashable, Sendable, CustomStringConvertible {
    /// How a domain combines with the whole-value domains of the search list.
    package enum Combination: Sendable, Hashable {
        /// The first domain holding a key supplies its whole value.
        case wholeValue
        /// Its entries win over those of every other domain: forced by an administrator.
        case forcedEntries
        /// Its entries fill in what no other domain supplies: defaults installed system-wide.
        case defaultEntries
    }

    /// The role's name, as the inspector shows it: `managed`, `arguments`, `persistent`, `global`, `system`
    /// or `registration`.
    public let name: String
    package let combination: Combination
    /// Whether a collection not stored yet starts from what this domain supplies (see
    /// ``DefaultsSuite/startingPoint(forKey:)``).
    package let isStartingPoint: Bool

    private init(_ name: String, _ combination: Combination, isStartingPoint: Bool = false) {
        self.name = name
        self.combination = combination
        self.isStartingPoint = isStartingPoint
    }

    /// Entries an administrator forces: they win over every other domain, arguments included, and
    /// cannot be written.
    public static let managed = SearchDomain("managed", .forcedEntries)
    /// `-<key> <value>` pairs among the process's arguments.
    public static let arguments = SearchDomain("arguments", .wholeValue)
    /// The writable persistent domain: the application domain or a group suite.
    public static let persistent = SearchDomain("persistent", .wholeValue)
    /// The global domain shared by all of the user's programs (read-only here).
    public static let global = SearchDomain("global", .wholeValue, isStartingPoint: true)
    /// Defaults an administrator or a distribution package installs system-wide (read-only), consulted
    /// entry by entry below the user's own values.
    public static let system = SearchDomain("system", .defaultEntries)
    /// Defaults registered in memory by the process; never persisted.
    public static let registration = SearchDomain("registration", .wholeValue, isStartingPoint: true)

    /// The role's name.
    public var description: String { name }
}

/// One domain of a suite's search list, with its role.
package struct SearchSource: Sendable {
    package let role: SearchDomain
    package let storage: any DomainStorage

    package init(_ role: SearchDomain, _ storage: any DomainStorage) {
        self.role = role
        self.storage = storage
    }
}
