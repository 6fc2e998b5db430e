// An app's schema as its package installs it (SPEC §14): `<dir>/RVS_PersistentPrefs/schemas/<domain>.plist` in
// a directory of `$XDG_DATA_DIRS`, the file `prefs.schema.propertyListData()` gives. prefsctl reads it to
// describe the app's entries (list-keys, describe, range), to type the values `write` stores, and to refuse
// what the app would refuse (write, verify), with the library's own constraint check and words.

import Foundation
import RVS_PersistentPrefs

/// What a schema says of one entry.
package struct SchemaEntry: Sendable {
    package let name: String
    /// `string`, `integer`, `real`, `boolean`, `date`, `data`, `array` or `dictionary`; `nil` when the schema
    /// leaves it open (an Optional entry whose default is nothing, a name the app's `keys` lists untyped).
    package let type: String?
    /// The default's stored form; `nil` when the default is stored as nothing.
    package let defaultValue: PropertyListValue?
    /// The range, allowed values and description, as the library checks them.
    package let constraint: EntryConstraint
    /// The names the entry was stored under before (`formerly`): the app reads and allows them.
    package var formerNames: [String] = []
}

/// One domain's installed schema: each storage key it describes, with its entries.
package struct InstalledSchema: Sendable {
    /// The domain the schema is for.
    package let domain: String
    /// The file it was read from, for messages: which of several directories won.
    package let path: String
    /// Storage key → entry name → entry.
    package let collections: [String: [String: SchemaEntry]]

    /// The stored forms a schema's `type` names.
    package static let typeNames: Set<String> = ["string", "integer", "real", "boolean", "date", "data", "array", "dictionary"]

    /// The directory under each data directory where schemas are installed.
    package static let subdirectory = "RVS_PersistentPrefs/schemas"

    /// The data directories, in order: `$XDG_DATA_DIRS`, or `/usr/local/share:/usr/share` when it is unset or
    /// empty, as the XDG Base Directory specification says; relative entries are ignored, as it also says.
    package static func dataDirectories(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let listed = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return listed.isEmpty ? ["/usr/local/share", "/usr/share"] : listed
    }

    /// Where the schema of `domain` may be, in the order they are tried.
    package static func candidates(for domain: String) -> [String] {
        dataDirectories().map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/" + subdirectory + "/" + domain + DomainName.fileExtension }
    }

    /// The schema of the domain `word` names, from the first data directory holding one; `nil` when none does
    /// (or when `word` names the global domain, a file, or no valid domain: no app installs a schema for those),
    /// and the tool then behaves as it did without schemas.
    /// - Throws: A failure naming the file when the first file found cannot be read or is not a schema: a
    ///   broken schema must not silently turn the checks off.
    package static func find(for word: String) throws(HarnessError) -> InstalledSchema? {
        guard DomainName.problem(with: word) == nil, !DomainReference.globalNames.contains(word) else { return nil }
        for path in candidates(for: word) where FileManager.default.fileExists(atPath: path) {
            guard let bytes = try PosixIO.readWholeFile(path, atMost: FileDomainStorage.maximumFileSize, regularOnly: true) else {
                throw .failure("the schema \(path) is larger than a domain file may be; it is not a schema")
            }
            return try InstalledSchema(bytes, domain: word, path: path)
        }
        return nil
    }

    /// The schema of `domain`, which must be installed.
    /// - Throws: A failure saying where it was looked for.
    package static func required(for domain: String) throws(HarnessError) -> InstalledSchema {
        guard let schema = try find(for: domain) else {
            let places = dataDirectories().map { $0 + "/" + subdirectory }.joined(separator: ", ")
            throw .failure("no schema is installed for the domain \(domain): looked for \(domain)\(DomainName.fileExtension) in \(places) ($XDG_DATA_DIRS); the app's package installs it (see Administration in the documentation)")
        }
        return schema
    }

    /// Reads a schema file: a property list whose root maps each storage key to a dictionary of entries.
    init(_ bytes: Data, domain: String, path: String) throws(HarnessError) {
        let root: PropertyListValue
        do {
            root = try PropertyListValue(propertyListData: bytes)
        } catch {
            throw .failure("the schema \(path) is not a property list: \(error)")
        }
        let bad = { (what: String) in HarnessError.failure("the schema \(path) is not one prefsctl can read: \(what)") }
        guard case .dictionary(let keys) = root else { throw bad("its root is not a dictionary of storage keys") }
        var collections: [String: [String: SchemaEntry]] = [:]
        for (key, described) in keys {
            guard case .dictionary(let entries) = described else { throw bad("\(key) is not a dictionary of entries") }
            var parsed: [String: SchemaEntry] = [:]
            for (name, value) in entries {
                guard case .dictionary(let fields) = value else { throw bad("\(key) \(name) is not a dictionary") }
                var type: String?
                if let field = fields["type"] {
                    guard case .string(let text) = field, Self.typeNames.contains(text) else {
                        throw bad("the type of \(key) \(name) is not one of \(Self.typeNames.sorted().joined(separator: ", "))")
                    }
                    type = text
                }
                var range: (lower: PropertyListValue, upper: PropertyListValue)?
                if let field = fields["range"] {
                    guard case .array(let bounds) = field, bounds.count == 2, let lower = EntryConstraint.number(bounds[0]),
                          let upper = EntryConstraint.number(bounds[1]), lower <= upper else {
                        throw bad("the range of \(key) \(name) is not two numbers, the lower first")
                    }
                    range = (bounds[0], bounds[1])
                }
                var allowed: [PropertyListValue]?
                if let field = fields["allowed"] {
                    guard case .array(let values) = field else { throw bad("the allowed values of \(key) \(name) are not an array") }
                    allowed = values
                }
                var description: String?
                if let field = fields["description"] {
                    guard case .string(let text) = field else { throw bad("the description of \(key) \(name) is not a string") }
                    description = text
                }
                var formerNames: [String] = []
                if let field = fields["formerly"] {
                    guard case .array(let names) = field else { throw bad("the former names of \(key) \(name) are not an array") }
                    for case .string(let text) in names { formerNames.append(text) }
                    guard formerNames.count == names.count else { throw bad("the former names of \(key) \(name) are not all strings") }
                }
                parsed[name] = SchemaEntry(name: name, type: type, defaultValue: fields["default"],
                                           constraint: EntryConstraint(range: range, allowed: allowed, description: description),
                                           formerNames: formerNames)
            }
            collections[key] = parsed
        }
        (self.domain, self.path, self.collections) = (domain, path, collections)
    }

    /// Where the schema came from, for messages.
    var origin: String { "the schema of \(domain) (\(path))" }

    /// The entries of the collection under `key`.
    /// - Throws: A failure listing the storage keys the schema describes, when it does not describe `key`.
    package func collection(_ key: String) throws(HarnessError) -> [String: SchemaEntry] {
        guard let entries = collections[key] else {
            throw .failure("\(origin) describes no storage key \(key); it describes \(collections.keys.sorted().joined(separator: ", "))")
        }
        return entries
    }

    /// The entry `name` of the collection under `key`.
    /// - Throws: A failure listing the entries, when there is no such entry.
    package func entry(_ key: String, _ name: String) throws(HarnessError) -> SchemaEntry {
        let entries = try collection(key)
        guard let entry = entries[name] ?? Self.formerEntry(name, in: entries) else {
            throw .failure("\(origin) has no entry \(name) in \(key); its entries are \(entries.keys.sorted().joined(separator: ", "))")
        }
        return entry
    }

    /// A former name of one of `entries` (`formerly`), as an entry of its own: the app allows it and reads its
    /// value as the renamed entry, through a conversion the schema does not describe, so it has no type and no
    /// constraint here.
    static func formerEntry(_ name: String, in entries: [String: SchemaEntry]) -> SchemaEntry? {
        guard let renamed = entries.values.first(where: { $0.formerNames.contains(name) }) else { return nil }
        return SchemaEntry(name: name, type: nil, defaultValue: nil,
                           constraint: EntryConstraint(range: nil, allowed: nil, description: "the name \(renamed.name) was stored under before"))
    }

    // MARK: Judging values

    /// Why the stored form `value` does not fit `entry`: a wrong type, or a broken range or allowed list, in the
    /// library's words; `nil` when it fits. Numbers fit as the library decodes them: any number for a real, a
    /// whole number (an integral real too) for an integer.
    package static func problem(with value: PropertyListValue, for entry: SchemaEntry) -> String? {
        if let type = entry.type, !fits(value, type) {
            return "it must be \(article(type)) \(type), not \(PropertyListPrinter.typeName(value, article: true))"
        }
        return entry.constraint.violation(by: value)
    }

    private static func fits(_ value: PropertyListValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("date", .date), ("data", .data), ("array", .array), ("dictionary", .dictionary):
            return true
        case ("integer", .integer), ("integer", .unsignedInteger):
            return true
        case ("integer", .real(let x)):
            return Int(exactly: x) != nil
        case ("integer", .float(let x)):
            return Int(exactly: x) != nil
        case ("real", _):
            return EntryConstraint.number(value) != nil
        default:
            return false
        }
    }

    static func article(_ type: String) -> String { "aeiou".contains(type.first ?? "x") ? "an" : "a" }

    /// The problems of the collection under `key` when it holds `after`, for the entries `names` (each entry
    /// when `nil`): one line each, `KEY ENTRY: reason`. Nothing when the schema does not describe `key`.
    func problems(ofCollection key: String, _ after: PropertyListValue?, entries names: [String]? = nil) -> [String] {
        guard let described = collections[key], let after else { return [] }
        guard case .dictionary(let entries) = after else {
            return ["\(key): it must be a dictionary of entries, not \(PropertyListPrinter.typeName(after, article: true))"]
        }
        var problems: [String] = []
        for name in (names ?? Array(entries.keys)).sorted() {
            guard let value = entries[name] else { continue }
            guard let entry = described[name] ?? Self.formerEntry(name, in: described) else {
                problems.append("\(key) \(name): the app has no such entry (its entries are \(described.keys.sorted().joined(separator: ", ")))")
                continue
            }
            if let reason = Self.problem(with: value, for: entry) { problems.append("\(key) \(name): \(reason)") }
        }
        return problems
    }

    /// Refuses a write that changes the collection under `key` from `before` to `after` into one the app
    /// would refuse: judged are the entries the write sets, as the library judges its own writes.
    /// - Throws: A failure naming the entry and the constraint; nothing is written.
    package func refuseChange(of key: String, from before: PropertyListValue?, to after: PropertyListValue?) throws(HarnessError) {
        let old = before?.dictionaryValue ?? [:]
        let changed = after?.dictionaryValue.map { entries in entries.filter { old[$0.key]?.isIdentical(to: $0.value) != true }.map(\.key) }
        if let problem = problems(ofCollection: key, after, entries: changed ?? []).first {
            throw .failure("refused by \(origin): \(problem); nothing was written")
        }
    }

    /// Refuses a write of a whole domain, from `before` to `after`: each collection the schema describes.
    package func refuseChange(from before: [String: PropertyListValue], to after: [String: PropertyListValue]) throws(HarnessError) {
        for key in after.keys.sorted() { try refuseChange(of: key, from: before[key], to: after[key]) }
    }

    /// Every problem of a whole file's contents: what `verify` reports.
    package func problems(in contents: [String: PropertyListValue]) -> [String] {
        contents.keys.sorted().flatMap { problems(ofCollection: $0, contents[$0]) }
    }

    // MARK: Typing a written value

    /// The change that `words` (the value after `write DOMAIN KEY ENTRY...`) make, typed from the schema: a
    /// word without a type flag becomes the entry's type (`port 7777` an integer), and a type flag that
    /// contradicts it is refused. Written as before when the schema does not describe `key`, when `entries`
    /// is empty (the whole collection) or goes deeper than one entry, or when the entry's type is open.
    /// - Throws: A failure when the entry is not in the schema, or the value does not read as its type.
    package func change(for key: String, entries: [String], words: [String]) throws(HarnessError) -> Change {
        guard collections[key] != nil, let first = entries.first else { return try ValueParser.change(from: Arguments(operands: words)) }
        let entry = try self.entry(key, first)
        guard entries.count == 1, let type = entry.type, let word = words.first else {
            return try ValueParser.change(from: Arguments(operands: words))
        }
        let refuse = { (reason: String) in HarnessError.failure("refused by \(origin): \(key) \(first): \(reason); nothing was written") }
        if ValueParser.looksLikeTypeFlag(word) {
            if let flagged = Self.flagTypes[word], flagged != type {
                throw refuse("it is \(Self.article(type)) \(type), and \(word) gives \(Self.article(flagged)) \(flagged); leave the type out, and the schema's is used")
            }
            return try ValueParser.change(from: Arguments(operands: words))
        }
        guard words.count == 1 else { return try ValueParser.change(from: Arguments(operands: words)) }
        let trimmed = word.trimmingCharacters(in: .whitespaces)
        let quoted = PropertyListPrinter.quoted(word)
        switch type {
        case "string":
            return .set(.string(word))
        case "integer":
            guard let integer = Int(trimmed) else { throw refuse("it must be a whole number, not \(quoted)") }
            return .set(.integer(integer))
        case "real":
            guard let real = Double(trimmed), real.isFinite else { throw refuse("it must be a number such as 0.5, not \(quoted)") }
            return .set(.real(real))
        case "boolean":
            switch trimmed.lowercased() {
            case "true", "yes", "1": return .set(.bool(true))
            case "false", "no", "0": return .set(.bool(false))
            default: throw refuse("it must be true, false, yes, no, 1 or 0, not \(quoted)")
            }
        case "date":
            guard let date = ValueParser.date(word) else { throw refuse("it must be a date such as '2024-05-01 12:30:00 +0000', not \(quoted)") }
            return .set(.date(date))
        case "data":
            guard let data = ValueParser.hexData(word) else { throw refuse("it must be hex digits such as 0a0b0c, not \(quoted)") }
            return .set(.data(data))
        default:  // array, dictionary: property-list text, judged with the rest under the lock.
            return .set(try ValueParser.untyped(word))
        }
    }

    /// The type each type flag of `write` gives.
    static let flagTypes: [String: String] = [
        "-string": "string", "-int": "integer", "-integer": "integer", "-float": "real", "-bool": "boolean", "-boolean": "boolean",
        "-date": "date", "-data": "data", "-array": "array", "-array-add": "array", "-dict": "dictionary", "-dict-add": "dictionary",
    ]
}
