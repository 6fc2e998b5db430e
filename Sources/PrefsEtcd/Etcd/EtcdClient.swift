import Foundation
import PrefsStorage
import Synchronization

/// Calls to an etcd cluster's JSON gateway through its endpoints in turn, over kept-alive connections, every
/// call bounded by a deadline. Authenticates when given credentials, and renews the token when etcd says it
/// expired.
final class EtcdClient: Sendable {
    let endpoints: [HTTPEndpoint]
    private let tls: TLSContext?
    private let credentials: EtcdCredentials?

    private struct State {
        var idle: [HTTPEndpoint: [HTTPConnection]] = [:]
        /// The endpoint tried first: the last one that answered.
        var preferred = 0
        var token: String?
    }
    private let state = PrefsMutex(State())
    /// The calls made so far (each ``call(_:_:by:timeout:idempotent:)``, whatever its attempts), so that what
    /// an operation costs in round trips can be checked from outside.
    private let calls = Atomic<Int>(0)
    var callsMade: Int { calls.load(ordering: .relaxed) }

    init(endpoints: [HTTPEndpoint], caFile: String?, credentials: EtcdCredentials?) throws(HTTPError) {
        self.endpoints = endpoints
        self.credentials = credentials
        tls = endpoints.contains { $0.isSecure } ? try TLSContext(caFile: caFile) : nil
    }

    /// The most one attempt at one endpoint may take, so that a member that accepts but never answers (cut off
    /// from the others) leaves time to try the next one.
    static func attemptLimit(of timeout: Duration) -> Duration { max(timeout * 0.4, .milliseconds(500)) }

    /// The least time left for which an attempt is still started.
    static let shortestAttempt = Duration.milliseconds(100)

