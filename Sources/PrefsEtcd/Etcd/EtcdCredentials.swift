/// An etcd user's name and password, for a cluster with authentication enabled.
///
/// The password is sent only to authenticate (`/v3/auth/authenticate`), over the connection of the endpoint
/// being tried; the token etcd returns is kept in memory and renewed when it expires. Neither the password nor
/// the token ever appears in a message, a `description` or a file: printing or dumping the value shows the user
/// name only.
public struct EtcdCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The etcd user name (`etcdctl user add NAME`). Its roles must grant `readwrite` on the domain's key as a
    /// prefix (`etcdctl role grant-permission ROLE --prefix=true readwrite KEY`): a write also puts
    /// `KEY\0last-write`, and the repair of an unreadable value `KEY.unreadable-<seconds>`. The only part of the
    /// credentials that `description`, `dump` and error messages show.
    public let user: String
    let password: String

    /// Credentials of the etcd user `user`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `etcd user NAME`, without the password.
    public var description: String { "etcd user \(user)" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The user name only, so that `dump` does not show the password.
    public var customMirror: Mirror { Mirror(self, children: ["user": user]) }
}
