// `prefsctl watch DOMAIN [KEY]`: each change printed as it happens, until interrupted. The domain is watched
// through the library's own watches (DomainStorage.watchChanges) of every layer a program reads it through
// (managed, the user's file, the global domain, system), or of its etcd key with --etcd; a callback only says
// that something may have changed, so the domain is read again and compared with what was printed last.

import Dispatch
import Foundation
import Glibc
import RVS_PersistentPrefs
import Synchronization

extension DomainInspector {
    /// The suite a program reading `name` sees: the user's file over the administrator's layers, those the
    /// library ignores left out (and reported on standard error when `reporting`), unless `keepingIgnored`: then
    /// every administrator's file is in the search list, whose reads skip (as a program's do) those that cannot be
    /// used now, so that one fixed later is read from then on.
    func layeredSuite(_ directory: DomainDirectory, named name: String, reporting: Bool = true,
                      keepingIgnored: Bool = false) throws(HarnessError) -> DefaultsSuite {
        let locations = directory.layers.locations
        let (system, managed) = (locations.systemDomains(named: name), locations.managedDomains(named: name))
        return DefaultsSuite(persistentDomain: try directory.userDomain(named: name), globalDomain: try directory.globalDomain(),
                             systemDomains: keepingIgnored ? system : Self.usable(system, reporting: reporting),
                             managedDomains: keepingIgnored ? managed : Self.usable(managed, reporting: reporting), argumentDomain: [:])
    }

    /// Prints the current value of every key of `DOMAIN` (or of KEY), then each change as it happens; never returns.
    package func watch(_ operands: [String], json: Bool) throws(HarnessError) -> Never {
        guard (1...2).contains(operands.count) else { throw .usage("watch needs DOMAIN, and optionally KEY (see \(Tool.command) help watch)") }
        let (name, key) = (operands[0], operands.count == 2 ? operands[1] : nil)
        let storages: [any DomainStorage]
        let read: () throws(PrefsError) -> [String: PropertyListValue]
        if let directory = userDirectory, case .named = try DomainReference(name) {
            // Every administrator's file is watched, those ignored now included: one fixed later (or made later)
            // is heard, and read from then on; each one ignored is reported when a read finds it so.
            let suite = try layeredSuite(directory, named: name, keepingIgnored: true)
            storages = suite.sources.map(\.storage)
            let administrators = suite.sources.filter { $0.role == .system || $0.role == .managed }.map(\.storage)
            read = { () throws(PrefsError) in
                _ = Self.usable(administrators)
                return try Self.effectiveContents(of: suite, named: name) ?? [:]
            }
        } else {
            let storage = try domains.storage(name)
            storages = [storage]
            read = { () throws(PrefsError) in try storage.snapshot().contents }
        }
        let watcher = DomainWatcher(key: key, json: json, read: read)
        // The watches start before the first read: a change made after that read is told by them.
        let watches = storages.compactMap { storage in storage.watchChanges { watcher.changed() } }
        watcher.changed()
        // Kept where nothing ends their lifetime: `withExtendedLifetime(watches) { waitForever() }` does not, since
        // its body never returns, and a release build released the watches (and the storages) at once, so that the
        // installed tool printed the first value and then nothing.
        Self.keptForever = [storages, watches, watcher]
        if watches.isEmpty {
            // A backend that cannot tell of changes is read again every second.
            let timer = DispatchSource.makeTimerSource(queue: watcher.queue)
            timer.schedule(deadline: .now() + 1, repeating: 1)
            timer.setEventHandler { watcher.compare() }
            timer.resume()
            Self.keptForever.append(timer)
        }
        Self.waitForever()
    }

    /// What a running `watch` needs alive until the process ends; set once, on the main thread, before it waits.
    nonisolated(unsafe) private static var keptForever: [Any] = []

    private static func waitForever() -> Never {
        while true { pause() }
    }
}

/// What `watch` printed last, compared with each new read on one serial queue.
final class DomainWatcher: @unchecked Sendable {
    let queue = DispatchQueue(label: "prefsctl.watch")
    private let key: String?
    private let json: Bool
    private let read: () throws(PrefsError) -> [String: PropertyListValue]
    /// Only touched on `queue`.
    private var last: [String: PropertyListValue]?
    private var lastError: String?

    init(key: String?, json: Bool, read: @escaping () throws(PrefsError) -> [String: PropertyListValue]) {
        (self.key, self.json, self.read) = (key, json, read)
    }

    /// Called by any watch, on any thread: something may have changed.
    func changed() {
        queue.async { self.compare() }
    }

    /// Reads the domain and prints what differs from the last read: `KEY = VALUE;` for a key set or changed,
    /// `KEY removed` for one gone (JSON lines with --json); a read that fails is reported once on standard error.
    func compare() {
        let now: [String: PropertyListValue]
        do {
            let contents = try read()
            now = key.map { key in contents[key].map { [key: $0] } ?? [:] } ?? contents
            lastError = nil
        } catch {
            let message = "\(Tool.command): \(error)"
            if message != lastError { Console.complain(message) }
            lastError = message
            return
        }
        let before = last ?? [:]
        for name in Set(before.keys).union(now.keys).sorted() {
            switch (before[name], now[name]) {
            case (let old?, let new?) where old.isIdentical(to: new): continue
            case (_, let new?):
                Console.say(json ? JSONText.encode(.dictionary(["key": .string(name), "value": new]), compact: true)
                                 : "\(name) = \(PropertyListPrinter.inline(new));")
            case (_?, nil):
                Console.say(json ? JSONText.encode(.dictionary(["key": .string(name), "removed": .bool(true)]), compact: true)
                                 : "\(name) removed")
            case (nil, nil): continue
            }
        }
        last = now
        // A reader that went away (`prefsctl watch … | head -n 3`) ends the watch.
        if let failure = Console.outputFailure {
            Console.complain("\(Tool.command): cannot write to standard output: \(failure)")
            exit(1)
        }
    }
}
