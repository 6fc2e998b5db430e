// `harness defaults`: domain files inspected and edited in the manner of the macOS `defaults` command.
//
// Everything goes through FileDomainStorage, the type the library itself stores with: reads take a fresh
// snapshot, and every change is one read-modify-write under the domain's lock, written to a temporary
// file and renamed over the old one. So the inspector can be used on the files of a running app without
// tearing them or losing the app's concurrent writes, and it refuses bad names and values the same way.

import Foundation
import Glibc
import RVS_PersistentPrefs

enum DefaultsInspector {
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
          delete DOMAIN                      removes every key of DOMAIN
          delete DOMAIN KEY                  removes one key
          export DOMAIN PATH|-               writes DOMAIN as an XML property list to PATH or standard output
          import DOMAIN PATH|-               replaces DOMAIN's contents with a binary or XML property list
                                             read from PATH or standard input

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

    /// The entry point of `harness defaults`.
    static func run(_ arguments: [String], _ context: HarnessContext) throws {
        try DomainInspector(directory: context.directory ?? DefaultsLocations.preferencesDirectory()).execute(arguments)
    }

    /// Runs one inspector command on the domains in `directory` (the tour calls this directly).
    static func execute(_ arguments: [String], directory: String) throws(HarnessError) {
        try DomainInspector(directory: directory).execute(arguments)
    }
}

/// The `defaults` verbs over the domains of one directory.
struct DomainInspector {
    let directory: String

    /// What `read` prints for the global domain, and what may name it besides `-g`.
    static let globalDomainDisplayName = "NSGlobalDomain"

    func execute(_ arguments: [String]) throws(HarnessError) {
        guard let verb = arguments.first else {
            throw .usage("a verb is needed: domains, read, read-type, write, delete, export or import (see --help)")
        }
        let operands = Array(arguments.dropFirst())
        switch verb {
        case "domains":
            guard operands.isEmpty else { throw .usage("domains takes no arguments") }
            listDomains()
        case "read":
            try read(operands)
        case "read-type":
            guard operands.count == 2 else { throw .usage("read-type needs DOMAIN KEY") }
            let value = try existingValue(operands[1], in: operands[0])
            Console.say("Type is \(PropertyListPrinter.typeName(value))")
        case "write":
            try write(operands)
        case "delete":
            try delete(operands)
        case "export":
            guard operands.count == 2 else { throw .usage("export needs DOMAIN and PATH (or - for standard output)") }
            try export(operands[0], to: operands[1])
        case "import":
            guard operands.count == 2 else { throw .usage("import needs DOMAIN and PATH (or - for standard input)") }
            try importDomain(operands[0], from: operands[1])
        default:
            throw .usage("unknown verb '\(verb)'; the verbs are domains, read, read-type, write, delete, export, import")
        }
    }

    // MARK: Domains

    /// The file name of a domain as the user names it: `-g` and `NSGlobalDomain` mean the global domain.
    static func fileName(of domain: String) -> String {
        ["-g", "-globalDomain", globalDomainDisplayName].contains(domain) ? DefaultsLocations.globalDomainName : domain
    }

    /// The storage of `domain`, whether or not its file exists.
    /// - Throws: When the name cannot be one file name (the library's own rule), before anything is touched.
    func storage(_ domain: String) throws(HarnessError) -> any DomainStorage {
        let name = Self.fileName(of: domain)
        if let problem = DomainName.problem(with: name) { throw .failure("cannot use the domain: \(problem)") }
        do {
            return try FileDomainStorage.shared(directory: directory, name: name)
        } catch {
            throw .failure("cannot use the domain: \(error)")
        }
    }

    /// The storage of `domain`, whose file must exist: reading, deleting or exporting a domain that does
    /// not exist is an error, as in `defaults`, and must not create anything.
    func existingStorage(_ domain: String) throws(HarnessError) -> any DomainStorage {
        let storage = try storage(domain)
        guard FileManager.default.fileExists(atPath: storage.location) else {
            throw .failure("Domain \(domain) does not exist in \(directory)")
        }
        return storage
    }

    func snapshot(of storage: any DomainStorage) throws(HarnessError) -> [String: PropertyListValue] {
        do {
            return try storage.snapshot().contents
        } catch {
            throw .failure(error.description)
        }
    }

