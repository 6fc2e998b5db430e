import Foundation
import PrefsPropertyList
import PrefsStorage
import Synchronization

/// What the registry needs to know of an `@Entry` property, whatever its value type.
protocol DeclaredEntry {
    var name: String { get }
    var formerNames: [String] { get }
    var constraint: EntryConstraint? { get }
    var storedDefault: PropertyListValue? { get }
}

extension RVS_PersistentPrefs.Entry: DeclaredEntry {}

/// The entry names a class declares with `@Entry` (its own and its superclasses'), found once per class by
/// reflecting an instance, so that a subclass lists each entry name once, in its declaration.
struct EntryRegistry: Sendable {
    /// The entry names, sorted.
    let names: [String]
    /// The names a write may set or keep: the entry names and the names they were stored under before,
    /// so that a collection still holding a former name can be written (the write removes it).
    let nameSet: Set<String>
    /// The constraints on values, by entry name: every write of one of these entries is checked against it.
    var constraints: [String: EntryConstraint] = [:]
    /// What the class's schema says of each entry, by entry name.
    var declarations: [String: EntryDeclaration] = [:]

    /// What a schema says of one entry: its default's stored form and its constraint.
    struct EntryDeclaration: Sendable {
        var storedDefault: PropertyListValue?
        var constraint: EntryConstraint?
        /// The names it was stored under before (`formerly:`), which a read still honours.
        var formerNames: [String] = []
    }

    static let empty = EntryRegistry(names: [], nameSet: [])

    /// The entry names a write may set, given the class's `keys`: those and every declared name.
    func allowedNames(keys: [String]) -> Set<String> {
        nameSet.isEmpty ? Set(keys) : nameSet.union(keys)
    }

    private static let registries = PrefsMutex<[ObjectIdentifier: EntryRegistry]>([:])

    /// The registry of `instance`'s class, made on first use.
    static func registry(of instance: RVS_PersistentPrefs) -> EntryRegistry {
        let type = ObjectIdentifier(Swift.type(of: instance))
        if let known = registries.withLock({ $0[type] }) { return known }
        // Reflected outside the lock: a class may be first used from several threads at once, and each
        // finds the same names.
        let found = reflect(instance)
        return registries.withLock { registries in
            if let known = registries[type] { return known }
            registries[type] = found
            return found
        }
    }

    /// Finds the `@Entry` properties of `instance` (whose storage the compiler names `_property`).
    /// Two properties with one entry name are a programming error, stopped here with both names.
    private static func reflect(_ instance: RVS_PersistentPrefs) -> EntryRegistry {
        var properties: [String: String] = [:]  // entry name → property
        var formerNames: Set<String> = []
        var declarations: [String: EntryDeclaration] = [:]
        var mirror: Mirror? = Mirror(reflecting: instance)
        while let current = mirror {
            for child in current.children {
                guard let entry = child.value as? any DeclaredEntry else { continue }
                let property = child.label.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 } ?? "?"
                if let other = properties[entry.name] {
                    let (first, second) = other < property ? (other, property) : (property, other)
                    fatalError(
                        "RVS_PersistentPrefs: \(Swift.type(of: instance)) declares the entry name \"\(entry.name)\" twice, "
                            + "with @Entry properties `\(first)` and `\(second)`; give each entry a name of its own"
                    )
                }
                properties[entry.name] = property
                formerNames.formUnion(entry.formerNames)
                declarations[entry.name] = EntryDeclaration(storedDefault: entry.storedDefault, constraint: entry.constraint,
                                                            formerNames: entry.formerNames)
            }
            mirror = current.superclassMirror
        }
        if properties.isEmpty { return .empty }
        var registry = EntryRegistry(names: properties.keys.sorted(), nameSet: formerNames.union(properties.keys))
        registry.constraints = declarations.compactMapValues { $0.constraint?.limitsValues == true ? $0.constraint : nil }
        registry.declarations = declarations
        return registry
    }
}

extension RVS_PersistentPrefs {
    /// The names of this class's `@Entry` properties, sorted: what ``keys`` lists unless overridden.
    var declaredEntryNames: [String] { EntryRegistry.registry(of: self).names }

    /// The entry names a write may set: ``keys`` and every `@Entry` name, so that a subclass overriding
    /// `keys` to add untyped names need not repeat its typed ones.
    var allowedEntryNames: Set<String> { EntryRegistry.registry(of: self).allowedNames(keys: keys) }
}
