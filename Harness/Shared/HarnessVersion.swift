// The version `harness --version` prints: the package's, as CHANGELOG.md names it (a test compares them).

enum HarnessVersion {
    /// The package version this harness was built from.
    static let number = "1.0.0"

    /// What `--version` prints.
    static var text: String { "harness \(number) (RVS_PersistentPrefs \(number))" }
}
