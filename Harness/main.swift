// harness: command-line demos of RVS_PersistentPrefs, and a `defaults`-style inspector of domain files.
//
// Each subcommand lives in a file of its own; this file only dispatches to them, handles the options
// every subcommand shares (`--directory PATH`, `--help`), and prints errors the same way for all:
// one line on standard error, then a non-zero exit status (2 for bad usage, 1 for a failure).

import Foundation
import Glibc

/// One subcommand: what `harness --help` says of it, its own `--help` text, and what runs it.
///
/// `run` gets the arguments after the subcommand's name (with `--directory` and `--help` already
/// taken out) and either returns, for exit status 0, or throws: a ``HarnessError`` carries its own
/// message and exit status; any other error is printed with its description, exit status 1.
struct Subcommand {
    let summary: String
    let usage: String
    let run: (_ arguments: [String], _ context: HarnessContext) throws -> Void
}

/// The subcommands, in the order `harness --help` lists them.
let subcommands: KeyValuePairs<String, Subcommand> = [
    "tour": Subcommand(summary: Tour.summary, usage: Tour.usage, run: Tour.run),
    "settings-bridge": Subcommand(summary: SettingsBridge.summary, usage: SettingsBridge.usage, run: SettingsBridge.run),
    "bindings": Subcommand(summary: Bindings.summary, usage: Bindings.usage, run: Bindings.run),
    "share": Subcommand(summary: Share.summary, usage: Share.usage, run: Share.run),
    "defaults": Subcommand(summary: DefaultsInspector.summary, usage: DefaultsInspector.usage, run: DefaultsInspector.run),
    "bench": Subcommand(summary: BenchCommand.summary, usage: BenchCommand.help, run: { arguments, context in
        let status = BenchCommand.run(arguments + (context.directory.map { ["--directory", $0] } ?? []))
        if status != 0 { throw HarnessError.alreadyReported(status: status) }
    }),
]

/// What `harness --help` prints.
@MainActor
func globalUsage() -> String {
    let width = subcommands.map(\.key.count).max() ?? 0
    let list = subcommands.map { name, command in
        "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + command.summary
    }
    return """
        usage: harness [SUBCOMMAND] [--directory PATH] [ARGUMENTS...]

        Command-line demos of RVS_PersistentPrefs, a validated preferences bucket kept in property-list
        files, and an inspector for those files in the manner of the `defaults` command.

        With no subcommand, runs the tour: every demo below, one after another, explained step by step.

        \(list.joined(separator: "\n"))

        Options for every subcommand:
          --directory PATH  the preferences directory to use. The demos otherwise work in a fresh private
                            temporary directory that they remove at the end, and never touch ~/.config;
                            `defaults` otherwise inspects the directory the library itself would use.
          --help            what a subcommand does and takes (also: harness help SUBCOMMAND)
        """
}

/// The options shared by every subcommand, taken out of the arguments before the subcommand sees them.
struct SharedOptions {
    var directory: String?
    var wantsHelp = false
    var remaining: [String] = []

    /// Finds `--directory PATH` (or `--directory=PATH`) and `--help` anywhere before a `--`, which ends
    /// option processing (so that a value such as `--help` can still be passed after it).
    init(parsing arguments: [String]) throws(HarnessError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded {
                remaining.append(argument)
            } else if argument == "--" {
                optionsEnded = true
            } else if argument == "--help" || (argument == "-h" && arguments.count <= 2) {
                wantsHelp = true
            } else if argument == "--directory" {
                guard index < arguments.count else { throw .usage("--directory needs a path") }
                directory = arguments[index]
                index += 1
            } else if argument.hasPrefix("--directory=") {
                directory = String(argument.dropFirst("--directory=".count))
            } else {
                remaining.append(argument)
            }
        }
        if let directory {
            guard !directory.isEmpty else { throw .usage("--directory needs a non-empty path") }
            self.directory = absolutePath(directory)
        }
    }
}

/// Runs the harness with `arguments` (without the program name) and returns the exit status.
@MainActor
func runHarness(_ arguments: [String]) -> Int32 {
    // The shared options may come before or after the subcommand's name: `harness --directory D defaults read`.
    let options: SharedOptions
    do {
        options = try SharedOptions(parsing: arguments)
    } catch {
        Console.complain("harness: \(error.message)")
        return error.status
    }
    var arguments = options.remaining
    let namedSubcommand = arguments.first.map { !$0.hasPrefix("-") } ?? false
    let name = namedSubcommand ? arguments.removeFirst() : "tour"
    if name == "help" {
        // `harness help` and `harness help SUBCOMMAND`.
        guard let topic = arguments.first else {
            Console.say(globalUsage())
            return 0
        }
        guard let command = subcommands.first(where: { $0.key == topic })?.value else {
            Console.complain("harness: unknown subcommand '\(topic)'; run 'harness --help' for the list")
            return 2
        }
        Console.say(command.usage)
        return 0
    }
    guard let command = subcommands.first(where: { $0.key == name })?.value else {
        Console.complain("harness: unknown subcommand '\(name)'; run 'harness --help' for the list")
        return 2
    }
    if options.wantsHelp {
        // Without a subcommand name, `harness --help` is the overview, not the tour's help.
        Console.say(namedSubcommand ? command.usage : globalUsage())
        return 0
    }
    let prefix = name == "tour" ? "harness" : "harness \(name)"
    do {
        try command.run(arguments, HarnessContext(directory: options.directory))
        return 0
    } catch let error as HarnessError {
        if !error.message.isEmpty { Console.complain("\(prefix): \(error.message)") }
        return error.status
    } catch {
        Console.complain("\(prefix): \(error)")
        return 1
    }
}

// A peer that went away must be reported as an error by the write, not kill this process.
signal(SIGPIPE, SIG_IGN)
exit(runHarness(Array(CommandLine.arguments.dropFirst())))
