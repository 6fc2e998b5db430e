// Which program this is: `prefsctl`, or the harness's `harness defaults` alias of the same code.
//
// Messages, help, the manual page and the completion scripts name the command the user typed, so the one
// code base speaks as `prefsctl` when installed and as `harness defaults` in the demo binary.

import Foundation

/// The command this code runs as.
package enum Tool {
    /// What a user types to run the tool: `prefsctl`, or `harness defaults` when the executable is the harness.
    package static let command: String = {
        let executable = CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "prefsctl"
        return executable == "harness" ? "harness defaults" : "prefsctl"
    }()

    /// Whether this is the installed tool rather than the harness's alias.
    package static var isPrefsctl: Bool { command == "prefsctl" }

    /// The manual page's name: `prefsctl` or `harness-defaults`.
    package static var manualName: String { command.replacingOccurrences(of: " ", with: "-") }
}
