// `prefsctl` (and its alias `harness defaults`): domain files inspected and edited in the manner of the macOS
// `defaults` command.
//
// This file holds the verbs; DomainDirectory reaches the domains, ValueParser reads the values typed on
// the command line, and PropertyListPrinter prints values as `defaults` does.

import Foundation
import RVS_PersistentPrefs

package enum DefaultsInspector {
    /// What `--help` prints with no verb.
    package static var usage: String { DefaultsHelp.usage }

    /// `VERB --help`: the verb's own help.
    package static func usage(for arguments: Arguments) throws(HarnessError) -> String {
        guard let verb = arguments.remaining.first(where: { !$0.hasPrefix("-") }) else { return usage }
        return DefaultsHelp.usage(of: try DefaultsVerbs.named(verb))
    }

    /// Runs one command: `arguments` are the words after the program's name (or after `harness defaults`),
    /// `--directory` already taken out into `directory`. Both `prefsctl` and `harness defaults` come here.
    package static func run(_ arguments: Arguments, directory: String?) throws(HarnessError) {
        var arguments = arguments
        if let user = try arguments.option("--user", needs: "a user name") { try OtherUser.become(user) }
        let domains = try catalog(&arguments, directory: directory)
        try DomainInspector(domains: domains).execute(arguments)
    }

    /// Where the domains are: the one place that chooses, from the options, the catalog every verb uses.
    /// Another kind of domain (an option such as `--etcd URL`) is one more case here.
    package static func catalog(_ arguments: inout Arguments, directory: String?) throws(HarnessError) -> any DomainCatalog {
        let dryRun = arguments.flag("--dry-run")
        let catalog = try baseCatalog(&arguments, directory: directory)
        return dryRun ? DryRunCatalog(catalog) : catalog
    }

    private static func baseCatalog(_ arguments: inout Arguments, directory: String?) throws(HarnessError) -> any DomainCatalog {
        let etcd = try arguments.option(EtcdCatalog.option, needs: "client URLs separated by commas")
        let layers = [AdministratorLayer.system, .managed].filter { arguments.flag("--" + $0.rawValue) }
        let chosen = (etcd.map { _ in ["--etcd"] } ?? []) + layers.map { "--" + $0.rawValue } + (directory.map { _ in ["--directory"] } ?? [])
        guard chosen.count <= 1 else {
            throw .usage("\(chosen.joined(separator: " and ")) each choose where the domains are; give one")
        }
        if let etcd { return try EtcdCatalog(endpoints: etcd) }
        if let layer = layers.first { return DomainDirectory(path: layer.directory(), layer: layer) }
        guard let directory = directory ?? DefaultsLocations.preferencesDirectory() else {
            // As a service with no home reads: the administrators' layers, and writes refused (SPEC §12, §13).
            return DomainDirectory(withoutDirectory: DefaultsLocations.noDirectoryReason + "; or pass --directory PATH")
        }
        return DomainDirectory(path: directory, groupContainer: DomainDirectory.groupContainer())
    }

    /// Runs one inspector command on the domains in `directory` (the demos call this directly).
    package static func execute(_ arguments: [String], directory: String) throws(HarnessError) {
        try DomainInspector(domains: DomainDirectory(path: directory)).execute(Arguments(operands: arguments))
    }
}

