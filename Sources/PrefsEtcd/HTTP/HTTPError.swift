/// Why an HTTP exchange failed, in words fit for a message (never a request or response body, which may hold
/// values or credentials). The storage layer turns these into ``PrefsError``s naming the endpoints.
enum HTTPError: Error, Sendable, CustomStringConvertible {
    /// The host name did not resolve, or no address accepted a connection.
    case connectFailed(String)
    /// A step did not finish by its deadline: `step` is `connect`, `TLS handshake`, `send` or `receive`.
    case timedOut(step: String)
    /// The peer closed the connection or reset it; `afterSending` tells whether the request had been sent
    /// (then the server may have acted on it: the outcome is unknown).
    case connectionLost(afterSending: Bool, reason: String)
    /// The response is not HTTP/1.1 as this client understands it.
    case malformedResponse(String)
    /// The response's headers or body passed the client's cap (``HTTPConnection/maximumBodySize``): refused
    /// before it was read whole. Asking again would only be answered the same.
    case responseTooLarge(String)
    /// TLS failed: the handshake, the certificate's verification or its host name.
    case tls(String)
    /// The watch or request was cancelled by its owner.
    case cancelled

    var description: String {
        switch self {
        case .connectFailed(let reason): return "could not connect: \(reason)"
        case .timedOut(let step): return "timed out in \(step)"
        case .connectionLost(let afterSending, let reason):
            return "connection lost \(afterSending ? "after the request was sent" : "before the request was sent") (\(reason))"
        case .malformedResponse(let reason): return "malformed HTTP response: \(reason)"
        case .responseTooLarge(let reason): return "HTTP response refused: \(reason)"
        case .tls(let reason): return "TLS: \(reason)"
        case .cancelled: return "cancelled"
        }
    }

    /// Whether the server may have received and acted on the request.
    var outcomeUnknown: Bool {
        switch self {
        case .connectionLost(let afterSending, _): return afterSending
        case .timedOut(let step): return step == "receive" || step == "send"
        case .malformedResponse, .responseTooLarge: return true
        default: return false
        }
    }
}
