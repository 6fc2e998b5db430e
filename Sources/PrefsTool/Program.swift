// `prefsctl`'s top level: the options every verb shares, `--version` and `--help`, then the verb, through
// the same entry point as `harness defaults` (DefaultsInspector.run). Errors are one line on standard error
// and an exit status: 2 for bad usage, 1 for a failure.

import Foundation
import Glibc

/// The whole program, as `prefsctl`'s main.swift runs it.
package enum Program {
    /// Runs the tool with `words` (the arguments without the program's name) and returns the exit status;
    /// output that could not be written is a failure too.
    package static func run(_ words: [String]) -> Int32 {
        let status: Int32
        do {
            try dispatch(words)
            status = 0
        } catch {
            if !error.message.isEmpty { Console.complain("\(Tool.command): \(error.message)") }
            status = error.status
        }
        if status == 0, let failure = Console.outputFailure {
            Console.complain("\(Tool.command): cannot write to standard output: \(failure)")
            return 1
        }
        return status
    }

    private static func dispatch(_ words: [String]) throws(HarnessError) {
        // What the completion scripts call: every word after it is the command line being typed, options included.
        if words.first == "__complete" { return Completer.run(Array(words.dropFirst())) }
        var arguments = Arguments(words)
        let directory = try directoryOption(&arguments)
        if arguments.flag("--version") {
            Console.say(HarnessVersion.text)
            return
        }
        if arguments.flag("--help") || arguments.flag("-h") {
            Console.say(try DefaultsInspector.usage(for: arguments))
            return
        }
        try DefaultsInspector.run(arguments, directory: directory)
    }

    /// `--directory PATH`, made absolute as a shell user means a relative path.
    package static func directoryOption(_ arguments: inout Arguments) throws(HarnessError) -> String? {
        try arguments.option("--directory", needs: "a path").map { path throws(HarnessError) in
            guard !path.isEmpty else { throw .usage("--directory needs a non-empty path") }
            return absolutePath(path)
        }
    }
}
