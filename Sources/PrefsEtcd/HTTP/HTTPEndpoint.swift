import Foundation

/// Where an HTTP server listens: `http` or `https`, a host name or IP address, and a port.
struct HTTPEndpoint: Sendable, Hashable, CustomStringConvertible {
    let isSecure: Bool
    let host: String
    let port: Int

    /// `nil` unless `url` is an `http` or `https` URL with a host and no user or password (credentials are
    /// given apart, so that no URL printed in a message can carry them).
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else { return nil }
        isSecure = scheme == "https"
        // URL keeps the brackets of an IPv6 literal in `host` on some versions.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = url.port ?? (isSecure ? 443 : 80)
    }

    /// The value of the `Host` header.
    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `http://host:port`, for messages.
    var description: String { "\(isSecure ? "https" : "http")://\(hostHeader)" }
}
