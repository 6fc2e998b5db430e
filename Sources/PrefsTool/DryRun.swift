// `--dry-run`: every writing verb runs as usual up to the write (the same parsing, the same reads, the same
// refusals: a missing key, a forced entry), then prints what it would change instead of changing it. Nothing is
// created on the way either: not the directory, not a lock file.

import RVS_PersistentPrefs

/// A catalog whose domains are read as `base` reads them and never written.
package struct DryRunCatalog: DomainCatalog {
    package let base: any DomainCatalog

    /// `base`, with its writes printed instead of made.
    package init(_ base: any DomainCatalog) {
        self.base = base
    }

    package var place: String { base.place }
    package var hasGlobalDomain: Bool { base.hasGlobalDomain }
    package func domainNames() throws(HarnessError) -> [String] { try base.domainNames() }
    package func listing() throws(HarnessError) -> [DomainListing] { try base.listing() }

    package func storage(_ domain: DomainReference) throws(HarnessError) -> any DomainStorage {
        DryRunDomain(try base.storage(domain))
    }

    /// Says which file would go, after the checks the removal itself makes.
    package func remove(_ domain: DomainReference, named word: String) throws(HarnessError) {
        let storage = try base.storage(domain)
        guard try snapshot(of: storage).exists else { throw doesNotExist(word) }
        Console.say("dry run: would remove \(storage.location)")
    }
}

/// A domain that reads through `base` and prints, instead of writing, what a change would do.
package final class DryRunDomain: DomainStorage {
    package let base: any DomainStorage

    /// `base`, never written.
    package init(_ base: any DomainStorage) {
        self.base = base
    }

    package var location: String { base.location }
    package func snapshot() throws(PrefsError) -> DomainSnapshot { try base.snapshot() }

    /// Runs `transform` on the contents read now, checks what the write would check, and prints the difference.
    @discardableResult
    package func modify(repairing policy: RepairPolicy,
                        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        let before: [String: PropertyListValue]
        do throws(PrefsError) {
            before = try base.snapshot().contents
        } catch {
            guard case .domainUnreadable = error, policy == .moveUnreadableAside else { throw error }
            Console.say("dry run: would move the unreadable \(location) aside")
            before = [:]
        }
        var after = before
        try transform(&after)
        if let administered = base as? AdministeredDomain { try administered.suite.refuseForcedChanges(from: before, to: after) }
        let lines = Self.difference(before, after)
        Console.say(lines.isEmpty ? "dry run: would change nothing in \(location)" : (["dry run: would write \(location):"] + lines).joined(separator: "\n"))
        return DomainSnapshot(contents: after)
    }

    /// One `- KEY = OLD;` and `+ KEY = NEW;` line for each storage key that would change, in key order.
    static func difference(_ before: [String: PropertyListValue], _ after: [String: PropertyListValue]) -> [String] {
        Set(before.keys).union(after.keys).sorted().flatMap { key -> [String] in
            switch (before[key], after[key]) {
            case (let old?, let new?) where old.isIdentical(to: new): return []
            case (let old, let new):
                return (old.map { ["- \(key) = \(PropertyListPrinter.inline($0));"] } ?? [])
                    + (new.map { ["+ \(key) = \(PropertyListPrinter.inline($0));"] } ?? [])
            }
        }
    }
}
