// The verbs of `harness defaults`, in one table: what runs each one, and every word of its help.
//
// `help`, `VERB --help`, the manual page (`help --man`) and the shell completion are all made from this
// table, so that they cannot drift apart. A new verb, or a new option of a verb, is one entry here.

import RVS_PersistentPrefs

/// One way to call a verb, and what it does.
struct VerbForm: Sendable {
    /// The arguments after `harness defaults`: `read DOMAIN KEY`.
    let synopsis: String
    /// One or two sentences.
    let meaning: String
}

/// An option one verb takes.
struct VerbOption: Sendable {
    /// As typed: `--json`, `--format FORMAT`.
    let name: String
    let meaning: String

    /// The word to type, without its value: `--format`.
    var word: String { String(name.prefix { $0 != " " }) }
}

/// One verb of `harness defaults`.
struct DefaultsVerb: Sendable {
    let name: String
    let forms: [VerbForm]
    var options: [VerbOption] = []
    /// Paragraphs that `help VERB` and the manual add after the forms.
    var notes: [String] = []
    /// Whole command lines, as a user types them; `help` shows the first of each verb.
    let examples: [String]
    /// Whether its first operand is a domain (for completion).
    var takesDomain = true
    /// Runs the verb with the words after its name.
    let run: @Sendable (DomainInspector, inout Arguments) throws(HarnessError) -> Void
}

