import PrefsStorage
import Synchronization

/// One kept-alive HTTP/1.1 connection to one endpoint: requests with `Content-Length` bodies; responses
/// delimited by `Content-Length`, chunked (read whole, or piece by piece for a long stream such as etcd's
/// watch), or by the end of the connection.
///
/// Used by one caller at a time (a pool hands it out); the mutex holds its state so that it can move between
/// threads, and is held for a whole step.
final class HTTPConnection: Sendable {
    let endpoint: HTTPEndpoint
    private let state: PrefsMutex<HTTPWire>

    /// The most a response body may hold: far beyond any domain (etcd's own limit is 1.5 MiB by default, base64
    /// and JSON make it about 2 MiB), small enough that a misbehaving server cannot exhaust memory.
    static let maximumBodySize = 128 << 20

    /// Connects, and for `https` completes a verified TLS handshake, by `deadline`.
    init(to endpoint: HTTPEndpoint, tls: TLSContext?, by deadline: Deadline) throws(HTTPError) {
        self.endpoint = endpoint
        let socket = try TCPSocket(host: endpoint.host, port: endpoint.port, by: deadline)
        let stream: any ByteStream
        if endpoint.isSecure {
            guard let tls else { throw .tls("no TLS context for \(endpoint)") }
            stream = try TLSStream(over: socket, host: endpoint.host, context: tls, by: deadline)
        } else {
            stream = socket
        }
        state = PrefsMutex(HTTPWire(endpoint: endpoint, stream: stream))
    }

    /// Whether the connection can carry another request: its last response was read whole, and the server has
    /// not closed it meanwhile.
    var canBeReused: Bool { state.withLock { $0.canBeReused } }

    func close() { state.withLock { $0.close() } }

    /// Sends `request` and reads the whole response by `deadline`.
    func exchange(_ request: HTTPRequest, by deadline: Deadline) throws(HTTPError) -> HTTPResponse {
        try state.withLock { (wire: inout HTTPWire) throws(HTTPError) -> HTTPResponse in
            try wire.send(request, by: deadline)
            var response = try wire.readHead(method: request.method, by: deadline, wake: nil)
            response.body = try wire.readBody(response, method: request.method, by: deadline)
            return response
        }
    }

    /// Sends `request` and reads the head of its response (for a streamed body read with ``nextChunk(by:wake:)``).
    func start(_ request: HTTPRequest, by deadline: Deadline) throws(HTTPError) -> HTTPResponse {
        try state.withLock { (wire: inout HTTPWire) throws(HTTPError) -> HTTPResponse in
            try wire.send(request, by: deadline)
            return try wire.readHead(method: request.method, by: deadline, wake: nil)
        }
    }

    /// The rest of the body of `response`, read whole.
    func readBody(_ response: HTTPResponse, method: String, by deadline: Deadline) throws(HTTPError) -> [UInt8] {
        try state.withLock { (wire: inout HTTPWire) throws(HTTPError) -> [UInt8] in
            try wire.readBody(response, method: method, by: deadline)
        }
    }

