import Foundation

/// Bare calls to one member's gateway over one kept-alive connection: no failover, retries, authentication or
/// JSON, only the HTTP framing. The floor that `harness bench --etcd` measures the storage against; not part of
/// the public API.
package final class EtcdBareConnection: Sendable {
    private let connection: HTTPConnection

    /// Connects to `url` (`http` only: the bench's own loopback cluster).
    package init(_ url: URL) throws {
        guard let endpoint = HTTPEndpoint(url) else { throw HTTPError.connectFailed("not an http URL") }
        connection = try HTTPConnection(to: endpoint, tls: nil, by: .after(.seconds(5)))
    }

    /// POSTs `body` to `path` and returns the response body.
    package func post(_ path: String, _ body: [UInt8]) throws -> [UInt8] {
        let response = try connection.exchange(HTTPRequest(path: path, body: body), by: .after(.seconds(5)))
        guard response.status == 200 else { throw HTTPError.malformedResponse("status \(response.status)") }
        return response.body
    }

    /// Starts a long response (a watch) to `body` at `path`.
    package func startStream(_ path: String, _ body: [UInt8]) throws {
        let head = try connection.start(HTTPRequest(path: path, body: body), by: .after(.seconds(5)))
        guard head.status == 200 else { throw HTTPError.malformedResponse("status \(head.status)") }
    }

    /// The next piece of the long response, waiting at most `timeout`.
    package func nextPiece(timeout: Duration = .seconds(5)) throws -> [UInt8] {
        guard let piece = try connection.nextChunk(by: .after(timeout), wake: nil) else {
            throw HTTPError.connectionLost(afterSending: true, reason: "stream ended")
        }
        return piece
    }

    package func close() { connection.close() }
}
