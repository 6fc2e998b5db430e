// The help of `harness defaults` for a terminal, and the same text as a manual page in roff.
//
// Both are made from DefaultsVerbs and the sections below; `Scripts/check-docs.sh` regenerates the
// committed man/harness-defaults.1 and fails when it differs, so the two cannot drift.

import RVS_PersistentPrefs

enum DefaultsHelp {
    /// What the inspector is, for the top of the help and the manual's DESCRIPTION.
    static let description = "Reads and edits defaults domains (property-list files) the way the macOS `defaults` command does, through the same storage type the library uses: every change is a read-modify-write under the domain's lock, written to a temporary file and renamed into place, so a running app loses nothing."

    /// The sections after the verbs, titled, in both the help and the manual.
    static let sections: [(title: String, paragraphs: [String])] = [
        ("Domains", [
            "DOMAIN is a domain name (its file is DOMAIN.plist in the directory), -g (also NSGlobalDomain) for the global domain, whose file is .GlobalPreferences.plist, or the absolute path of a property-list file, with or without .plist.",
            "Per-host domains (-currentHost, -host) and application bundles (-app) do not exist on Linux: name the domain itself.",
        ]),
        ("The directory", [
            "The directory is --directory PATH; otherwise the one the library uses, the first of: $RVS_PREFS_DIRECTORY; $XDG_CONFIG_HOME/RVS_PersistentPrefs; $HOME/.config/RVS_PersistentPrefs when HOME is set, not empty and not /; the first path of $STATE_DIRECTORY; .config/RVS_PersistentPrefs under the home the user database gives the user. With none of these, give --directory. Group suites live in their group container: point --directory there to inspect them.",
        ]),
        ("Values", [
            "OpenStep text has no numbers or Booleans: '{count = 5;}' stores the string \"5\". Use -int, -bool, -dict and the other types for typed values. Booleans read back as 1 and 0, as in `defaults`; read-type tells them apart.",
        ]),
        ("JSON", [
            "read --json and export --format json print JSON, and import takes it. JSON has no dates and no bytes: a date is written as an ISO 8601 string (2024-05-01T12:30:00Z) and data as a base64 string, and both import as strings, since a JSON import cannot tell a date from a string. Integers and reals keep their kinds; null is refused.",
        ]),
    ]

    /// Options that every verb takes.
    static let commonOptions: [VerbOption] = [
        VerbOption(name: "--directory PATH", meaning: "the preferences directory to inspect (see The directory)"),
        VerbOption(name: "--etcd URL[,URL...]", meaning: "inspect the domains kept in the etcd cluster at these client URLs instead (see Sharing Across Machines); the etcd user comes from ETCD_USER and ETCD_PASSWORD, a private CA from ETCD_CA_FILE, the most an operation may take from ETCD_TIMEOUT (seconds, 5 unless set)"),
        VerbOption(name: "--help", meaning: "what the inspector, or one verb, does and takes"),
        VerbOption(name: "--version", meaning: "the version of the harness"),
    ]

    static let synopsis = "harness defaults [--directory PATH] VERB [ARGUMENTS...]"

    /// Where the meaning of a form starts in the terminal's list.
    private static let column = 38
    private static let width = 100

    // MARK: The terminal

    /// What `harness defaults --help` and `help` print.
    static var usage: String {
        var lines = ["usage: \(synopsis)", "", paragraph(description, width: width), "", "Verbs:"]
        for verb in DefaultsVerbs.all {
            lines += verb.forms.map { hanging($0.synopsis, $0.meaning) }
        }
        lines += ["", "Options:"] + commonOptions.map { hanging($0.name, $0.meaning) }
        lines += ["  (and each verb's own: harness defaults help VERB)"]
        for section in sections {
            lines += ["", section.title + ":"] + section.paragraphs.map { paragraph($0, indent: "  ", width: width) }
        }
        lines += ["", "Examples:"] + DefaultsVerbs.all.compactMap(\.examples.first).map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// What `help VERB` and `VERB --help` print.
    static func usage(of verb: DefaultsVerb) -> String {
        let options = verb.options.isEmpty ? "" : " [" + verb.options.map(\.name).joined(separator: "] [") + "]"
        var lines = verb.forms.enumerated().map { number, form in
            (number == 0 ? "usage: " : "       ") + "harness defaults " + form.synopsis + options
        }
        lines += [""] + verb.forms.map { hanging($0.synopsis, $0.meaning) }
        if !verb.options.isEmpty {
            lines += ["", "Options:"] + verb.options.map { hanging($0.name, $0.meaning) }
        }
        lines += verb.notes.flatMap { ["", paragraph($0, width: width)] }
        lines += ["", verb.examples.count == 1 ? "Example:" : "Examples:"] + verb.examples.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// `label` in a column, then `text` wrapped beside it (below it, when the label is too long).
    private static func hanging(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: column)
        let wrapped = paragraph(text, indent: indent, width: width)
        let head = "  " + label
        guard head.count < column - 1 else { return head + "\n" + wrapped }
        return head + String(repeating: " ", count: column - head.count) + wrapped.dropFirst(column)
    }

    // MARK: The manual

    /// The manual page harness-defaults(1), in roff: the help's text, with the same words.
    static func manualPage() -> String {
        var page = [
            ".\\\" Generated by `harness defaults help --man` from Harness/Defaults/DefaultsVerbs.swift and",
            ".\\\" DefaultsHelp.swift; do not edit: Scripts/check-docs.sh fails when this file differs.",
            ".TH HARNESS-DEFAULTS 1 \"\" \"harness \(HarnessVersion.number)\" \"User Commands\"",
            ".SH NAME",
            "harness-defaults \\- read and write defaults domains, like the macOS defaults command",
            ".SH SYNOPSIS",
            ".B " + roff(synopsis),
            ".SH DESCRIPTION",
            roff(description),
            ".SH VERBS",
        ]
        for verb in DefaultsVerbs.all {
            for form in verb.forms {
                page += [".TP", ".B " + roff(form.synopsis), roff(form.meaning)]
            }
            for option in verb.options {
                page += [".RS", ".TP", ".B " + roff(option.name), roff(option.meaning), ".RE"]
            }
            for note in verb.notes {
                page += [".IP", roff(note)]
            }
        }
        page += [".SH OPTIONS"]
        for option in commonOptions {
            page += [".TP", ".B " + roff(option.name), roff(option.meaning)]
        }
        for section in sections {
            page += [".SH " + roff(section.title.uppercased())]
            page += section.paragraphs.enumerated().flatMap { number, text in (number == 0 ? [] : [".PP"]) + [roff(text)] }
        }
        page += [".SH EXAMPLES"]
        for example in DefaultsVerbs.all.flatMap(\.examples) {
            page += [".PP", ".nf", roff(example), ".fi"]
        }
        page += [".SH SEE ALSO", "harness completion bash|zsh prints a shell completion script.", ""]
        return page.joined(separator: "\n")
    }

    /// `text` safe as roff input: backslashes and hyphens escaped, and no line starting with a control character.
    private static func roff(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}