    /// The next chunk of a chunked body, as soon as it has arrived whole; `nil` after the last one. Ends early
    /// with ``HTTPError/cancelled`` when `wake` (an eventfd) becomes readable.
    func nextChunk(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> [UInt8]? {
        try state.withLock { (wire: inout HTTPWire) throws(HTTPError) -> [UInt8]? in
            try wire.nextChunk(by: deadline, wake: wake)
        }
    }

    /// Whether bytes of the response are here or arrive by `deadline`; `false` when none came, the connection as
    /// it was (nothing of a chunk consumed), so that ``nextChunk(by:wake:)`` can be asked next.
    func awaitBytes(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> Bool {
        try state.withLock { (wire: inout HTTPWire) throws(HTTPError) -> Bool in
            try wire.awaitBytes(by: deadline, wake: wake)
        }
    }
}

/// The state of an ``HTTPConnection``: the stream and what was received but not yet consumed.
struct HTTPWire {
    let endpoint: HTTPEndpoint
    let stream: any ByteStream
    private var buffer: [UInt8] = []
    private var position = 0
    /// False once a response was not read to its end, or the server said it would close.
    private(set) var isReusable = true

    init(endpoint: HTTPEndpoint, stream: any ByteStream) {
        self.endpoint = endpoint
        self.stream = stream
    }

    var canBeReused: Bool { isReusable && position == buffer.count && !stream.isStale }

    mutating func close() {
        isReusable = false
        stream.close()
    }

    /// Sends `request`. A failure leaves the connection unusable.
    mutating func send(_ request: HTTPRequest, by deadline: Deadline) throws(HTTPError) {
        isReusable = false
        try stream.send(request.serialized(for: endpoint), by: deadline)
    }

    /// Reads the status line and headers of the response (skipping interim 1xx responses).
    mutating func readHead(method: String, by deadline: Deadline, wake: Int32?) throws(HTTPError) -> HTTPResponse {
        while true {
            let separator: [UInt8] = [13, 10, 13, 10]
            var searchFrom = position
            while true {
                if let end = firstIndex(of: separator, from: searchFrom) {
                    let response = try HTTPResponse(head: Array(buffer[position..<end]))
                    position = end + separator.count
                    if (100..<200).contains(response.status) { break }
                    return response
                }
                guard buffer.count - position < 64 * 1024 else { throw .responseTooLarge("headers too long") }
                // Relative to `position`: filling may move the unread bytes to the start of the buffer.
                let searched = max(0, buffer.count - position - 3)
                try fill(by: deadline, wake: wake)
                searchFrom = position + searched
            }
        }
    }

    /// Reads the rest of the body of `response` at once; afterwards the connection can be reused when the server
    /// keeps it alive.
    mutating func readBody(_ response: HTTPResponse, method: String, by deadline: Deadline) throws(HTTPError) -> [UInt8] {
        var body: [UInt8] = []
        switch try response.framing(method: method) {
        case .none:
            break
        case .length(let count):
            guard count <= HTTPConnection.maximumBodySize else { throw .responseTooLarge("body too large") }
            try take(count, appendingTo: &body, by: deadline, wake: nil)
        case .chunked:
            // Each chunk straight into the body, refused before it is read when it would pass the cap: a hostile
            // server's huge chunks cost the body and the receive buffer, never a second copy of either.
            while let size = try nextChunkSize(by: deadline, wake: nil) {
                guard size <= HTTPConnection.maximumBodySize - body.count else { throw .responseTooLarge("body too large") }
                try take(size, appendingTo: &body, by: deadline, wake: nil)
                try endChunk(by: deadline, wake: nil)
            }
        case .untilClose:
            while true {
                do { try fill(by: deadline, wake: nil) } catch .connectionLost { break }
                guard buffer.count - position <= HTTPConnection.maximumBodySize else { throw .responseTooLarge("body too large") }
            }
            body = Array(buffer[position...])
            position = buffer.count
            close()
            return body
        }
        isReusable = response.keepsAlive
        return body
    }

    /// The next chunk of a chunked body, as soon as it has arrived whole; `nil` after the last one.
    mutating func nextChunk(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> [UInt8]? {
        guard let size = try nextChunkSize(by: deadline, wake: wake) else { return nil }
        var data: [UInt8] = []
        try take(size, appendingTo: &data, by: deadline, wake: wake)
        try endChunk(by: deadline, wake: wake)
        return data
    }

    /// See ``HTTPConnection/awaitBytes(by:wake:)``: a receive that times out appends nothing.
    mutating func awaitBytes(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> Bool {
        if position < buffer.count { return true }
        do throws(HTTPError) {
            try fill(by: deadline, wake: wake)
        } catch .timedOut {
            return false
        }
        return true
    }

    /// Reads a chunk's size line: the size of the data that follows (at most the body cap); `nil` for the
    /// last chunk, whose trailers it reads too.
    private mutating func nextChunkSize(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> Int? {
        let sizeLine = try line(by: deadline, wake: wake)
        let hex = sizeLine.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        guard let size = Int(hex.trimmingCharacters(in: " \t"), radix: 16), size >= 0 else {
            throw .malformedResponse("bad chunk size")
        }
        if size == 0 {
            // Trailers, up to the empty line that ends the body.
            while try !line(by: deadline, wake: wake).isEmpty {}
            return nil
        }
        guard size <= HTTPConnection.maximumBodySize else { throw .responseTooLarge("chunk too large") }
        return size
    }

    /// Reads the CRLF that ends a chunk's data.
    private mutating func endChunk(by deadline: Deadline, wake: Int32?) throws(HTTPError) {
        guard try line(by: deadline, wake: wake).isEmpty else { throw .malformedResponse("chunk not followed by CRLF") }
    }

    // MARK: Buffer

    private mutating func fill(by deadline: Deadline, wake: Int32?) throws(HTTPError) {
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position > 1 << 20 {
            buffer.removeSubrange(..<position)
            position = 0
        }
        let bytes = try stream.receive(maximum: 64 * 1024, by: deadline, wake: wake)
        if bytes.isEmpty {
            isReusable = false
            throw .connectionLost(afterSending: true, reason: "closed by the server")
        }
        buffer += bytes
    }

    /// Moves the next `count` bytes into `data`, as they arrive: the receive buffer never holds more than one
    /// read of them. `data` grows geometrically, never past the body cap, so that many small chunks are not
    /// copied again and again, and one huge chunk costs at most the cap and the copy that grows to it.
    private mutating func take(_ count: Int, appendingTo data: inout [UInt8], by deadline: Deadline, wake: Int32?) throws(HTTPError) {
        let needed = data.count + count
        if data.capacity < needed {
            data.reserveCapacity(max(needed, min(data.capacity * 2, HTTPConnection.maximumBodySize)))
        }
        var remaining = count
        while true {
            let available = min(buffer.count - position, remaining)
            data.append(contentsOf: buffer[position..<position + available])
            position += available
            remaining -= available
            if remaining == 0 { return }
            try fill(by: deadline, wake: wake)
        }
    }

    private mutating func line(by deadline: Deadline, wake: Int32?) throws(HTTPError) -> String {
        var searchFrom = position
        while true {
            if let end = firstIndex(of: [13, 10], from: searchFrom) {
                defer { position = end + 2 }
                return String(decoding: buffer[position..<end], as: UTF8.self)
            }
            guard buffer.count - position < 4096 else { throw .malformedResponse("line too long") }
            let searched = max(0, buffer.count - position - 1)
            try fill(by: deadline, wake: wake)
            searchFrom = position + searched
        }
    }

    private func firstIndex(of pattern: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        var index = start
        while index + pattern.count <= buffer.count {
            if buffer[index] == pattern[0] && buffer[index..<index + pattern.count].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
