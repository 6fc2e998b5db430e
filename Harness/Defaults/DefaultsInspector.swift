// `harness defaults`: domain files inspected and edited in the manner of the macOS `defaults` command.
//
// This file holds the verbs; DomainDirectory reaches the domains, ValueParser reads the values typed on
// the command line, and PropertyListPrinter prints values as `defaults` does.

import Foundation
import RVS_PersistentPrefs

enum DefaultsInspector: Subcommand {
    static let name = "defaults"
    static let summary = "read and write domain files, like the macOS `defaults` command"

    static let usage = """
        usage: harness defaults [--directory PATH] VERB [ARGUMENTS...]

        Reads and edits defaults domains (property-list files) the way the macOS `defaults` command does,
        through the same storage type the library uses: every change is a read-modify-write under the
        domain's lock, written to a temporary file and renamed into place, so a running app loses nothing.

        Verbs:
          domains                            the names of the domains in the directory
          read                               every domain, with all its keys
          read DOMAIN                        every key of DOMAIN
          read DOMAIN KEY                    one value
          read-type DOMAIN KEY               the type of one value
          write DOMAIN KEY VALUE             stores VALUE: property-list text such as '{appearance = dark;}'
                                             or '(a, b)'; any other text is stored as a string
          write DOMAIN KEY -TYPE VALUE       stores a typed value; TYPE is one of string, int, float, bool,
                                             date (2024-05-01 12:30:00 +0000) or data (hex digits)
          write DOMAIN KEY -array ITEM...    an array; each ITEM is VALUE or -TYPE VALUE
          write DOMAIN KEY -array-add ITEM...  appends to an array
          write DOMAIN KEY -dict KEY ITEM... a dictionary; -dict-add adds entries to one
          write DOMAIN '{KEY = VALUE; ...}'  replaces the whole domain with a dictionary
          rename DOMAIN OLD NEW              moves the value of OLD to the key NEW, in one write
          delete DOMAIN                      removes DOMAIN: its file, so that domains no longer lists it
          delete DOMAIN KEY                  removes one key
          find WORD                          every key, in every domain, whose name or value contains
                                             WORD, ignoring case
          export DOMAIN PATH|-               writes DOMAIN as an XML property list to PATH (a new file,
                                             mode 0600, or a regular file, keeping its mode) or standard output
          import DOMAIN PATH|-               replaces DOMAIN's contents with a binary, XML or OpenStep
                                             property list read from PATH or standard input (at most
                                             \(FileDomainStorage.maximumFileSize >> 20) MiB, the largest domain file)
          help                               this text

        DOMAIN is a domain name (its file is DOMAIN.plist), or -g (also NSGlobalDomain) for the global
        domain, whose file is .GlobalPreferences.plist.

        The directory is --directory PATH; otherwise the one the library uses: $RVS_PREFS_DIRECTORY when
        set, else $XDG_CONFIG_HOME/RVS_PersistentPrefs, else ~/.config/RVS_PersistentPrefs. Group suites
        live in their group container: point --directory there to inspect them.

        OpenStep text has no numbers or Booleans: '{count = 5;}' stores the string "5". Use -int, -bool,
        -dict and the other types for typed values. Booleans read back as 1 and 0, as in `defaults`;
        read-type tells them apart.

        Examples:
          harness defaults write com.example.app appearance dark
          harness defaults write com.example.app launchCount -int 3
          harness defaults write -g AppleLanguages -array en fr
          harness defaults read com.example.app
          harness defaults export com.example.app - | python3 -c 'import plistlib, sys; print(plistlib.load(sys.stdin.buffer))'
        """

    /// The verbs, for the messages about a missing or unknown one.
    static let verbs = "domains, read, read-type, write, rename, delete, find, export, import, help"

    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        let directory = context.directory ?? DefaultsLocations.preferencesDirectory()
        try DomainInspector(domains: DomainDirectory(path: directory)).execute(arguments)
    }

    /// Runs one inspector command on the domains in `directory` (the demos call this directly).
    static func execute(_ arguments: [String], directory: String) throws(HarnessError) {
        try DomainInspector(domains: DomainDirectory(path: directory)).execute(Arguments(operands: arguments))
    }
}

/// The `defaults` verbs over the domains of one directory.
struct DomainInspector {
    let domains: DomainDirectory

