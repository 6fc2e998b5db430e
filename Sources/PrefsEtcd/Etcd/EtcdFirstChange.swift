extension EtcdClient {
    /// The events of the first revision after `revision` that changed a key in `[key, rangeEnd)`: what tells a
    /// writer whose request's outcome is unknown whether its compare-and-swap was the one applied (only the first
    /// change after the revision it compared with can be).
    /// - Returns: The events of that revision, or `nil` when that history has been compacted away.
    /// - Throws: What the last endpoint tried failed with, once `deadline` has passed.
    func firstChange(of key: [UInt8], rangeEnd: [UInt8], after revision: Int64, by deadline: Deadline,
                     timeout: Duration) throws(EtcdCallFailure) -> [EtcdWatchStream.Event]? {
        var attempts: [EtcdAttempt] = []
        while !deadline.hasPassed {
            for endpoint in endpointsInTurn {
                let attemptDeadline = deadline.capped(at: .after(Self.attemptLimit(of: timeout)))
                do throws(EtcdAttempt) {
                    return try firstChange(of: key, rangeEnd: rangeEnd, after: revision, at: endpoint, by: attemptDeadline)
                } catch {
                    attempts.append(error)
                }
                if deadline.hasPassed { break }
            }
        }
        throw EtcdCallFailure(attempts: attempts, stoppedOnUnknownOutcome: false)
    }

    private func firstChange(of key: [UInt8], rangeEnd: [UInt8], after revision: Int64, at endpoint: HTTPEndpoint,
                             by deadline: Deadline) throws(EtcdAttempt) -> [EtcdWatchStream.Event]? {
        let (connection, token) = try streamConnection(to: endpoint, by: deadline)
        defer { connection.close() }
        let create: EtcdJSON.Object = ["key": EtcdJSON.base64(key), "range_end": EtcdJSON.base64(rangeEnd),
                                       "start_revision": String(revision + 1)]
        var request = HTTPRequest(path: "/v3/watch", body: EtcdJSON.encode(["create_request": create]))
        request.headers.append(("Grpc-Metadata-hasleader", "true"))
        if let token { request.headers.append(("Authorization", token)) }
        do throws(HTTPError) {
            let head = try connection.start(request, by: deadline)
            guard head.status == 200 else {
                throw HTTPError.malformedResponse("watch refused with status \(head.status)")
            }
            var pending: [UInt8] = []
            while let chunk = try connection.nextChunk(by: deadline, wake: nil) {
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    guard let message = EtcdJSON.decode(line), let result = message["result"] as? EtcdJSON.Object else {
                        throw HTTPError.malformedResponse("unexpected watch message")
                    }
                    if EtcdJSON.int(result["compact_revision"]) > 0 { return nil }
                    if (result["canceled"] as? Bool) == true { throw HTTPError.connectionLost(afterSending: true, reason: "watch cancelled") }
                    let events: [EtcdWatchStream.Event] = ((result["events"] as? [Any]) ?? []).compactMap { item in
                        guard let event = item as? EtcdJSON.Object, let kv = EtcdKeyValue(event["kv"]) else { return nil }
                        return .init(key: kv.key, modRevision: kv.modRevision,
                                     value: (event["type"] as? String) == "DELETE" ? nil : kv.value)
                    }
                    if let first = events.first?.modRevision {
                        return events.filter { $0.modRevision == first }
                    }
                }
            }
            throw HTTPError.connectionLost(afterSending: true, reason: "watch ended")
        } catch {
            throw EtcdAttempt(endpoint: endpoint, failure: .transport(error))
        }
    }
}