enum DefaultsVerbs {
    /// Every verb, in the order the help lists them.
    static let all: [DefaultsVerb] = [
        DefaultsVerb(
            name: "domains",
            forms: [VerbForm(synopsis: "domains", meaning: "the names of the domains in the directory, the global domain left out")],
            options: [VerbOption(name: "--lines", meaning: "one name a line, for scripts and shell completion")],
            examples: ["harness defaults domains"],
            takesDomain: false,
            run: { inspector, arguments throws(HarnessError) in
                let lines = arguments.flag("--lines")
                try none(arguments, "domains")
                try inspector.listDomains(oneALine: lines)
            }),
        DefaultsVerb(
            name: "read",
            forms: [
                VerbForm(synopsis: "read", meaning: "every domain, with all its keys"),
                VerbForm(synopsis: "read DOMAIN", meaning: "every key of DOMAIN"),
                VerbForm(synopsis: "read DOMAIN KEY", meaning: "one value"),
                VerbForm(synopsis: "read DOMAIN KEY ENTRY...", meaning: "a value inside a stored dictionary or array: ENTRY is a key of a dictionary or an index of an array (from 0), one argument each, so that dots in names need no escaping"),
            ],
            options: [VerbOption(name: "--json", meaning: "print JSON instead of the OpenStep text of `defaults` (see JSON in harness defaults help)"),
                      VerbOption(name: "--sources", meaning: "with DOMAIN [KEY]: each key, and each entry of a collection, with the layer that supplies it (managed, persistent, global, system) and its file, as a program reads the domain")],
            examples: ["harness defaults read com.example.app", "harness defaults read com.example.app com.example.app.preferences appearance --json",
                       "harness defaults read --sources com.example.app"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag("--json")
                if arguments.flag("--sources") {
                    try inspector.readSources(arguments.rest())
                } else {
                    try inspector.read(arguments.rest(), json: json)
                }
            }),
        DefaultsVerb(
            name: "read-type",
            forms: [VerbForm(synopsis: "read-type DOMAIN KEY [ENTRY...]", meaning: "the type of one value: string, boolean, integer, float, date, data, array or dictionary")],
            examples: ["harness defaults read-type com.example.app launchCount"],
            run: { inspector, arguments throws(HarnessError) in
                let operands = arguments.rest()
                guard operands.count >= 2 else { throw .usage("read-type needs DOMAIN KEY (see harness defaults help read-type)") }
                Console.say("Type is \(PropertyListPrinter.typeName(try inspector.value(operands)))")
            }),
        DefaultsVerb(
            name: "write",
            forms: [
                VerbForm(synopsis: "write DOMAIN KEY VALUE", meaning: "stores VALUE under KEY, replacing what KEY held, a whole dictionary or array included: property-list text such as '{appearance = dark;}' or '(a, b)'; any other text is stored as a string. To change some entries of a stored dictionary and keep the others, use -dict-add, or write DOMAIN KEY ENTRY VALUE"),
                VerbForm(synopsis: "write DOMAIN KEY -TYPE VALUE", meaning: "stores a typed value; TYPE is one of string, int, float, bool, date (2024-05-01 12:30:00 +0000) or data (hex digits)"),
                VerbForm(synopsis: "write DOMAIN KEY -array ITEM...", meaning: "an array; each ITEM is VALUE or -TYPE VALUE"),
                VerbForm(synopsis: "write DOMAIN KEY -array-add ITEM...", meaning: "appends to an array"),
                VerbForm(synopsis: "write DOMAIN KEY -dict KEY ITEM...", meaning: "a dictionary; -dict-add adds entries to one, keeping the others"),
                VerbForm(synopsis: "write DOMAIN KEY ENTRY... VALUE", meaning: "stores VALUE (or -TYPE VALUE, -array, -dict-add...) inside the dictionary or array under KEY, creating dictionaries on the way; in an array, ENTRY is an index, and the index one past the end appends"),
                VerbForm(synopsis: "write DOMAIN '{KEY = VALUE; ...}'", meaning: "replaces the whole domain with a dictionary"),
            ],
            examples: [
                "harness defaults write com.example.app launchCount -int 3",
                "harness defaults write com.example.myservice settings -dict-add logLevel debug",
                "harness defaults write com.example.myservice settings port -int 8080",
            ],
            run: { inspector, arguments throws(HarnessError) in try inspector.write(arguments.rest()) }),
        DefaultsVerb(
            name: "rename",
            forms: [VerbForm(synopsis: "rename DOMAIN OLD NEW", meaning: "moves the value of OLD to the key NEW, in one write; refuses when NEW exists, unless -f")],
            options: [VerbOption(name: "-f", meaning: "replace what NEW holds")],
            examples: ["harness defaults rename com.example.app lastUser previousUser"],
            run: { inspector, arguments throws(HarnessError) in
                let force = arguments.flag("-f")
                let operands = arguments.rest()
                guard operands.count == 3 else { throw .usage("rename needs DOMAIN OLD_KEY NEW_KEY (see harness defaults help rename)") }
                try inspector.rename(operands[1], to: operands[2], in: operands[0], replacing: force)
            }),
        DefaultsVerb(
            name: "delete",
            forms: [
                VerbForm(synopsis: "delete DOMAIN", meaning: "removes DOMAIN: its file, so that domains no longer lists it"),
                VerbForm(synopsis: "delete DOMAIN KEY [ENTRY...]", meaning: "removes one key, or one entry inside the value of KEY"),
            ],
            examples: ["harness defaults delete com.example.app launchCount", "harness defaults delete -g settings"],
            run: { inspector, arguments throws(HarnessError) in try inspector.delete(arguments.rest()) }),
        DefaultsVerb(
            name: "find",
            forms: [VerbForm(synopsis: "find WORD", meaning: "every key, in every domain, whose name or value contains WORD, ignoring case")],
            examples: ["harness defaults find appearance"],
            takesDomain: false,
            run: { inspector, arguments throws(HarnessError) in
                let operands = arguments.rest()
                guard operands.count == 1 else { throw .usage("find needs one WORD") }
                try inspector.find(operands[0])
            }),
        DefaultsVerb(
            name: "export",
            forms: [VerbForm(synopsis: "export DOMAIN PATH|-", meaning: "writes DOMAIN to PATH (a new file, mode 0600, or a regular file, keeping its mode) or to standard output")],
            options: [VerbOption(name: "--format FORMAT", meaning: "xml (the default), binary (the bytes of a domain file) or json")],
            examples: ["harness defaults export com.example.app - --format json | jq .", "harness defaults export com.example.app backup.plist --format binary"],
            run: { inspector, arguments throws(HarnessError) in
                let format = try TransferFormat.option(&arguments, allowed: [.xml, .binary, .json]) ?? .xml
                let operands = arguments.rest()
                guard operands.count == 2 else { throw .usage("export needs DOMAIN and PATH (or - for standard output)") }
                try inspector.export(operands[0], to: operands[1], as: format)
            }),
        DefaultsVerb(
            name: "import",
            forms: [VerbForm(synopsis: "import DOMAIN PATH|-", meaning: "replaces DOMAIN's contents with a binary, XML, OpenStep or JSON property list read from PATH, a regular file, or standard input (at most \(FileDomainStorage.maximumFileSize >> 20) MiB, the largest domain file)")],
            notes: ["An unreadable domain file is moved aside, never deleted, before the new contents are written."],
            examples: ["harness defaults import com.example.app backup.plist", "jq '.launchCount = 0' app.json | harness defaults import com.example.app -"],
            run: { inspector, arguments throws(HarnessError) in
                let operands = arguments.rest()
                guard operands.count == 2 else { throw .usage("import needs DOMAIN and PATH (or - for standard input)") }
                try inspector.importDomain(operands[0], from: operands[1])
            }),
        DefaultsVerb(
            name: "edit",
            forms: [
                VerbForm(synopsis: "edit DOMAIN", meaning: "opens the domain in an editor, as crontab -e and visudo do, and writes what you save when the editor exits successfully"),
                VerbForm(synopsis: "edit DOMAIN KEY", meaning: "edits the value of one key"),
            ],
            options: [
                VerbOption(name: "--format FORMAT", meaning: "xml (the default, which keeps every type) or openstep (shorter: an entry whose text still reads as its old type keeps that type, and a new entry is a string)"),
                VerbOption(name: "--force", meaning: "write even if the domain was changed by someone else while the editor was open"),
            ],
            notes: [
                "The editor is $VISUAL, else $EDITOR, else vi; it is given a private temporary file (mode 0600), removed afterwards. The result is parsed and written atomically under the domain's lock. Text that does not parse, or an editor that exits with a non-zero status, changes nothing, and the error names the line. When what you saved cannot be written (it does not parse, or the domain changed meanwhile), the file is kept and the error names it, so that your edit is not lost.",
            ],
            examples: ["harness defaults edit com.example.app", "EDITOR=nano harness defaults edit com.example.app settings --format openstep"],
            run: { inspector, arguments throws(HarnessError) in
                let format = try TransferFormat.option(&arguments, allowed: [.xml, .openStep]) ?? .xml
                let force = arguments.flag("--force")
                let operands = arguments.rest()
                guard (1...2).contains(operands.count) else { throw .usage("edit needs DOMAIN, and optionally KEY") }
                try DomainEditor(inspector: inspector, format: format, force: force).edit(operands[0], key: operands.count == 2 ? operands[1] : nil)
            }),
        DefaultsVerb(
            name: "help",
            forms: [VerbForm(synopsis: "help [VERB]", meaning: "this text, or what one verb does (also: VERB --help)")],
            options: [VerbOption(name: "--man", meaning: "the manual page harness-defaults(1), in roff, made from the same text")],
            examples: ["harness defaults help write", "harness defaults help --man | man -l -"],
            takesDomain: false,
            run: { _, arguments throws(HarnessError) in
                if arguments.flag("--man") {
                    try none(arguments, "help --man")
                    Console.write(DefaultsHelp.manualPage())
                    return
                }
                let operands = arguments.rest()
                guard operands.count <= 1 else { throw .usage("help takes at most one VERB") }
                Console.say(try operands.first.map { verb throws(HarnessError) in try DefaultsHelp.usage(of: named(verb)) } ?? DefaultsHelp.usage)
            }),
    ]

    /// The verb called `name`.
    /// - Throws: A usage error listing the verbs when there is none.
    static func named(_ name: String) throws(HarnessError) -> DefaultsVerb {
        guard let verb = all.first(where: { $0.name == name }) else {
            throw .usage("unknown verb '\(name)'; the verbs are \(names)")
        }
        return verb
    }

    /// The verbs, for messages.
    static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Requires that no word is left.
    private static func none(_ arguments: Arguments, _ verb: String) throws(HarnessError) {
        try arguments.finish { extra in "\(verb) takes no arguments, not '\(extra)'" }
    }
}

/// The forms in which a domain is exported, imported or edited.
enum TransferFormat: String, Sendable {
    case xml, binary, json
    case openStep = "openstep"

    /// The value of `--format`, which must be one of `allowed`; `nil` when not given.
    static func option(_ arguments: inout Arguments, allowed: [TransferFormat]) throws(HarnessError) -> TransferFormat? {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return try arguments.option("--format", needs: "one of \(list)") { word in
            TransferFormat(rawValue: word.lowercased()).flatMap { allowed.contains($0) ? $0 : nil }
        }
    }
}
