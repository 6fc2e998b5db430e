/// A connected byte stream, plain TCP or TLS over TCP, whose every step waits at most until a deadline.
protocol ByteStream: AnyObject {
    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8], by deadline: Deadline) throws(HTTPError)
    /// Up to `maximum` bytes as soon as some arrive; empty at the end of the stream. Returns early with
    /// ``HTTPError/cancelled`` when `wake` (an eventfd) becomes readable.
    func receive(maximum: Int, by deadline: Deadline, wake: Int32?) throws(HTTPError) -> [UInt8]
    /// Whether the peer has closed its side or sent bytes nobody asked for: then the stream must not be reused.
    var isStale: Bool { get }
    /// Closes the stream; idempotent.
    func close()
}
