/// One HTTP/1.1 request, serialized with a `Content-Length` body and kept alive.
struct HTTPRequest {
    var method = "POST"
    var path: String
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    /// The bytes sent for this request to `endpoint`.
    func serialized(for endpoint: HTTPEndpoint) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\n"
        head += "Content-Length: \(body.count)\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