    /// The domains with a file in the directory, by name; the global domain and the harness's hidden
    /// temporary files start with a dot and are left out, as `defaults domains` leaves out the global one.
    func domainNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            guard name.hasSuffix(DomainName.fileExtension), !name.hasPrefix(".") else { return false }
            var info = stat()
            return lstat(directory + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }.map { String($0.dropLast(DomainName.fileExtension.count)) }.sorted()
    }

    func listDomains() {
        let names = domainNames()
        if names.isEmpty {
            Console.complain("harness defaults: no domains in \(directory)")
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
            let contents = try snapshot(of: existingStorage(operands[0]))
            Console.say(PropertyListPrinter.text(.dictionary(contents)))
        case 2:
            Console.say(PropertyListPrinter.topLevelText(try existingValue(operands[1], in: operands[0])))
        default:
            throw .usage("read takes at most DOMAIN and KEY")
        }
    }

    func existingValue(_ key: String, in domain: String) throws(HarnessError) -> PropertyListValue {
        guard let value = try snapshot(of: existingStorage(domain))[key] else {
            throw .failure("The domain/default pair of (\(domain), \(key)) does not exist")
        }
        return value
    }

    /// Every domain as one dictionary keyed by domain name, as `defaults read` prints it. An unreadable
    /// file does not hide the others: it is reported on its own line, and the exit status is 1.
    func readEverything() throws(HarnessError) {
        var everything: [String: PropertyListValue] = [:]
        var unreadable: [String] = []
        var names = domainNames()
        if FileManager.default.fileExists(atPath: directory + "/" + DefaultsLocations.globalDomainName + DomainName.fileExtension) {
            names.append(Self.globalDomainDisplayName)
        }
        for name in names {
            do {
                everything[name] = .dictionary(try snapshot(of: storage(name)))
            } catch {
                unreadable.append(error.message)
            }
        }
        Console.say(PropertyListPrinter.text(.dictionary(everything)))
        guard unreadable.isEmpty else {
            for message in unreadable.dropLast() { Console.complain("harness defaults: \(message)") }
            throw .failure(unreadable.last!)
        }
    }

    // MARK: Writing

    /// What a `write` does to the stored value of one key.
    enum Change {
        case set(PropertyListValue)
        case appendToArray([PropertyListValue])
        case addToDictionary([String: PropertyListValue])
    }

    func write(_ operands: [String]) throws(HarnessError) {
        guard operands.count >= 2 else { throw .usage("write needs DOMAIN KEY VALUE (or DOMAIN '{KEY = VALUE;}')") }
        let domain = operands[0]
        if operands.count == 2 {
            // `write DOMAIN PLIST`: the whole domain, as `defaults` does.
            guard case .dictionary(let contents) = try ValueParser.untyped(operands[1]) else {
                throw .failure("to replace the whole domain, give a dictionary such as '{appearance = dark;}'; to store one value, give DOMAIN KEY VALUE")
            }
            try modify(storage(domain), repairing: .moveUnreadableAside) { $0 = contents }
            return
        }
        let key = operands[1]
        guard !key.isEmpty else { throw .failure("the key is empty") }
        // Everything is parsed before the domain is touched: a malformed value changes nothing.
        let change = try ValueParser.change(from: Array(operands.dropFirst(2)))
        let storage = try storage(domain)
        try modify(storage, repairing: .failIfUnreadable) { contents throws(HarnessError) in
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

    func delete(_ operands: [String]) throws(HarnessError) {
        switch operands.count {
        case 1:
            // The whole domain, deliberately: an unreadable file is moved aside (never deleted) rather than
            // blocking the deletion. The file stays, empty, since the storage type never removes files.
            try modify(existingStorage(operands[0]), repairing: .moveUnreadableAside) { $0 = [:] }
        case 2:
            let (domain, key) = (operands[0], operands[1])
            try modify(existingStorage(domain), repairing: .failIfUnreadable) { contents throws(HarnessError) in
                guard contents.removeValue(forKey: key) != nil else {
                    throw .failure("Domain (\(domain)) key (\(key)) not found; nothing was deleted")
                }
            }
        default:
            throw .usage("delete needs DOMAIN, and optionally KEY")
        }
    }

    func export(_ domain: String, to path: String) throws(HarnessError) {
        let contents = try snapshot(of: existingStorage(domain))
        let xml: Data
        do {
            xml = try PropertyListValue.dictionary(contents).xmlPropertyListData()
        } catch {
            throw .failure("cannot export \(domain): \(error)")
        }
        if path == "-" {
            Console.write(xml)
        } else {
            try writeFileAtomically(xml, to: path)
        }
    }

    func importDomain(_ domain: String, from path: String) throws(HarnessError) {
        let storage = try storage(domain)
        let bytes = try readWholeFile(path)
        let source = path == "-" ? "standard input" : path
        let root: PropertyListValue
        do {
            root = try PropertyListValue(propertyListData: bytes)
        } catch {
            throw .failure("cannot import \(source): \(error)")
        }
        guard case .dictionary(let contents) = root else {
            throw .failure("cannot import \(source): its root is a \(PropertyListPrinter.typeName(root)), and a domain must be a dictionary")
        }
        // A deliberate whole replacement: an unreadable domain file is moved aside, never lost.
        try modify(storage, repairing: .moveUnreadableAside) { $0 = contents }
    }

    /// One locked read-modify-write of `storage`. `transform` may throw a ``HarnessError`` to write nothing.
    func modify(
        _ storage: any DomainStorage,
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(HarnessError) -> Void
    ) throws(HarnessError) {
        var refusal: HarnessError?
        do throws(PrefsError) {
            try storage.modify(repairing: policy) { (contents: inout [String: PropertyListValue]) throws(PrefsError) in
                do throws(HarnessError) {
                    try transform(&contents)
                } catch {
                    refusal = error
                    throw PrefsError.unknownError(error: error)
                }
            }
        } catch {
            throw refusal ?? .failure(error.description)
        }
    }

    /// Writes `data` to a temporary file beside `path` and renames it into place, so that a reader of
    /// `path` never sees half an export.
    func writeFileAtomically(_ data: Data, to path: String) throws(HarnessError) {
        let temporary = path + ".harness-\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0o644)
        guard descriptor >= 0 else { throw .failure("cannot write \(path): \(systemMessage(errno))") }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw .failure("cannot write \(path): \(systemMessage(failure))")
        }
    }
}

