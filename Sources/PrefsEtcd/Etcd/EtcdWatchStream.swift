import Foundation
import Glibc
import PrefsStorage
import Synchronization

/// A long-running etcd watch of one key (or a range of keys), on a thread of its own: events are told in
/// revision order, and after the stream breaks (a member died, lost its leader, or the connection was cut) the
/// watch is made again at the next endpoint from the revision after the last one seen, so that no change is
/// missed. When that revision has been compacted away, `onCompacted` re-reads and says where to resume.
final class EtcdWatchStream: Sendable {
    /// One change of a watched key.
    struct Event: Sendable {
        var key: [UInt8]
        var modRevision: Int64
        /// `nil` when the key was deleted.
        var value: [UInt8]?
    }

    private let client: EtcdClient
    private let key: [UInt8]
    private let timeout: Duration
    private let onEvents: @Sendable ([Event]) -> Void
    private let onCompacted: @Sendable () -> Int64
    private let onLive: @Sendable (Bool) -> Void
    /// A pipe whose reading end becomes readable when the watch is cancelled, waking the thread from any `poll()`.
    private let wake: Int32
    private let wakeWriter: Int32

    private struct State {
        var next: Int64
        var cancelled = false
    }
    private let state: PrefsMutex<State>

    /// Starts watching `key` from `startRevision` (0: from now).
    /// - Parameters:
    ///   - onEvents: The events of one watch response, in revision order.
    ///   - onCompacted: Called when the revision to resume from is gone; returns the revision to resume from.
    ///   - onLive: `true` once the watch is established (and again after each resumption), `false` when it breaks.
    init(client: EtcdClient, key: [UInt8], startRevision: Int64, timeout: Duration,
         onEvents: @escaping @Sendable ([Event]) -> Void,
         onCompacted: @escaping @Sendable () -> Int64,
         onLive: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.client = client
        self.key = key
        self.timeout = timeout
        self.onEvents = onEvents
        self.onCompacted = onCompacted
        self.onLive = onLive
        var pipeEnds: [Int32] = [-1, -1]
        _ = pipe(&pipeEnds)
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = pipeEnds[0]
        wakeWriter = pipeEnds[1]
        state = PrefsMutex(State(next: startRevision))
        let thread = Thread { [self] in run() }
        thread.name = "PrefsEtcd watch"
        thread.start()
    }

    /// The revision the watch would resume from.
    var nextRevision: Int64 { state.withLock { $0.next } }

    /// Stops the watch; idempotent. A handler already running may finish.
    func cancel() {
        let first = state.withLock { state in
            defer { state.cancelled = true }
            return !state.cancelled
        }
        if first { _ = Glibc.write(wakeWriter, [1], 1) }
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    deinit {
        Glibc.close(wake)
        Glibc.close(wakeWriter)
    }

    private func run() {
        var pause = Duration.milliseconds(25)
        while !isCancelled {
            for endpoint in client.endpointsInTurn {
                if isCancelled { return }
                if follow(at: endpoint) { pause = .milliseconds(25) }
                onLive(false)
            }
            // Every endpoint failed: wait a little (waking at once when cancelled), longer each round.
            var fd = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, Deadline.after(pause).pollMilliseconds)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// Watches through `endpoint` until the stream ends or fails.
    /// - Returns: Whether the watch was established.
    private func follow(at endpoint: HTTPEndpoint) -> Bool {
        let setup = Deadline.after(EtcdClient.attemptLimit(of: timeout))
        var established = false
        do throws(EtcdAttempt) {
            let (connection, token) = try client.streamConnection(to: endpoint, by: setup)
            defer { connection.close() }
            var create: EtcdJSON.Object = ["key": EtcdJSON.base64(key)]
            let next = nextRevision
            if next > 0 { create["start_revision"] = String(next) }
            var request = HTTPRequest(path: "/v3/watch", body: EtcdJSON.encode(["create_request": create]))
            // A member cut off from its leader ends the stream instead of staying silent, so the watch moves on.
            request.headers.append(("Grpc-Metadata-hasleader", "true"))
            if let token { request.headers.append(("Authorization", token)) }
            let head: HTTPResponse
            do throws(HTTPError) {
                head = try connection.start(request, by: setup)
            } catch {
                throw EtcdAttempt(endpoint: endpoint, failure: .transport(error))
            }
            guard head.status == 200 else {
                let body = (try? connection.readBody(head, method: "POST", by: setup)) ?? []
                let message = (EtcdJSON.decode(body)?["message"] as? String) ?? "no message"
                if message.contains("invalid auth token") { client.forgetToken(token) }
                return false
            }
            var pending: [UInt8] = []
            // Messages are JSON objects, one a line; a chunk may hold part of one, or several. A watch may be silent
            // for ever; after `silence` the member is asked whether it still answers anything: one stopped with
            // SIGSTOP keeps the stream open and silent while the others go on without it, and the watch then moves
            // on to the next member, from the revision after the last one seen, missing no change. At least 5 s, so
            // that a short `timeout` does not make an idle watch open a connection many times a second.
            let attempt = EtcdClient.attemptLimit(of: timeout)
            let silence = max(timeout, Self.shortestSilence)
            while true {
                let chunk: [UInt8]
                do throws(HTTPError) {
                    guard try connection.awaitBytes(by: .after(silence), wake: wake) else {
                        if !isCancelled, client.answers(at: endpoint, by: .after(attempt)) { continue }
                        break
                    }
                    // Once a chunk has begun, the rest of it comes at once from a member that is there.
                    guard let next = try connection.nextChunk(by: .after(attempt), wake: wake) else { break }
                    chunk = next
                } catch {
                    break
                }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    guard !line.isEmpty else { continue }
                    switch handle(line) {
                    case .established: established = true; onLive(true)
                    case .continue: break
                    case .end: return established
                    }
                }
                if isCancelled { break }
            }
        } catch {
            if error.isExpiredToken { client.forgetToken(nil) }
        }
        return established
    }

    /// The least silence after which a watch asks its member whether it is still there (see `follow(at:)`).
    static let shortestSilence = Duration.seconds(5)

    private enum Outcome { case established, `continue`, end }

    private func handle(_ line: [UInt8]) -> Outcome {
        guard let message = EtcdJSON.decode(line), let result = message["result"] as? EtcdJSON.Object else { return .end }
        let compacted = EtcdJSON.int(result["compact_revision"])
        if compacted > 0 {
            let resume = onCompacted()
            state.withLock { $0.next = max($0.next, resume) }
            return .end
        }
        if (result["canceled"] as? Bool) == true { return .end }
        if (result["created"] as? Bool) == true {
            let now = EtcdJSON.revision(of: result)
            state.withLock { if $0.next == 0 { $0.next = now + 1 } }
        }
        let events: [Event] = ((result["events"] as? [Any]) ?? []).compactMap { item in
            guard let event = item as? EtcdJSON.Object, let kv = EtcdKeyValue(event["kv"]) else { return nil }
            return Event(key: kv.key, modRevision: kv.modRevision, value: (event["type"] as? String) == "DELETE" ? nil : kv.value)
        }
        if let last = events.last {
            state.withLock { $0.next = max($0.next, last.modRevision + 1) }
            onEvents(events)
        }
        return (result["created"] as? Bool) == true ? .established : .continue
    }
}
