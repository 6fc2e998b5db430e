/// A watch started by ``DomainStorage/watchChanges(_:)``: changes are told until it is cancelled or
/// released.
///
/// ## Topics
///
/// ### Stopping the Watch
/// - ``cancel()``
public protocol DomainChangeWatch: AnyObject, Sendable {
    /// Stops telling of changes; idempotent. A call already running may finish.
    func cancel()
}

