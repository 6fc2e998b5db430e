// The verbs of `harness defaults`, in one table: what runs each one, and every word of its help.
//
// `help`, `VERB --help`, the manual page (`help --man`) and the shell completion are all made from this
// table, so that they cannot drift apart. A new verb, or a new option of a verb, is one entry here.

import RVS_PersistentPrefs

/// One way to call a verb, and what it does.
package struct VerbForm: Sendable {
    /// The arguments after `harness defaults`: `read DOMAIN KEY`.
    package let synopsis: String
    /// One or two sentences.
    package let meaning: String
}

/// An option one verb takes.
package struct VerbOption: Sendable {
    /// As typed: `--json`, `--format FORMAT`.
    package let name: String
    package let meaning: String

    /// The word to type, without its value: `--format`.
    package var word: String { String(name.prefix { $0 != " " }) }
}

/// One verb of `harness defaults`.
package struct DefaultsVerb: Sendable {
    package let name: String
    package let forms: [VerbForm]
    package var options: [VerbOption] = []
    /// Paragraphs that `help VERB` and the manual add after the forms.
    package var notes: [String] = []
    /// Whole command lines, as a user types them; `help` shows the first of each verb.
    package let examples: [String]
    /// Whether its first operand is a domain (for completion).
    package var takesDomain = true
    /// Whether its operands may be words starting with `-` that are not options: the type flags of `write`.
    package var takesDashedValues = false
    /// Runs the verb with the words after its name.
    package let run: @Sendable (DomainInspector, inout Arguments) throws(HarnessError) -> Void
}