    func execute(_ arguments: Arguments) throws(HarnessError) {
        var arguments = arguments
        let verb = try arguments.next(orComplain: "a verb is needed: \(DefaultsInspector.verbs) (see --help)")
        let operands = arguments.rest()
        switch verb {
        case "domains":
            guard operands.isEmpty else { throw .usage("domains takes no arguments") }
            listDomains()
        case "read":
            try read(operands)
        case "read-type":
            guard operands.count == 2 else { throw .usage("read-type needs DOMAIN KEY") }
            Console.say("Type is \(PropertyListPrinter.typeName(try domains.value(operands[1], in: operands[0])))")
        case "write":
            try write(operands)
        case "rename":
            guard operands.count == 3 else { throw .usage("rename needs DOMAIN OLD_KEY NEW_KEY") }
            try rename(operands[1], to: operands[2], in: operands[0])
        case "delete":
            try delete(operands)
        case "find":
            guard operands.count == 1 else { throw .usage("find needs one WORD") }
            try find(operands[0])
        case "export":
            guard operands.count == 2 else { throw .usage("export needs DOMAIN and PATH (or - for standard output)") }
            try export(operands[0], to: operands[1])
        case "import":
            guard operands.count == 2 else { throw .usage("import needs DOMAIN and PATH (or - for standard input)") }
            try importDomain(operands[0], from: operands[1])
        case "help":
            guard operands.isEmpty else { throw .usage("help takes no arguments") }
            Console.say(DefaultsInspector.usage)
        default:
            throw .usage("unknown verb '\(verb)'; the verbs are \(DefaultsInspector.verbs)")
        }
    }

    func listDomains() {
        let names = domains.domainNames()
        if names.isEmpty {
            Console.complain("harness defaults: no domains in \(domains.path)")
        } else {
            Console.say(names.joined(separator: ", "))
        }
    }

    // MARK: Reading

    func read(_ operands: [String]) throws(HarnessError) {
        switch operands.count {
        case 0:
            try readEverything()
        case 1:
            Console.say(PropertyListPrinter.text(.dictionary(try domains.contents(of: operands[0]))))
        case 2:
            Console.say(PropertyListPrinter.topLevelText(try domains.value(operands[1], in: operands[0])))
        default:
            throw .usage("read takes at most DOMAIN and KEY")
        }
    }

    /// Every domain as one dictionary keyed by domain name, as `defaults read` prints it.
    func readEverything() throws(HarnessError) {
        var everything: [String: PropertyListValue] = [:]
        try forEachDomain { name, contents in everything[name] = .dictionary(contents) }
        Console.say(PropertyListPrinter.text(.dictionary(everything)))
    }

