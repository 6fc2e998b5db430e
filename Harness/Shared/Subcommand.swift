// The contract every subcommand of the harness follows.

import PrefsTool

/// One subcommand: its name, what `harness --help` says of it, its own `--help` text, and what runs it.
///
/// `run` gets the arguments after the subcommand's name, with the options every subcommand shares
/// (`--directory`, `--help`) already taken out, and either returns, for exit status 0, or throws: a
/// ``HarnessError`` carries its own message and exit status; any other error is printed with its
/// description, exit status 1.
protocol Subcommand {
    /// The word that selects it: `harness NAME`.
    static var name: String { get }
    /// One line for the list of `harness --help`.
    static var summary: String { get }
    /// What `harness NAME --help` prints, starting with `usage: harness `.
    static var usage: String { get }
    /// Runs it with `arguments`, the preferences directory in `context`.
    static func run(_ arguments: Arguments, _ context: HarnessContext) throws
    /// What `harness NAME WORDS... --help` prints: ``usage``, unless the words name a part of it with
    /// help of its own (a verb of `defaults`).
    static func usage(for arguments: Arguments) throws(HarnessError) -> String
}

extension Subcommand {
    static func usage(for arguments: Arguments) throws(HarnessError) -> String { usage }
}

/// What every subcommand is told besides its own arguments.
struct HarnessContext {
    /// The directory given with `--directory`, made absolute; `nil` when none was given.
    let directory: String?
}

enum Subcommands {
    /// The subcommands, in the order `harness --help` lists them.
    static var all: [any Subcommand.Type] { [Tour.self, SettingsBridge.self, Bindings.self, Share.self, DefaultsAlias.self, BenchCommand.self, CompletionCommand.self, CheckCommand.self] }
}
