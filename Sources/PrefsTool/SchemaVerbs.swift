// The verbs that read an app's installed schema (SPEC §14): list-keys, describe and range, as `gsettings
// list-keys`, `describe` and `range` read a GSettings schema. They read the schema only, never a domain file:
// they say what the app allows, whatever is stored.

import RVS_PersistentPrefs

package enum SchemaVerbs {
    /// `list-keys DOMAIN KEY`: each entry of the collection with its type and default.
    package static let listKeys = DefaultsVerb(
        name: "list-keys",
        forms: [VerbForm(synopsis: "list-keys DOMAIN KEY", meaning: "each entry the app's installed schema describes in the collection KEY of DOMAIN, one a line: its name, type and default (- when its default is stored as nothing)")],
        options: [DefaultsVerbs.jsonOption],
        notes: [schemaNote],
        examples: ["\(Tool.command) list-keys com.example.app com.example.app.preferences"],
        run: { _, arguments throws(HarnessError) in
            let json = arguments.flag(DefaultsVerbs.jsonOption.name)
            let operands = arguments.rest()
            guard operands.count == 2 else { throw .usage("list-keys needs DOMAIN KEY (see \(Tool.command) help list-keys)") }
            let entries = try InstalledSchema.required(for: operands[0]).collection(operands[1]).values.sorted { $0.name < $1.name }
            if json {
                Console.say(JSONText.encode(.array(entries.map { entry in
                    var object: [String: PropertyListValue] = ["name": .string(entry.name)]
                    if let type = entry.type { object["type"] = .string(type) }
                    if let value = entry.defaultValue { object["default"] = value }
                    return .dictionary(object)
                })))
                return
            }
            let width = entries.map(\.name.count).max() ?? 0
            let typeWidth = entries.map { ($0.type ?? "-").count }.max() ?? 0
            Console.say(entries.map { entry in
                let name = entry.name.padding(toLength: width, withPad: " ", startingAt: 0)
                let type = (entry.type ?? "-").padding(toLength: typeWidth, withPad: " ", startingAt: 0)
                return "\(name)  \(type)  \(entry.defaultValue.map { PropertyListPrinter.inline($0) } ?? "-")"
            }.joined(separator: "\n"))
        })

    /// `describe DOMAIN KEY ENTRY`: everything the schema says of one entry.
    package static let describe = DefaultsVerb(
        name: "describe",
        forms: [VerbForm(synopsis: "describe DOMAIN KEY ENTRY", meaning: "what the app's installed schema says of one entry: its type, default, constraint (a range or the allowed values) and description, and the schema file that says it")],
        options: [DefaultsVerbs.jsonOption],
        examples: ["\(Tool.command) describe com.example.app com.example.app.preferences volume"],
        run: { _, arguments throws(HarnessError) in
            let json = arguments.flag(DefaultsVerbs.jsonOption.name)
            let operands = arguments.rest()
            guard operands.count == 3 else { throw .usage("describe needs DOMAIN KEY ENTRY (see \(Tool.command) help describe)") }
            let schema = try InstalledSchema.required(for: operands[0])
            let entry = try schema.entry(operands[1], operands[2])
            if json {
                var object = constraintObject(entry)
                object["name"] = .string(entry.name)
                if let value = entry.defaultValue { object["default"] = value }
                if let description = entry.constraint.description { object["description"] = .string(description) }
                object["schema"] = .string(schema.path)
                Console.say(JSONText.encode(.dictionary(object)))
                return
            }
            Console.say([
                "Entry:       \(operands[1]) \(entry.name) of \(schema.domain)",
                "Type:        \(entry.type ?? "any (the schema leaves it open)")",
                "Default:     \(entry.defaultValue.map { PropertyListPrinter.inline($0) } ?? "none (nothing is stored)")",
                "Constraint:  \(constraintText(entry))",
                "Description: \(entry.constraint.description ?? "none")",
                "Schema:      \(schema.path)",
            ].joined(separator: "\n"))
        })

    /// `range DOMAIN KEY ENTRY`: the values one entry allows.
    package static let range = DefaultsVerb(
        name: "range",
        forms: [VerbForm(synopsis: "range DOMAIN KEY ENTRY", meaning: "the values one entry allows, as its installed schema says: range LOWER UPPER (inclusive), allowed VALUE..., or any TYPE when it is not constrained")],
        options: [DefaultsVerbs.jsonOption],
        examples: ["\(Tool.command) range com.example.app com.example.app.preferences volume"],
        run: { _, arguments throws(HarnessError) in
            let json = arguments.flag(DefaultsVerbs.jsonOption.name)
            let operands = arguments.rest()
            guard operands.count == 3 else { throw .usage("range needs DOMAIN KEY ENTRY (see \(Tool.command) help range)") }
            let entry = try InstalledSchema.required(for: operands[0]).entry(operands[1], operands[2])
            Console.say(json ? JSONText.encode(.dictionary(constraintObject(entry))) : constraintText(entry))
        })

    /// What the help says of schemas once, under list-keys.
    static let schemaNote = """
        list-keys, describe and range read the schema the app's package installs as DIR/RVS_PersistentPrefs/schemas/DOMAIN.plist, \
        from the first directory DIR of $XDG_DATA_DIRS (default /usr/local/share:/usr/share) that holds one. With a schema installed, \
        write DOMAIN KEY ENTRY VALUE stores VALUE as the entry's type and refuses a value the schema refuses (exit status 1, nothing \
        written), import, edit and rename refuse such a domain, and verify checks a file against it; without one, they work as before.
        """

    /// The constraint in one line: `range 1 65535`, `allowed "debug" "info"`, `any integer`.
    static func constraintText(_ entry: SchemaEntry) -> String {
        if let (lower, upper) = entry.constraint.range {
            return "range \(PropertyListPrinter.inline(lower)) \(PropertyListPrinter.inline(upper))"
        }
        if let allowed = entry.constraint.allowed {
            return "allowed " + allowed.map { PropertyListPrinter.inline($0) }.joined(separator: " ")
        }
        return "any \(entry.type ?? "value")"
    }

    /// The constraint as JSON: `{"type": …, "range": [lower, upper]}` or `{"type": …, "allowed": […]}`.
    static func constraintObject(_ entry: SchemaEntry) -> [String: PropertyListValue] {
        var object: [String: PropertyListValue] = [:]
        if let type = entry.type { object["type"] = .string(type) }
        if let (lower, upper) = entry.constraint.range { object["range"] = .array([lower, upper]) }
        if let allowed = entry.constraint.allowed { object["allowed"] = .array(allowed) }
        return object
    }
}