/// Values given on the command line, as `defaults write` takes them.
enum ValueParser {
    /// The typed forms of a scalar: `-string`, `-int`, `-float`, `-bool`, `-date`, `-data` (and the
    /// long spellings `defaults` also accepts).
    static let scalarTypes: Set<String> = ["-string", "-int", "-integer", "-float", "-bool", "-boolean", "-date", "-data"]

    /// The change that the arguments after `write DOMAIN KEY` describe.
    static func change(from arguments: [String]) throws(HarnessError) -> DomainInspector.Change {
        let flag = arguments[0]
        let rest = Array(arguments.dropFirst())
        switch flag {
        case "-array":
            return .set(.array(try items(rest)))
        case "-array-add":
            return .appendToArray(try items(rest))
        case "-dict":
            return .set(.dictionary(try entries(rest)))
        case "-dict-add":
            return .addToDictionary(try entries(rest))
        case _ where scalarTypes.contains(flag):
            guard rest.count == 1 else { throw .usage("\(flag) takes exactly one value") }
            return .set(try scalar(flag, rest[0]))
        case _ where flag.hasPrefix("-") && flag.dropFirst().first?.isLetter == true:
            // A lone `-word` is a mistyped type far more often than a value; text starting with `-` can
            // still be stored with -string.
            throw .usage("unknown type '\(flag)'; the types are -string -int -float -bool -date -data -array -array-add -dict -dict-add (use -string to store text starting with -)")
        default:
            guard arguments.count == 1 else {
                throw .usage("too many values; quote a value with spaces, or give a type such as -array")
            }
            return .set(try untyped(flag))
        }
    }

