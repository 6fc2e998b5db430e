// The version `prefsctl --version` and `harness --version` print: the package's, as CHANGELOG.md names it (a
// test compares them).

import Foundation

/// The package's version, as the tools print it.
package enum HarnessVersion {
    /// The package version this tool was built from.
    package static let number = "1.0.0"

    /// What `--version` prints: `prefsctl 1.0.0 (RVS_PersistentPrefs 1.0.0)`, or `harness …` from the harness.
    package static var text: String { "\(Tool.isPrefsctl ? "prefsctl" : "harness") \(number) (RVS_PersistentPrefs \(number))" }
}