/// The `defaults` verbs over the domains of one catalog.
package struct DomainInspector {
    package let domains: any DomainCatalog

    /// The verbs over `domains`.
    package init(domains: any DomainCatalog) {
        self.domains = domains
    }

    package func execute(_ arguments: Arguments) throws(HarnessError) {
        var arguments = arguments
        guard let (name, before) = arguments.takeVerb(valueOptions: DefaultsVerbs.valueOptions) else {
            if let host = arguments.optionWords.first(where: { $0 == "-currentHost" || $0 == "-host" }) { throw Self.perHost(host) }
            throw .usage("a verb is needed: \(DefaultsVerbs.names) (see --help)")
        }
        if let host = before.first(where: { $0 == "-currentHost" || $0 == "-host" }) { throw Self.perHost(host) }
        let verb = try DefaultsVerbs.named(name)
        if arguments.remaining.first == "-app" {
            throw .usage("-app: Linux has no application bundles to find a domain by; name the app's domain itself (its applicationDomainName, by default the executable's name); `\(Tool.command) domains` lists them")
        }
        try Self.refuseUnknownOptions(arguments, for: verb)
        try verb.run(self, &arguments)
    }

    private static func perHost(_ word: String) -> HarnessError {
        .usage("\(word): per-host domains do not exist on Linux; every domain is the user's on every host, so leave \(word == "-host" ? "-host HOST" : word) out")
    }

    /// Refuses a word in an option's place that `verb` does not take, naming it (exit status 2): a mistyped
    /// `--jsn` must not be taken for a domain or a key. Operands that start with `-` remain possible: `-` for
    /// standard input or output, `-g` for the global domain, numbers such as `-5`, the type flags of `write`
    /// (which ValueParser judges), and anything after `--`.
    static func refuseUnknownOptions(_ arguments: Arguments, for verb: DefaultsVerb) throws(HarnessError) {
        let known = Set(verb.options.map(\.word))
        for word in arguments.optionWords where word.hasPrefix("-") && word != "-" && Double(word) == nil {
            let name = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
            if known.contains(name) { continue }
            if !word.hasPrefix("--") && (verb.takesDashedValues || DomainReference.globalNames.contains(word)) { continue }
            let options = known.isEmpty ? "it takes no options of its own" : "its options are " + known.sorted().joined(separator: " ")
            throw .usage("unknown option '\(word)' for \(verb.name); \(options) (see \(Tool.command) help \(verb.name); put -- before an operand that starts with -)")
        }
    }

    /// The domains' names, as `defaults domains` prints them, with their marks in parentheses; or, for
    /// scripts and completion, one bare name a line; or a JSON array of `{"name": …, "layers": […]}`.
    package func listDomains(oneALine: Bool, json: Bool = false) throws(HarnessError) {
        let listing = try domains.listing()
        if json {
            Console.say(JSONText.encode(.array(listing.map { .dictionary(["name": .string($0.name), "layers": .array($0.marks.map { .string($0) })]) })))
        } else if listing.isEmpty {
            if !oneALine { Console.complain("\(Tool.command): no domains \(domains.place)") }
        } else if oneALine {
            Console.say(listing.map(\.name).joined(separator: "\n"))
        } else {
            Console.say(listing.map { $0.name + ($0.marks.isEmpty ? "" : " (" + $0.marks.joined(separator: ", ") + ")") }.joined(separator: ", "))
        }
    }

    // MARK: Reading

    package func read(_ operands: [String], json: Bool) throws(HarnessError) {
        let value: PropertyListValue
        switch operands.count {
        case 0:
            value = .dictionary(try everything())
        case 1:
            value = .dictionary(try effectiveContents(of: operands[0]))
        default:
            value = try self.value(operands)
        }
        if json {
            Console.say(JSONText.encode(value))
        } else {
            Console.say(operands.count >= 2 ? PropertyListPrinter.topLevelText(value) : PropertyListPrinter.text(value))
        }
    }

    /// The value that `DOMAIN KEY ENTRY...` names.
    package func value(_ operands: [String]) throws(HarnessError) -> PropertyListValue {
        let (domain, key, entries) = (operands[0], operands[1], Array(operands.dropFirst(2)))
        return try EntryPath.value(at: entries, in: effectiveValue(key, in: domain)) { EntryPath.describe(domain, key, entries) }
    }

    /// Every domain as one dictionary keyed by domain name, as `defaults read` prints it.
    package func everything() throws(HarnessError) -> [String: PropertyListValue] {
        var everything: [String: PropertyListValue] = [:]
        try forEachDomain { name, contents in everything[name] = .dictionary(contents) }
        return everything
    }

    /// Every key of every domain whose name or value contains `word`, ignoring case, printed domain by
    /// domain as `defaults find` prints them; a domain whose name contains `word` matches whole.
    /// With `json`, one JSON dictionary: domain → matching keys → values.
    /// - Throws: A failure (exit status 1, as `grep`) when nothing matches, so that a script can test it.
    package func find(_ word: String, json: Bool = false) throws(HarnessError) {
        var found: [String: PropertyListValue] = [:]
        try forEachDomain { name, contents in
            let matches = Self.contains(name, word) ? contents : contents.filter { key, value in
                Self.contains(key, word) || Self.contains(value, word)
            }
            guard !matches.isEmpty else { return }
            found[name] = .dictionary(matches)
            if !json { Console.say("Found \(matches.count) keys in domain '\(name)': " + PropertyListPrinter.text(.dictionary(matches))) }
        }
        guard !found.isEmpty else { throw .failure("no domain, key, nor value containing '\(word)'") }
        if json { Console.say(JSONText.encode(.dictionary(found))) }
    }

    private static func contains(_ text: String, _ word: String) -> Bool {
        text.range(of: word, options: .caseInsensitive) != nil
    }

    /// Whether `value`, or any key or element nested in it, contains `word` as `defaults` prints it.
    private static func contains(_ value: PropertyListValue, _ word: String) -> Bool {
        switch value {
        case .dictionary(let entries): return entries.contains { contains($0.key, word) || contains($0.value, word) }
        case .array(let elements): return elements.contains { contains($0, word) }
        default: return contains(PropertyListPrinter.topLevelText(value), word)
        }
    }

    /// Calls `body` with the contents of every domain, as a program reads it (see EffectiveDomains.swift). An
    /// unreadable file does not hide the others: it is reported on its own line after them, and the exit status is 1.
    private func forEachDomain(_ body: (String, [String: PropertyListValue]) -> Void) throws(HarnessError) {
        var unreadable: [String] = []
        for name in try domains.everyDomain() {
            do {
                // A domain listed only for an administrator's file that the library ignores has no contents.
                guard let contents = try effectiveContentsIfAny(of: name) else { continue }
                body(name, contents)
            } catch {
                unreadable.append(error.message)
            }
        }
        guard let last = unreadable.popLast() else { return }
        for message in unreadable { Console.complain("\(Tool.command): \(message)") }
        throw .failure(last)
    }

    // MARK: Writing

    package func write(_ operands: [String]) throws(HarnessError) {
        guard operands.count >= 2 else { throw .usage("write needs DOMAIN KEY VALUE (or DOMAIN '{KEY = VALUE;}'; see \(Tool.command) help write)") }
        let domain = operands[0]
        // The app's installed schema types the value and refuses what the app would (InstalledSchema.swift).
        let schema = try InstalledSchema.find(for: domain)
        if operands.count == 2 {
            // `write DOMAIN PLIST`: the whole domain, as `defaults` does.
            guard case .dictionary(let contents) = try ValueParser.untyped(operands[1]) else {
                throw .failure("to replace the whole domain, give a dictionary such as '{appearance = dark;}'; to store one value, give DOMAIN KEY VALUE")
            }
            try domains.modify(domains.storage(domain), repairing: .moveUnreadableAside) { stored throws(HarnessError) in
                try schema?.refuseChange(from: stored, to: contents)
                stored = contents
            }
            return
        }
        let key = operands[1]
        guard !key.isEmpty else { throw .failure("the key is empty") }
        // After the key: entry names, then the value. The value starts at the first type flag (`-int`,
        // `-array`, or a mistyped `-word`, which ValueParser refuses); without one, it is the last word.
        let rest = operands.dropFirst(2)
        let valueStart = rest.firstIndex { ValueParser.looksLikeTypeFlag($0) } ?? rest.index(before: rest.endIndex)
        let entries = Array(rest[..<valueStart])
        let name = { EntryPath.describe(domain, key, entries) }
        // Everything is parsed before the domain is touched: a malformed value changes nothing.
        let words = Array(rest[valueStart...])
        let change = if let schema { try schema.change(for: key, entries: entries, words: words) } else { try ValueParser.change(from: Arguments(operands: words)) }
        try domains.modify(domains.storage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
            let before = contents[key]
            contents[key] = try EntryPath.updating(entries[...], in: contents[key], name) { existing throws(HarnessError) in
                try change.applied(to: existing, name)
            }
            try schema?.refuseChange(of: key, from: before, to: contents[key])
        }
    }

    /// Moves the value of `old` to `new` in one locked write, so that no reader sees the value under
    /// both keys or under neither. A value under `new` is replaced only when `replacing` (`-f`).
    package func rename(_ old: String, to new: String, in domain: String, replacing: Bool) throws(HarnessError) {
        guard !new.isEmpty else { throw .failure("the new key is empty") }
        // The app's installed schema judges the renamed domain as it judges an import: a collection renamed into
        // a storage key the schema describes must hold what the app would accept there.
        let schema = try InstalledSchema.find(for: domain)
        try domains.modify(domains.existingStorage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
            guard contents[old] != nil else {
                throw .failure("Domain (\(domain)) key (\(old)) not found; nothing was renamed")
            }
            guard replacing || contents[new] == nil || old == new else {
                throw .failure("Domain (\(domain)) key (\(new)) exists; nothing was renamed; add -f to replace it")
            }
            var renamed = contents
            renamed[new] = renamed.removeValue(forKey: old)
            try schema?.refuseChange(from: contents, to: renamed)
            contents = renamed
        }
    }

    package func delete(_ operands: [String]) throws(HarnessError) {
        guard let domain = operands.first else { throw .usage("delete needs DOMAIN, and optionally KEY") }
        guard operands.count >= 2 else {
            // The whole domain: its file goes, under the lock, readable or not, as with `defaults delete`.
            return try domains.remove(DomainReference(domain), named: domain)
        }
        let (key, entries) = (operands[1], Array(operands.dropFirst(2)))
        let name = { EntryPath.describe(domain, key, entries) }
        // What a program reads may come from another layer (a system default, a forced entry): `read` shows it,
        // so a refusal to delete it from the user's file says where it is.
        let elsewhere = { [self] () -> String in
            guard let value = (try? effectiveContentsIfAny(of: domain, reporting: false))??[key],
                  (try? EntryPath.value(at: entries, in: value, name)) != nil else { return "" }
            return " in the user's file; the value a program reads comes from another layer (`\(Tool.command) read --sources "
                + "\(domain) \(key)` shows which)"
        }
        try domains.modify(domains.existingStorage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
            guard contents[key] != nil else {
                throw .failure("Domain (\(domain)) key (\(key)) not found\(elsewhere()); nothing was deleted")
            }
            contents[key] = try EntryPath.updating(entries[...], in: contents[key], name) { existing throws(HarnessError) in
                guard existing != nil else { throw .failure("\(name()) not found\(elsewhere()); nothing was deleted") }
                return nil
            }
        }
    }

    // MARK: Export and import

    package func export(_ domain: String, to path: String, as format: TransferFormat) throws(HarnessError) {
        // Entries whose keys Swift's `String ==` merges with others (`"e\u{301}"` beside `"é"`, written by another
        // program) are kept by every write, but no exported value can hold them: refused, rather than a backup
        // that silently lacks them.
        if let storage = try? domains.storage(domain), let shadowed = try? domains.snapshot(of: storage).shadowed,
           case let count = Self.count(shadowed), count > 0 {
            throw .failure("cannot export \(domain): \(storage.location) holds \(count) \(count == 1 ? "entry" : "entries") whose "
                + "key differs from another's only in Unicode normalization (as \"e\\u{301}\" from \"\\u{e9}\"), which an export "
                + "would drop; copy the file itself instead")
        }
        let bytes = try Self.encoded(.dictionary(effectiveContents(of: domain)), as: format, describing: domain)
        if path == "-" {
            // A failed write is reported when the harness exits (see Console.outputFailure).
            Console.write(bytes)
        } else {
            try replaceRegularFile(at: path, with: bytes, for: "export")
        }
    }

    /// How many entries `shadowed` holds, at every depth.
    static func count(_ shadowed: ShadowedEntries) -> Int {
        shadowed.entries.count + shadowed.children.values.reduce(0) { $0 + count($1) }
    }

    /// `value` in `format`, as a file holds it.
    package static func encoded(_ value: PropertyListValue, as format: TransferFormat, describing what: String) throws(HarnessError) -> Data {
        do {
            switch format {
            case .xml: return try value.xmlPropertyListData()
            case .binary: return try value.binaryPropertyListData()
            case .json: return Data((JSONText.encode(value) + "\n").utf8)
            case .openStep: return Data((PropertyListPrinter.text(value, editable: true) + "\n").utf8)
            }
        } catch {
            throw .failure("cannot export \(what): \(error)")
        }
    }

    package func importDomain(_ domain: String, from path: String) throws(HarnessError) {
        let storage = try domains.storage(domain)
        let source = path == "-" ? "standard input" : path
        // The library's own limit: an import larger than any domain file it reads would be refused
        // anyway, and endless input must not fill the memory first. Only a regular file or standard input
        // is read: a FIFO with no writer would block for ever, and a device may never end.
        let limit = FileDomainStorage.maximumFileSize
        guard let bytes = try PosixIO.readWholeFile(path, atMost: limit, regularOnly: true) else {
            throw .failure("cannot import \(source): it is larger than \(limit) bytes, the largest domain file the library reads")
        }
        let root: PropertyListValue
        do {
            root = try Self.propertyList(bytes)
        } catch {
            throw .failure("cannot import \(source): \(error)")
        }
        guard case .dictionary(let contents) = root else {
            throw .failure("cannot import \(source): its root is \(PropertyListPrinter.typeName(root, article: true)), and a domain must be a dictionary")
        }
        // A deliberate whole replacement: an unreadable domain file is moved aside, never lost. The app's
        // installed schema refuses what the app would, as for write.
        let schema = try InstalledSchema.find(for: domain)
        try domains.modify(storage, repairing: .moveUnreadableAside) { stored throws(HarnessError) in
            try schema?.refuseChange(from: stored, to: contents)
            stored = contents
        }
    }

    /// A property list in a file: binary or XML, as a domain file holds, JSON, or an OpenStep dictionary,
    /// as `defaults` prints and people write. OpenStep is taken only for text that starts with `{`: almost
    /// any text is OpenStep (a lone word is a string), and must not pass for a property list.
    package static func propertyList(_ bytes: Data) throws -> PropertyListValue {
        if JSONText.looksLikeJSON(bytes) {
            do {
                return try JSONText.decode(bytes)
            } catch {
                throw PropertyListCodingError(reason: "not valid JSON (\(error))")
            }
        }
        let start = bytes.first { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains($0) }
        if start == UInt8(ascii: "{") {
            return try ValueParser.propertyListText(String(decoding: bytes, as: UTF8.self))
        }
        return try PropertyListValue(propertyListData: bytes)
    }
}
