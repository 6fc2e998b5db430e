// harness: command-line demos of RVS_PersistentPrefs, and a `defaults`-style inspector of domain files.
//
// Each subcommand lives in a file of its own and follows the `Subcommand` contract; this file only
// dispatches to them, takes out the options every subcommand shares (`--directory PATH`, `--help`), and
// prints errors the same way for all: one line on standard error, then a non-zero exit status (2 for
// bad usage, 1 for a failure).

import Foundation
import Glibc
import PrefsTool


/// What `harness --help` prints.
@MainActor
func globalUsage() -> String {
    let width = Subcommands.all.map { $0.name.count }.max() ?? 0
    let list = Subcommands.all.map { command in
        "  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + command.summary
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
          --version         the version of the harness
        """
}

/// The subcommand called `name`.
/// - Throws: A usage error when there is none.
@MainActor
func subcommand(named name: String) throws(HarnessError) -> any Subcommand.Type {
    guard let command = Subcommands.all.first(where: { $0.name == name }) else {
        throw .usage("unknown subcommand '\(name)'; run 'harness --help' for the list")
    }
    return command
}

/// Runs the harness with `words` (the arguments without the program name).
/// - Returns: What the error messages start with, and the exit status.
@MainActor
func dispatch(_ words: [String]) -> (prefix: String, status: Int32) {
    var prefix = "harness"
    do {
        // The shared options may come before or after the subcommand's name: `harness --directory D defaults read`.
        var arguments = Arguments(words)
        let directory = try arguments.option("--directory", needs: "a path").map { path throws(HarnessError) in
            guard !path.isEmpty else { throw .usage("--directory needs a non-empty path") }
            return absolutePath(path)
        }
        if arguments.flag("--version") {
            Console.say(HarnessVersion.text)
            return (prefix, 0)
        }
        let wantsHelp = arguments.flag("--help") || (words.count <= 2 && arguments.flag("-h"))
        let named = arguments.remaining.first.map { !$0.hasPrefix("-") } ?? false
        let name = named ? arguments.next()! : Tour.name
        if name == "help" {
            // `harness help` and `harness help SUBCOMMAND`.
            Console.say(try arguments.next().map { topic throws(HarnessError) in try subcommand(named: topic).usage(for: arguments) } ?? globalUsage())
            return (prefix, 0)
        }
        let command = try subcommand(named: name)
        if wantsHelp {
            // Without a subcommand name, `harness --help` is the overview, not the tour's help.
            Console.say(named ? try command.usage(for: arguments) : globalUsage())
            return (prefix, 0)
        }
        if name != Tour.name { prefix = "harness \(name)" }
        try command.run(arguments, HarnessContext(directory: directory))
        return (prefix, 0)
    } catch let error as HarnessError {
        if !error.message.isEmpty { Console.complain("\(prefix): \(error.message)") }
        return (prefix, error.status)
    } catch {
        Console.complain("\(prefix): \(error)")
        return (prefix, 1)
    }
}

/// Runs the harness and returns the exit status: output that could not be written is a failure too.
@MainActor
func runHarness(_ words: [String]) -> Int32 {
    let (prefix, status) = dispatch(words)
    if status == 0, let failure = Console.outputFailure {
        Console.complain("\(prefix): cannot write to standard output: \(failure)")
        return 1
    }
    return status
}

// A peer that went away must be reported as an error by the write, not kill this process.
signal(SIGPIPE, SIG_IGN)
exit(runHarness(Array(CommandLine.arguments.dropFirst())))
