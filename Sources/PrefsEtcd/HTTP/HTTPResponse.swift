/// The status and headers of a response, with its body when it was read whole.
struct HTTPResponse: Sendable {
    var status: Int
    /// Header names in lower case, in the order received.
    var headers: [(name: String, value: String)]
    var body: [UInt8] = []

    /// The first value of the header `name` (any case).
    func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// How the body is delimited (RFC 9112 §6.3, as far as a client of a JSON gateway needs).
    enum Framing { case none, length(Int), chunked, untilClose }

    /// Parses the status line and header lines of `head` (without the final empty line).
    init(head: [UInt8]) throws(HTTPError) {
        let lines = head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformedResponse("bad status line")
        }
        self.status = status
        headers = lines.dropFirst().filter { !$0.isEmpty }.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingWhitespace())
        }
    }

    /// How the body of this response to a request of `method` is delimited.
    func framing(method: String) throws(HTTPError) -> Framing {
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) { return .none }
        if let encoding = header("transfer-encoding")?.lowercased() {
            guard encoding.hasSuffix("chunked") else { throw .malformedResponse("unsupported transfer encoding") }
            return .chunked
        }
        if let length = header("content-length") {
            guard let count = Int(length), count >= 0 else { throw .malformedResponse("bad Content-Length") }
            return .length(count)
        }
        return .untilClose
    }

    /// Whether the server keeps the connection open after this response.
    var keepsAlive: Bool { header("connection")?.lowercased() != "close" }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
