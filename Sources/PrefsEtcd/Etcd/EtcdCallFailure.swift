/// How one call to one endpoint failed, in words for a message: a transport failure, or etcd's own error.
struct EtcdAttempt: Error, Sendable, CustomStringConvertible {
    var endpoint: HTTPEndpoint
    var failure: Failure

    enum Failure: Sendable {
        case transport(HTTPError)
        /// The gateway's error: the gRPC code and etcd's message (which holds no value or credential).
        case server(status: Int, code: Int, message: String)
    }

    var description: String {
        switch failure {
        case .transport(let error): return "\(endpoint) \(error)"
        case .server(let status, _, let message): return "\(endpoint) answered \(status): \(message)"
        }
    }

    /// Whether the server may have applied the request.
    var outcomeUnknown: Bool {
        switch failure {
        case .transport(let error): return error.outcomeUnknown
        case .server(_, _, let message):
            // Refused before being proposed to the cluster: the request did nothing.
            let definite = ["request is too large", "invalid auth token", "permission denied", "no leader",
                            "user name or password is invalid", "authentication failed", "too many requests", "authentication is not enabled",
                            "requested lease not found", "revision of auth store is old", "not capable",
                            "user name is empty", "compacted"]
            return !definite.contains { message.contains($0) }
        }
    }

    /// Whether trying again (here or at another endpoint) cannot help: the request itself is refused.
    var isFinal: Bool {
        if case .transport(.responseTooLarge) = failure { return true }
        guard case .server(_, _, let message) = failure else { return false }
        return ["request is too large", "permission denied", "user name or password is invalid", "authentication failed",
                "authentication is not enabled", "user name is empty"].contains { message.contains($0) }
    }

    var isExpiredToken: Bool {
        guard case .server(_, _, let message) = failure else { return false }
        return message.contains("invalid auth token") || message.contains("revision of auth store is old")
    }

    /// Whether etcd refused the credentials or the user's rights: a setting to correct, not a member out of reach.
    var isRefusedAccess: Bool {
        guard case .server(_, _, let message) = failure else { return false }
        return ["permission denied", "user name or password is invalid", "authentication failed", "user name is empty"]
            .contains { message.contains($0) }
    }

    var isTooLarge: Bool {
        guard case .server(_, _, let message) = failure else { return false }
        return message.contains("request is too large")
    }
}

/// Why a call through every endpoint failed: each attempt, in order.
struct EtcdCallFailure: Error, Sendable {
    var attempts: [EtcdAttempt]
    /// The call gave up because an attempt's outcome is unknown (a write's request may have been applied).
    var stoppedOnUnknownOutcome: Bool

    /// Whether a request of the call may have been applied: some attempt's outcome is unknown. A call that
    /// changes something and fails so cannot say that nothing was changed.
    var mayHaveBeenApplied: Bool { attempts.contains(where: \.outcomeUnknown) }

    /// The attempts in a few words each, the same failure at the same endpoint told once.
    var summary: String {
        var seen: [String] = []
        for attempt in attempts where !seen.contains(attempt.description) { seen.append(attempt.description) }
        return seen.joined(separator: "; ")
    }
}
