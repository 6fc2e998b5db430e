// The help of `prefsctl` (and `harness defaults`) for a terminal, and the same text as a manual page in roff.
//
// Both are made from DefaultsVerbs and the sections below; `Scripts/check-docs.sh` regenerates the
// committed man/prefsctl.1 and man/harness-defaults.1 and fails when they differ, so they cannot drift.

import RVS_PersistentPrefs

package enum DefaultsHelp {
    /// What the inspector is, for the top of the help and the manual's DESCRIPTION.
    package static let description = "Reads and edits defaults domains (property-list files) the way the macOS `defaults` command does, through the same storage type the library uses: every change is a read-modify-write under the domain's lock, written to a temporary file and renamed into place, so a running app loses nothing."

    /// The sections after the verbs, titled, in both the help and the manual.
    package static let sections: [(title: String, paragraphs: [String])] = [
        ("Domains", [
            "DOMAIN is a domain name (its file is DOMAIN.plist in the directory), -g (also NSGlobalDomain) for the global domain, whose file is .GlobalPreferences.plist, or the absolute path of a property-list file, with or without .plist.",
            "Per-host domains (-currentHost, -host) and application bundles (-app) do not exist on Linux: name the domain itself.",
        ]),
        ("The directory", [
            "The directory is --directory PATH; otherwise the one the library uses, the first of: $RVS_PREFS_DIRECTORY; $XDG_CONFIG_HOME/RVS_PersistentPrefs; $HOME/.config/RVS_PersistentPrefs when HOME is set, not empty and not /; the first path of $STATE_DIRECTORY; .config/RVS_PersistentPrefs under the home the user database gives the user. With none of these (a service with no home), the domains are the administrator's layers, read as the library serves them to such a program, and every write of a user's domain is refused; give --directory to use one. Group suites live in their group container: when $RVS_PREFS_GROUP_CONTAINER names another directory, its suites are domains too (a name with a file in both places is the directory's).",
        ]),
        ("Layers", [
            "A program reads a domain through layers: the entries an administrator forces (the managed directory), the user's file (or group suite), the user's global domain, and the system defaults (each directory of $CONFIGURATION_DIRECTORY and $XDG_CONFIG_DIRS), forced entries winning and system defaults filling in, entry by entry. read, keys, read-type, find, export and watch show a domain that way, through the library's own search list: the keys of the domain's own files (user, system, managed) with the values a program reads. read --sources shows which layer and file supply each entry, and what each one shadows. write, delete, rename, import and edit change the user's file only; --system and --managed change those layers' files; with --system, --managed, --etcd, -g or a file's path, every verb sees that file alone.",
            "An administrator's file the library ignores (not a property list, not a dictionary, or a managed file that root does not own or others may write) is left out, as the library leaves it out, and reported once on standard error as a warning; the exit status is still 0. watch keeps watching it, and reads it as soon as it is fixed.",
        ]),
        ("Values", [
            "OpenStep text has no numbers or Booleans: '{count = 5;}' stores the string \"5\". Use -int, -bool, -dict and the other types for typed values. Booleans read back as 1 and 0, as in `defaults`; read-type tells them apart.",
        ]),
        ("JSON", [
            "Every verb whose output is data takes --json (domains, read, read --sources, keys, read-type, find, export, watch); export --format json is the same as export --json, and import takes JSON. JSON has no dates, no bytes, no NaN and no infinity: a date is written as an ISO 8601 string (2024-05-01T12:30:00Z), data as a base64 string, and a real that is NaN or infinite as the string nan, inf or -inf, and all of them import as strings, since a JSON import cannot tell them from strings. Integers and reals keep their kinds; null is refused.",
        ]),
    ]

    /// The sections that are lists of terms, after the others, in both the help and the manual: what the
    /// environment changes, which files are read and written, and what the exit status means.
    package static var termSections: [(title: String, terms: [(term: String, meaning: String)])] {
        [
            ("Environment", [
                ("RVS_PREFS_DIRECTORY", "the user's preferences directory, when set and not empty"),
                ("XDG_CONFIG_HOME, HOME", "otherwise $XDG_CONFIG_HOME/RVS_PersistentPrefs, else ~/.config/RVS_PersistentPrefs"),
                ("XDG_CONFIG_DIRS", "the directories of system defaults, each with RVS_PersistentPrefs/ inside (default /etc/xdg); \(Tool.command) --system writes in the first"),
                ("CONFIGURATION_DIRECTORY", "set by systemd's ConfigurationDirectory=: read for system defaults before $XDG_CONFIG_DIRS"),
                ("RVS_PREFS_GROUP_CONTAINER", "the group container, whose group suites are listed and read as domains"),
                ("RVS_PREFS_MANAGED_DIRECTORY", "the directory of forced entries (default /etc/RVS_PersistentPrefs/managed); \(Tool.command) --managed writes there"),
                ("ETCD_USER, ETCD_PASSWORD, ETCD_CA_FILE, ETCD_TIMEOUT", "the etcd user, a private CA, and the most an operation may take, for --etcd"),
                ("XDG_DATA_DIRS", "the directories of apps' installed schemas, each with RVS_PersistentPrefs/schemas/ inside (default /usr/local/share:/usr/share); the first holding a domain's schema wins"),
                ("VISUAL, EDITOR", "the editor of edit (else vi)"),
            ]),
            ("Files", [
                ("~/.config/RVS_PersistentPrefs/DOMAIN.plist", "a user's domain: a binary property list, storage key → collection; .GlobalPreferences.plist beside it is the global domain (-g)"),
                ("/etc/xdg/RVS_PersistentPrefs/DOMAIN.plist", "system defaults, beneath every user's own values, entry by entry"),
                ("/etc/RVS_PersistentPrefs/managed/DOMAIN.plist", "forced entries, above every other value; honoured only when the file and its directory belong to root (or the reading user) and are not writable by group or others"),
                ("/usr/share/RVS_PersistentPrefs/schemas/DOMAIN.plist", "an app's schema, installed by its package: each entry's type, default, range or allowed values and description, read by list-keys, describe, range, write and verify"),
                ("DOMAIN.plist.lock", "the lock file beside a domain that writers hold; none is left in the system or managed directories"),
            ]),
            ("Exit status", [
                ("0", "success, also when an administrator's file the library ignores was reported on standard error as a warning"),
                ("1", "a failure: a domain, key or entry that does not exist, a value refused, a file that cannot be read or written, find matching nothing, verify rejecting a file"),
                ("2", "bad usage: an unknown verb or option, a missing or extra argument"),
            ]),
        ]
    }

    /// The date of this version's manual page.
    package static let manualDate = "2026-12-01"

    /// Options that every verb takes.
    package static let commonOptions: [VerbOption] = [
        VerbOption(name: "--directory PATH", meaning: "the preferences directory to inspect (see The directory)"),
        VerbOption(name: "--etcd URL[,URL...]", meaning: "inspect the domains kept in the etcd cluster at these client URLs instead (see Sharing Across Machines); the etcd user comes from ETCD_USER and ETCD_PASSWORD, a private CA from ETCD_CA_FILE, the most an operation may take from ETCD_TIMEOUT (seconds, 5 unless set)"),
        VerbOption(name: "--system", meaning: "the system-wide defaults instead of the user's domains: the files in the first directory of $XDG_CONFIG_DIRS (default /etc/xdg), in RVS_PersistentPrefs/, written as mode 0644 files in 0755 directories with no lock file left beside them"),
        VerbOption(name: "--managed", meaning: "the entries an administrator forces: the files of the managed directory ($RVS_PREFS_MANAGED_DIRECTORY, default /etc/RVS_PersistentPrefs/managed), written as --system writes; the library honours them only when root (or the reading user) owns them"),
        VerbOption(name: "--user NAME", meaning: "act on another user's domains as that user (needs root, as crontab -u): the process becomes the user before reading or writing, so the files stay the user's; the directory is ~NAME/.config/RVS_PersistentPrefs unless --directory names another"),
        VerbOption(name: "--dry-run", meaning: "for a verb that writes: print what would change (- and + lines for each storage key, or the file that would be removed) and change nothing"),
        VerbOption(name: "--help", meaning: "what the inspector, or one verb, does and takes"),
        VerbOption(name: "--version", meaning: "the version of the harness"),
    ]

    package static let synopsis = "\(Tool.command) [--directory PATH | --system | --managed | --etcd URL[,URL...]] [--user NAME] [--dry-run] VERB [ARGUMENTS...]"

    /// Where the meaning of a form starts in the terminal's list.
    private static let column = 38
    private static let width = 100

    // MARK: The terminal

    /// What `harness defaults --help` and `help` print.
    package static var usage: String {
        var lines = ["usage: \(synopsis)", "", paragraph(description, width: width), "", "Verbs:"]
        for verb in DefaultsVerbs.all {
            lines += verb.forms.map { hanging($0.synopsis, $0.meaning) }
        }
        lines += ["", "Options:"] + commonOptions.map { hanging($0.name, $0.meaning) }
        lines += ["  (and each verb's own: \(Tool.command) help VERB)"]
        for section in sections {
            lines += ["", section.title + ":"] + section.paragraphs.map { paragraph($0, indent: "  ", width: width) }
        }
        for section in termSections {
            lines += ["", section.title + ":"] + section.terms.map { hanging($0.term, $0.meaning) }
        }
        lines += ["", "Examples:"] + DefaultsVerbs.all.compactMap(\.examples.first).map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// What `help VERB` and `VERB --help` print.
    package static func usage(of verb: DefaultsVerb) -> String {
        let options = verb.options.isEmpty ? "" : " [" + verb.options.map(\.name).joined(separator: "] [") + "]"
        var lines = verb.forms.enumerated().map { number, form in
            (number == 0 ? "usage: " : "       ") + "\(Tool.command) " + form.synopsis + options
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
    package static func manualPage() -> String {
        var page = [
            ".\\\" Generated by `\(Tool.command) help --man` from Sources/PrefsTool/DefaultsVerbs.swift and",
            ".\\\" DefaultsHelp.swift; do not edit: Scripts/check-docs.sh fails when this file differs.",
            ".TH \(Tool.manualName.uppercased()) 1 \"\(manualDate)\" \"\(Tool.command) \(HarnessVersion.number)\" \"User Commands\"",
            ".SH NAME",
            "\(Tool.manualName) \\- read and write defaults domains, like the macOS defaults command",
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
        for section in termSections {
            page += [".SH " + roff(section.title.uppercased())]
            for (term, meaning) in section.terms {
                page += [".TP", ".B " + roff(term), roff(meaning)]
            }
        }
        page += [".SH EXAMPLES"]
        for example in DefaultsVerbs.all.flatMap(\.examples) {
            page += [".PP", ".nf", roff(example), ".fi"]
        }
        page += [".SH SEE ALSO", roff(Tool.isPrefsctl
            ? "prefsctl completion bash|zsh|fish prints a shell completion script; the Debian package installs all three. The library's Administration article describes the system and managed layers."
            : "harness completion bash|zsh prints a shell completion script; prefsctl(1) is the same tool, installable."), ""]
        return page.joined(separator: "\n")
    }

    /// `text` safe as roff input: backslashes and hyphens escaped, and no line starting with a control character.
    private static func roff(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}