package enum DefaultsVerbs {
    /// Every verb, in the order the help lists them.
    package static let all: [DefaultsVerb] = [
        DefaultsVerb(
            name: "domains",
            forms: [VerbForm(synopsis: "domains", meaning: "the names of the domains in the directory, the global domain left out, and of those only an administrator's layer or the group container holds, marked (group, system, managed)")],
            options: [VerbOption(name: "--lines", meaning: "one name a line, for scripts and shell completion"), jsonOption],
            examples: ["\(Tool.command) domains"],
            takesDomain: false,
            run: { inspector, arguments throws(HarnessError) in
                let lines = arguments.flag("--lines")
                let json = arguments.flag(jsonOption.name)
                try none(arguments, "domains")
                try inspector.listDomains(oneALine: lines, json: json)
            }),
        DefaultsVerb(
            name: "read",
            forms: [
                VerbForm(synopsis: "read", meaning: "every domain, with all its keys, as programs read them"),
                VerbForm(synopsis: "read DOMAIN", meaning: "every key of DOMAIN as a program reads it: the user's file with the entries an administrator forces over it and the system defaults beneath, entry by entry (see Layers)"),
                VerbForm(synopsis: "read DOMAIN KEY", meaning: "one value, as a program reads it"),
                VerbForm(synopsis: "read DOMAIN KEY ENTRY...", meaning: "a value inside a stored dictionary or array: ENTRY is a key of a dictionary or an index of an array (from 0), one argument each, so that dots in names need no escaping"),
            ],
            options: [jsonOption,
                      VerbOption(name: "--sources", meaning: "with DOMAIN [KEY [ENTRY]]: each key, and each entry of a collection, with the layer that supplies it (managed, persistent, global, system) and its file, as a program reads the domain, and beneath it each value it shadows in another layer; an administrator's file the library ignores is reported on standard error and the other layers are shown; with --system, --managed, --etcd, -g or a file's path, the one layer (system, managed, etcd, global, file) and where it is")],
            examples: ["\(Tool.command) read com.example.app com.example.app.preferences appearance", "\(Tool.command) read com.example.app com.example.app.preferences --json",
                       "\(Tool.command) read --sources com.example.app"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag("--json")
                if arguments.flag("--sources") {
                    try inspector.readSources(arguments.rest(), json: json)
                } else {
                    try inspector.read(arguments.rest(), json: json)
                }
            }),
        DefaultsVerb(
            name: "keys",
            forms: [VerbForm(synopsis: "keys DOMAIN [KEY [ENTRY...]]", meaning: "the storage keys of DOMAIN, or the names of the entries of the dictionary (the indices of the array) that KEY ENTRY... name, one a line")],
            options: [jsonOption],
            examples: ["\(Tool.command) keys com.example.app com.example.app.preferences"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag(jsonOption.name)
                let operands = arguments.rest()
                guard !operands.isEmpty else { throw .usage("keys needs DOMAIN, and optionally KEY and ENTRY... (see \(Tool.command) help keys)") }
                let names = try inspector.names(operands)
                if json {
                    Console.say(JSONText.encode(.array(names.map { .string($0) })))
                } else if !names.isEmpty {
                    Console.say(names.joined(separator: "\n"))
                }
            }),
        DefaultsVerb(
            name: "read-type",
            forms: [VerbForm(synopsis: "read-type DOMAIN KEY [ENTRY...]", meaning: "the type of one value: string, boolean, integer, float, date, data, array or dictionary")],
            options: [jsonOption],
            examples: ["\(Tool.command) read-type com.example.app com.example.app.preferences launchCount"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag(jsonOption.name)
                let operands = arguments.rest()
                guard operands.count >= 2 else { throw .usage("read-type needs DOMAIN KEY (see \(Tool.command) help read-type)") }
                let type = PropertyListPrinter.typeName(try inspector.value(operands))
                Console.say(json ? JSONText.encode(.string(type)) : "Type is \(type)")
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
            notes: ["When the app's schema is installed (see list-keys), write DOMAIN KEY ENTRY VALUE stores VALUE as the entry's type (a whole number for an integer; true, false, yes, no, 1 or 0 for a boolean), refuses a type flag that contradicts it, and refuses a value outside the entry's range or allowed values, naming the entry and the constraint: exit status 1, nothing written."],
            examples: [
                "\(Tool.command) write com.example.app com.example.app.preferences launchCount -int 3",
                "\(Tool.command) write com.example.myservice com.example.myservice.settings -dict-add logLevel debug",
                "\(Tool.command) write com.example.myservice com.example.myservice.settings port -int 8080",
            ],
            takesDashedValues: true,
            run: { inspector, arguments throws(HarnessError) in try inspector.write(arguments.rest()) }),
        DefaultsVerb(
            name: "rename",
            forms: [VerbForm(synopsis: "rename DOMAIN OLD NEW", meaning: "moves the value of OLD to the key NEW, in one write; refuses when NEW exists, unless -f")],
            options: [VerbOption(name: "-f", meaning: "replace what NEW holds")],
            examples: ["\(Tool.command) rename com.example.app com.example.app.settings com.example.app.preferences"],
            run: { inspector, arguments throws(HarnessError) in
                let force = arguments.flag("-f")
                let operands = arguments.rest()
                guard operands.count == 3 else { throw .usage("rename needs DOMAIN OLD_KEY NEW_KEY (see \(Tool.command) help rename)") }
                try inspector.rename(operands[1], to: operands[2], in: operands[0], replacing: force)
            }),
        DefaultsVerb(
            name: "delete",
            forms: [
                VerbForm(synopsis: "delete DOMAIN", meaning: "removes DOMAIN: its file, so that domains no longer lists it"),
                VerbForm(synopsis: "delete DOMAIN KEY [ENTRY...]", meaning: "removes one key, or one entry inside the value of KEY"),
            ],
            examples: ["\(Tool.command) delete com.example.app com.example.app.preferences launchCount", "\(Tool.command) delete -g com.example.shared.settings"],
            run: { inspector, arguments throws(HarnessError) in try inspector.delete(arguments.rest()) }),
        DefaultsVerb(
            name: "find",
            forms: [VerbForm(synopsis: "find WORD", meaning: "every key, in every domain and every layer (system, managed, group suites), whose name or value contains WORD, ignoring case, with the value a program reads; exit status 1 when nothing matches, as grep")],
            options: [jsonOption],
            examples: ["\(Tool.command) find appearance"],
            takesDomain: false,
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag(jsonOption.name)
                let operands = arguments.rest()
                guard operands.count == 1 else { throw .usage("find needs one WORD") }
                try inspector.find(operands[0], json: json)
            }),
        DefaultsVerb(
            name: "export",
            forms: [VerbForm(synopsis: "export DOMAIN PATH|-", meaning: "writes DOMAIN as a program reads it (what read DOMAIN shows: forced entries and system defaults included, see Layers) to PATH (a new file, mode 0600, or a regular file, keeping its mode) or to standard output; to export only what the user's own file holds (a backup to import again), give the file's absolute path as DOMAIN")],
            options: [VerbOption(name: "--format FORMAT", meaning: "xml (the default; it keeps dates to the second, as every XML property list does), binary (the bytes of a domain file, exact: the backup to import again) or json"),
                      VerbOption(name: "--json", meaning: "the same as --format json")],
            examples: ["\(Tool.command) export com.example.app - --json | jq .", "\(Tool.command) export com.example.app backup.plist --format binary"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag(jsonOption.name)
                let chosen = try TransferFormat.option(&arguments, allowed: [.xml, .binary, .json])
                if json, let chosen, chosen != .json { throw .usage("--json and --format \(chosen.rawValue) disagree; give one") }
                let format = json ? .json : chosen ?? .xml
                let operands = arguments.rest()
                guard operands.count == 2 else { throw .usage("export needs DOMAIN and PATH (or - for standard output)") }
                try inspector.export(operands[0], to: operands[1], as: format)
            }),
        DefaultsVerb(
            name: "import",
            forms: [VerbForm(synopsis: "import DOMAIN PATH|-", meaning: "replaces DOMAIN's contents with a binary, XML, OpenStep or JSON property list read from PATH, a regular file, or standard input (at most \(FileDomainStorage.maximumFileSize >> 20) MiB, the largest domain file)")],
            notes: ["An unreadable domain file is moved aside, never deleted, before the new contents are written."],
            examples: ["\(Tool.command) import com.example.app backup.plist", "jq '.\"com.example.app.preferences\".launchCount = 0' app.json | \(Tool.command) import com.example.app -"],
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
            examples: ["\(Tool.command) edit com.example.app", "EDITOR=nano \(Tool.command) edit com.example.app com.example.app.preferences --format openstep"],
            run: { inspector, arguments throws(HarnessError) in
                let format = try TransferFormat.option(&arguments, allowed: [.xml, .openStep]) ?? .xml
                let force = arguments.flag("--force")
                let operands = arguments.rest()
                guard (1...2).contains(operands.count) else { throw .usage("edit needs DOMAIN, and optionally KEY") }
                try DomainEditor(inspector: inspector, format: format, force: force).edit(operands[0], key: operands.count == 2 ? operands[1] : nil)
            }),
        DefaultsVerb(
            name: "watch",
            forms: [VerbForm(synopsis: "watch DOMAIN [KEY]", meaning: "prints every storage key of DOMAIN (or KEY) as a program reads it, KEY = VALUE; a line, then each change as it happens, from any layer (or the etcd cluster with --etcd), until interrupted; KEY removed when a key goes")],
            options: [jsonOption],
            notes: ["With --json, one JSON object a line: {\"key\": KEY, \"value\": VALUE} or {\"key\": KEY, \"removed\": true}."],
            examples: ["\(Tool.command) watch com.example.app com.example.app.preferences --json"],
            run: { inspector, arguments throws(HarnessError) in
                let json = arguments.flag(jsonOption.name)
                try inspector.watch(arguments.rest(), json: json)
            }),
        DefaultsVerb(
            name: "verify",
            forms: [VerbForm(synopsis: "verify FILE --as system|managed", meaning: "judges a candidate file as the library will once it is installed in that layer: its name (DOMAIN.plist), its form (a property list whose root is a dictionary), that every user can read it and, for a managed file, that root owns it and nobody else can write it (nor its directory); a file already in the layer's directory is judged where it is, through every directory of its resolved path (each must let every user through and, for a managed file, be root's); and, when the domain's schema is installed, that its collections hold only the entries the schema describes, of their types, within their ranges and allowed values; exit status 1 with the reason")],
            options: [VerbOption(name: "--as LAYER", meaning: "system or managed")],
            examples: ["\(Tool.command) verify ./com.example.app.plist --as managed"],
            takesDomain: false,
            run: { _, arguments throws(HarnessError) in
                let layer = try arguments.option("--as", needs: "system or managed") { AdministratorLayer(rawValue: $0) }
                let operands = arguments.rest()
                guard operands.count == 1, let layer else { throw .usage("verify needs FILE and --as system or --as managed") }
                Console.say(try CandidateVerifier.verify(operands[0], as: layer))
            }),
        SchemaVerbs.listKeys,
        SchemaVerbs.describe,
        SchemaVerbs.range,
        DefaultsVerb(
            name: "completion",
            forms: [VerbForm(synopsis: "completion bash|zsh|fish", meaning: "a script completing prefsctl's verbs, options, domains, storage keys and entries in that shell (the Debian package installs all three)")],
            examples: ["prefsctl completion bash > ~/.local/share/bash-completion/completions/prefsctl"],
            takesDomain: false,
            run: { _, arguments throws(HarnessError) in
                let operands = arguments.rest()
                guard operands.count == 1 else { throw .usage("completion needs one shell: bash, zsh or fish") }
                Console.write(try Completer.script(for: operands[0]))
            }),
        DefaultsVerb(
            name: "help",
            forms: [VerbForm(synopsis: "help [VERB]", meaning: "this text, or what one verb does (also: VERB --help)")],
            options: [VerbOption(name: "--man", meaning: "the manual page \(Tool.manualName)(1), in roff, made from the same text")],
            examples: ["\(Tool.command) help write", "\(Tool.command) help --man | man -l -"],
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
    package static func named(_ name: String) throws(HarnessError) -> DefaultsVerb {
        guard let verb = all.first(where: { $0.name == name }) else {
            throw .usage("unknown verb '\(name)'; the verbs are \(names)")
        }
        return verb
    }

    /// The one spelling of JSON output, for every verb whose output is data.
    package static let jsonOption = VerbOption(name: "--json", meaning: "print JSON instead of the OpenStep text of `defaults` (see JSON in \(Tool.command) help)")

    /// The options of any verb that take a value (`--format FORMAT`): the word after them is not the verb.
    package static let valueOptions: Set<String> = Set(all.flatMap(\.options).filter { $0.name.contains(" ") }.map(\.word))

    /// The verbs, for messages.
    package static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Requires that no word is left.
    private static func none(_ arguments: Arguments, _ verb: String) throws(HarnessError) {
        try arguments.finish { extra in "\(verb) takes no arguments, not '\(extra)'" }
    }
}

/// The forms in which a domain is exported, imported or edited.
package enum TransferFormat: String, Sendable {
    case xml, binary, json
    case openStep = "openstep"

    /// The value of `--format`, which must be one of `allowed`; `nil` when not given.
    package static func option(_ arguments: inout Arguments, allowed: [TransferFormat]) throws(HarnessError) -> TransferFormat? {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return try arguments.option("--format", needs: "one of \(list)") { word in
            TransferFormat(rawValue: word.lowercased()).flatMap { allowed.contains($0) ? $0 : nil }
        }
    }
}