    /// Every key of every domain whose name or value contains `word`, ignoring case, printed domain by
    /// domain as `defaults find` prints them; a domain whose name contains `word` matches whole.
    func find(_ word: String) throws(HarnessError) {
        var found = false
        try forEachDomain { name, contents in
            let matches = Self.contains(name, word) ? contents : contents.filter { key, value in
                Self.contains(key, word) || Self.contains(value, word)
            }
            guard !matches.isEmpty else { return }
            found = true
            Console.say("Found \(matches.count) keys in domain '\(name)': " + PropertyListPrinter.text(.dictionary(matches)))
        }
        if !found { Console.say("No domain, key, nor value containing '\(word)'") }
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

    /// Calls `body` with the contents of every domain. An unreadable file does not hide the others: it
    /// is reported on its own line after them, and the exit status is 1.
    private func forEachDomain(_ body: (String, [String: PropertyListValue]) -> Void) throws(HarnessError) {
        var unreadable: [String] = []
        for name in domains.everyDomain() {
            do {
                body(name, try domains.contents(of: domains.storage(name)))
            } catch {
                unreadable.append(error.message)
            }
        }
        guard let last = unreadable.popLast() else { return }
        for message in unreadable { Console.complain("harness defaults: \(message)") }
        throw .failure(last)
    }

    // MARK: Writing

    func write(_ operands: [String]) throws(HarnessError) {
        guard operands.count >= 2 else { throw .usage("write needs DOMAIN KEY VALUE (or DOMAIN '{KEY = VALUE;}')") }
        let domain = operands[0]
        if operands.count == 2 {
            // `write DOMAIN PLIST`: the whole domain, as `defaults` does.
            guard case .dictionary(let contents) = try ValueParser.untyped(operands[1]) else {
                throw .failure("to replace the whole domain, give a dictionary such as '{appearance = dark;}'; to store one value, give DOMAIN KEY VALUE")
            }
            try domains.modify(domains.storage(domain), repairing: .moveUnreadableAside) { $0 = contents }
            return
        }
        let key = operands[1]
        guard !key.isEmpty else { throw .failure("the key is empty") }
        // Everything is parsed before the domain is touched: a malformed value changes nothing.
        let change = try ValueParser.change(from: Arguments(operands: Array(operands.dropFirst(2))))
        try domains.modify(domains.storage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
            switch change {
            case .set(let value):
                contents[key] = value
            case .appendToArray(let elements):
                switch contents[key] {
                case nil: contents[key] = .array(elements)
                case .array(let existing)?: contents[key] = .array(existing + elements)
                case let other?: throw .failure("cannot add to (\(domain), \(key)): it holds a \(PropertyListPrinter.typeName(other)), not an array")
                }
            case .addToDictionary(let entries):
                switch contents[key] {
                case nil: contents[key] = .dictionary(entries)
                case .dictionary(let existing)?: contents[key] = .dictionary(existing.merging(entries) { _, new in new })
                case let other?: throw .failure("cannot add to (\(domain), \(key)): it holds a \(PropertyListPrinter.typeName(other)), not a dictionary")
                }
            }
        }
    }

    /// Moves the value of `old` to `new` (replacing what `new` held, as `defaults rename` does) in one
    /// locked write, so that no reader sees the value under both keys or under neither.
    func rename(_ old: String, to new: String, in domain: String) throws(HarnessError) {
        guard !new.isEmpty else { throw .failure("the new key is empty") }
        try domains.modify(domains.existingStorage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
            guard let value = contents.removeValue(forKey: old) else {
                throw .failure("Domain (\(domain)) key (\(old)) not found; nothing was renamed")
            }
            contents[new] = value
        }
    }

    func delete(_ operands: [String]) throws(HarnessError) {
        switch operands.count {
        case 1:
            // The whole domain: its file goes, under the lock, readable or not, as with `defaults delete`.
            try domains.remove(operands[0])
        case 2:
            let (domain, key) = (operands[0], operands[1])
            try domains.modify(domains.existingStorage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
                guard contents.removeValue(forKey: key) != nil else {
                    throw .failure("Domain (\(domain)) key (\(key)) not found; nothing was deleted")
                }
            }
        default:
            throw .usage("delete needs DOMAIN, and optionally KEY")
        }
    }

    // MARK: Export and import

    func export(_ domain: String, to path: String) throws(HarnessError) {
        let contents = try domains.contents(of: domain)
        let xml: Data
        do {
            xml = try PropertyListValue.dictionary(contents).xmlPropertyListData()
        } catch {
            throw .failure("cannot export \(domain): \(error)")
        }
        if path == "-" {
            // A failed write is reported when the harness exits (see Console.outputFailure).
            Console.write(xml)
        } else {
            try replaceRegularFile(at: path, with: xml, for: "export")
        }
    }

    func importDomain(_ domain: String, from path: String) throws(HarnessError) {
        let storage = try domains.storage(domain)
        let source = path == "-" ? "standard input" : path
        // The library's own limit: an import larger than any domain file it reads would be refused
        // anyway, and endless input (/dev/zero) must not fill the memory first.
        let limit = FileDomainStorage.maximumFileSize
        guard let bytes = try PosixIO.readWholeFile(path, atMost: limit) else {
            throw .failure("cannot import \(source): it is larger than \(limit) bytes, the largest domain file the library reads")
        }
        let root: PropertyListValue
        do {
            root = try Self.propertyList(bytes)
        } catch {
            throw .failure("cannot import \(source): \(error)")
        }
        guard case .dictionary(let contents) = root else {
            throw .failure("cannot import \(source): its root is a \(PropertyListPrinter.typeName(root)), and a domain must be a dictionary")
        }
        // A deliberate whole replacement: an unreadable domain file is moved aside, never lost.
        try domains.modify(storage, repairing: .moveUnreadableAside) { $0 = contents }
    }

    /// A property list in a file: binary or XML, as a domain file holds, or an OpenStep dictionary, as
    /// `defaults` prints and people write. OpenStep is taken only for text that starts with `{`: almost
    /// any text is OpenStep (a lone word is a string), and must not pass for a property list.
    static func propertyList(_ bytes: Data) throws(PropertyListCodingError) -> PropertyListValue {
        let start = bytes.first { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains($0) }
        if start == UInt8(ascii: "{") {
            return try ValueParser.propertyListText(String(decoding: bytes, as: UTF8.self))
        }
        return try PropertyListValue(propertyListData: bytes)
    }
}
