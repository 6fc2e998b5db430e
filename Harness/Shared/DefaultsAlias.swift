// `harness defaults`: the alias, in the demo binary, of `prefsctl` (the PrefsTool target): the same entry
// point, the same verbs and messages, named `harness defaults` because that is what the user typed.

import PrefsTool

enum DefaultsAlias: Subcommand {
    static let name = "defaults"
    static let summary = "read and write domain files, like the macOS `defaults` command (the same code as prefsctl)"

    static var usage: String { DefaultsInspector.usage }

    static func usage(for arguments: Arguments) throws(HarnessError) -> String {
        try DefaultsInspector.usage(for: arguments)
    }

    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        try DefaultsInspector.run(arguments, directory: context.directory)
    }
}
