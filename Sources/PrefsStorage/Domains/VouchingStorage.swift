/// A domain that needs a watch started before it can report a ``DomainStorage/generation`` (a file, an
/// administrator's file): a suite starts it at its third read, so that a process that reads once pays for
/// no watch (see ``DefaultsSuite``).
package protocol VouchingStorage: AnyObject, Sendable {
    /// Starts whatever lets the domain report a generation (a watch of its file), once; later calls do nothing.
    func startVouching()

    /// The watch engine whose generations it reports, whose count of changes a suite compares first.
    var watchEngine: WatchEngine? { get }
}

extension FixedDomainStorage {
    /// Always the same: the arguments never change.
    package var generation: UInt64? { 1 }
}

extension NoDirectoryDomainStorage {
    /// Always the same: nothing ever changes here.
    package var generation: UInt64? { 1 }
}