    /// A value without a type flag: property-list text, else the text itself as a string (what the
    /// library's argument domain does, see `DefaultsSuite.parseArgumentValue`). Text that clearly means
    /// to be a property list (it starts with `{`, `(`, `<` or `"`) must parse, so that a typo is
    /// reported instead of being stored verbatim.
    static func untyped(_ text: String) throws(HarnessError) -> PropertyListValue {
        let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        if let first = trimmed.first, "{(<\"".contains(first) {
            do {
                return try parsePropertyListText(text)
            } catch {
                throw .failure("the value \(PropertyListPrinter.quoted(text)) is not valid property-list text (\(error)); to store it as a string, use -string")
            }
        }
        return withStandardErrorSilenced { DefaultsSuite.parseArgumentValue(text) }
    }

    /// A typed scalar: `-int 5`, `-bool YES`, `-date '2024-05-01 12:30:00 +0000'`, `-data 0a0b0c`.
    static func scalar(_ type: String, _ text: String) throws(HarnessError) -> PropertyListValue {
        switch type {
        case "-string":
            return .string(text)
        case "-int", "-integer":
            guard let integer = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw .failure("\(type) needs a whole number between \(Int.min) and \(Int.max), not \(PropertyListPrinter.quoted(text))")
            }
            return .integer(integer)
        case "-float":
            guard let real = Double(text.trimmingCharacters(in: .whitespaces)), real.isFinite else {
                throw .failure("-float needs a finite number such as 0.5, not \(PropertyListPrinter.quoted(text))")
            }
            return .real(real)
        case "-bool", "-boolean":
            switch text.lowercased() {
            case "yes", "true", "1": return .bool(true)
            case "no", "false", "0": return .bool(false)
            default: throw .failure("\(type) needs YES, NO, TRUE, FALSE, 1 or 0, not \(PropertyListPrinter.quoted(text))")
            }
        case "-date":
            guard let date = date(text) else {
                throw .failure("-date needs a date such as '2024-05-01 12:30:00 +0000' or 2024-05-01T12:30:00Z, not \(PropertyListPrinter.quoted(text))")
            }
            return .date(date)
        case "-data":
            guard let data = hexData(text) else {
                throw .failure("-data needs an even number of hex digits such as 0a0b0c, not \(PropertyListPrinter.quoted(text))")
            }
            return .data(data)
        default:
            throw .usage("unknown type '\(type)'")
        }
    }

    /// The items of `-array`: each one untyped, or a scalar type flag and its value.
    static func items(_ arguments: [String]) throws(HarnessError) -> [PropertyListValue] {
        var values: [PropertyListValue] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if scalarTypes.contains(argument) {
                guard index + 1 < arguments.count else { throw .usage("\(argument) needs a value after it") }
                values.append(try scalar(argument, arguments[index + 1]))
                index += 2
            } else {
                values.append(try untyped(argument))
                index += 1
            }
        }
        return values
    }

    /// The entries of `-dict`: a key, then an item as in ``items(_:)``, repeated.
    static func entries(_ arguments: [String]) throws(HarnessError) -> [String: PropertyListValue] {
        var result: [String: PropertyListValue] = [:]
        var index = 0
        while index < arguments.count {
            let key = arguments[index]
            guard index + 1 < arguments.count else { throw .usage("-dict needs a value after the key \(PropertyListPrinter.quoted(key))") }
            let next = arguments[index + 1]
            if scalarTypes.contains(next) {
                guard index + 2 < arguments.count else { throw .usage("\(next) needs a value after it") }
                result[key] = try scalar(next, arguments[index + 2])
                index += 3
            } else {
                result[key] = try untyped(next)
                index += 2
            }
        }
        return result
    }

    /// Dates as `defaults` prints them, ISO 8601, or a plain day; without a zone, UTC.
    static func date(_ text: String) -> Date? {
        let formats = [
            "yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX",
            "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd",
        ]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for format in formats {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Hex digits (white space ignored, `0x` or `<...>` around them allowed) as bytes.
    static func hexData(_ text: String) -> Data? {
        var digits = text.filter { !$0.isWhitespace }
        if digits.hasPrefix("<") && digits.hasSuffix(">") { digits = String(digits.dropFirst().dropLast()) }
        if digits.lowercased().hasPrefix("0x") { digits = String(digits.dropFirst(2)) }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }
}