    /// Calls `path` with `body`, trying the endpoints in turn (with a growing pause after each round) until
    /// one answers or `deadline` passes.
    /// - Parameter idempotent: When `false`, gives up at the first attempt whose outcome is unknown (the
    ///   request reached a member that may have applied it), so that the caller can find out before retrying.
    func call(_ path: String, _ body: EtcdJSON.Object, by deadline: Deadline, timeout: Duration,
              idempotent: Bool = true) throws(EtcdCallFailure) -> (response: EtcdJSON.Object, endpoint: HTTPEndpoint) {
        calls.add(1, ordering: .relaxed)
        var attempts: [EtcdAttempt] = []
        var pause = Duration.milliseconds(20)
        let first = state.withLock { $0.preferred }
        var round = 0
        while true {
            for offset in 0..<endpoints.count {
                // An attempt cut short by the deadline would leave a write's outcome unknown for nothing.
                if deadline.remaining < Self.shortestAttempt { throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: false) }
                let index = (first + offset) % endpoints.count
                let endpoint = endpoints[index]
                let attemptDeadline = deadline.capped(at: .after(Self.attemptLimit(of: timeout)))
                do throws(EtcdAttempt) {
                    let response = try callAuthenticated(path, body, at: endpoint, by: attemptDeadline)
                    state.withLock { $0.preferred = index }
                    return (response, endpoint)
                } catch {
                    attempts.append(error)
                    if error.isFinal { throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: false) }
                    if !idempotent && error.outcomeUnknown {
                        state.withLock { $0.preferred = (index + 1) % endpoints.count }
                        throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: true)
                    }
                }
                if deadline.hasPassed { throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: false) }
            }
            round += 1
            let sleep = min(pause, deadline.remaining)
            if sleep <= .zero { throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: false) }
            Thread.sleep(forTimeInterval: Double(sleep.components.seconds) + Double(sleep.components.attoseconds) * 1e-18)
            pause = min(pause * 2, .milliseconds(400))
        }
    }

    /// One call at one endpoint, authenticating first when needed and once more when the token expired.
    private func callAuthenticated(_ path: String, _ body: EtcdJSON.Object, at endpoint: HTTPEndpoint,
                                   by deadline: Deadline) throws(EtcdAttempt) -> EtcdJSON.Object {
        guard let credentials else { return try callOnce(path, body, at: endpoint, token: nil, by: deadline) }
        for _ in 0..<2 {
            let token = try currentToken(credentials, at: endpoint, by: deadline)
            do throws(EtcdAttempt) {
                return try callOnce(path, body, at: endpoint, token: token, by: deadline)
            } catch where error.isExpiredToken {
                state.withLock { if $0.token == token { $0.token = nil } }
            }
        }
        return try callOnce(path, body, at: endpoint, token: state.withLock { $0.token }, by: deadline)
    }

    /// One request and its response over a kept-alive connection to `endpoint`.
    func callOnce(_ path: String, _ body: EtcdJSON.Object, at endpoint: HTTPEndpoint, token: String?,
                  by deadline: Deadline) throws(EtcdAttempt) -> EtcdJSON.Object {
        var request = HTTPRequest(path: path, body: EtcdJSON.encode(body))
        // A member cut off from its leader refuses at once ("no leader"), before proposing anything, instead of
        // holding the request until its own timeout with an outcome nobody can know.
        request.headers.append(("Grpc-Metadata-hasleader", "true"))
        if let token { request.headers.append(("Authorization", token)) }
        let connection: HTTPConnection
        let response: HTTPResponse
        do throws(HTTPError) {
            connection = try checkOut(endpoint, by: deadline)
            response = try connection.exchange(request, by: deadline)
        } catch {
            throw EtcdAttempt(endpoint: endpoint, failure: .transport(error))
        }
        checkIn(connection)
        let object = EtcdJSON.decode(response.body)
        guard response.status == 200, let object, object["error"] == nil else {
            let message = (object?["message"] as? String) ?? (object?["error"] as? String) ?? "no message"
            throw EtcdAttempt(endpoint: endpoint, failure: .server(status: response.status,
                                                                 code: Int(EtcdJSON.int(object?["code"])), message: message))
        }
        return object
    }

    /// An idle connection to `endpoint` that the server has not closed, or a new one.
    func checkOut(_ endpoint: HTTPEndpoint, by deadline: Deadline) throws(HTTPError) -> HTTPConnection {
        while let idle = state.withLock({ $0.idle[endpoint]?.popLast() }) {
            if idle.canBeReused { return idle }
            idle.close()
        }
        return try HTTPConnection(to: endpoint, tls: tls, by: deadline)
    }

    /// Keeps `connection` for the next call when it can carry one.
    func checkIn(_ connection: HTTPConnection) {
        guard connection.canBeReused else { connection.close(); return }
        let endpoint = connection.endpoint
        state.withLock { $0.idle[endpoint, default: []].append(connection) }
    }

    /// The token in use, or a new one from `/v3/auth/authenticate` at `endpoint` when there is none.
    private func currentToken(_ credentials: EtcdCredentials, at endpoint: HTTPEndpoint,
                              by deadline: Deadline) throws(EtcdAttempt) -> String? {
        if let token = state.withLock({ $0.token }) { return token }
        let answer = try callOnce("/v3/auth/authenticate", ["name": credentials.user, "password": credentials.password],
                                  at: endpoint, token: nil, by: deadline)
        let token = answer["token"] as? String
        state.withLock { $0.token = token }
        return token
    }

    /// Whether `endpoint` answers anything by `deadline` (its `/version`, which needs no quorum and no credentials):
    /// a member stopped with SIGSTOP answers nothing, though its kernel keeps its connections open.
    func answers(at endpoint: HTTPEndpoint, by deadline: Deadline) -> Bool {
        do throws(HTTPError) {
            let connection = try HTTPConnection(to: endpoint, tls: tls, by: deadline)
            defer { connection.close() }
            _ = try connection.start(HTTPRequest(method: "GET", path: "/version"), by: deadline)
            return true
        } catch {
            return false
        }
    }

    /// A new connection for a long stream (a watch), with the current token.
    func streamConnection(to endpoint: HTTPEndpoint, by deadline: Deadline) throws(EtcdAttempt) -> (HTTPConnection, String?) {
        let token = try credentials.map { (credentials) throws(EtcdAttempt) -> String? in
            try currentToken(credentials, at: endpoint, by: deadline)
        } ?? nil
        do throws(HTTPError) {
            return (try HTTPConnection(to: endpoint, tls: tls, by: deadline), token)
        } catch {
            throw EtcdAttempt(endpoint: endpoint, failure: .transport(error))
        }
    }

    /// Forgets the token, so that the next call authenticates again (after etcd refused it).
    func forgetToken(_ token: String?) { state.withLock { if $0.token == token { $0.token = nil } } }

    /// The endpoint tried first, and the others in order after it.
    var endpointsInTurn: [HTTPEndpoint] {
        let first = state.withLock { $0.preferred }
        return (0..<endpoints.count).map { endpoints[(first + $0) % endpoints.count] }
    }
}
