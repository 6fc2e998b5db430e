internal import COpenSSL
import Glibc

/// TLS over a ``TCPSocket``. OpenSSL works on memory buffers and this type moves the bytes through the socket
/// itself, so that every step keeps the socket's deadlines, and no write can raise SIGPIPE.
final class TLSStream: ByteStream {
    private let socket: TCPSocket
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer

    /// Performs the handshake, verifying the certificate against `context` and `host` (a name or an IP address).
    init(over socket: TCPSocket, host: String, context: TLSContext, by deadline: Deadline) throws(HTTPError) {
        guard let ssl = context.makeSession() else { throw .tls("cannot create a session: \(TLSContext.lastError())") }
        self.socket = socket
        self.ssl = ssl
        incoming = BIO_new(BIO_s_mem())
        outgoing = BIO_new(BIO_s_mem())
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_connect_state(ssl)
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isAddress {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            SSL_set1_host(ssl, host)
            _ = rvs_SSL_set_tlsext_host_name(ssl, host)
        }
        while true {
            let result = SSL_do_handshake(ssl)
            try flush(by: deadline)
            if result == 1 { break }
            let error = SSL_get_error(ssl, result)
            guard error == SSL_ERROR_WANT_READ else {
                let verification = SSL_get_verify_result(ssl)
                if verification != X509_V_OK {
                    throw .tls("the certificate of \(host) is not trusted: \(String(cString: X509_verify_cert_error_string(verification)))")
                }
                throw .tls("handshake with \(host) failed: \(TLSContext.lastError())")
            }
            try pull(by: deadline, wake: nil, step: "TLS handshake")
        }
    }

    /// Sends what OpenSSL has written to its outgoing buffer.
    private func flush(by deadline: Deadline) throws(HTTPError) {
        while BIO_ctrl_pending(outgoing) > 0 {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let count = BIO_read(outgoing, &buffer, Int32(buffer.count))
            if count <= 0 { break }
            try socket.send(Array(buffer[..<Int(count)]), by: deadline)
        }
    }

    /// Gives OpenSSL the next bytes from the socket.
    private func pull(by deadline: Deadline, wake: Int32?, step: String) throws(HTTPError) {
        let bytes: [UInt8]
        do {
            bytes = try socket.receive(maximum: 16 * 1024, by: deadline, wake: wake)
        } catch .timedOut {
            throw .timedOut(step: step)
        }
        if bytes.isEmpty { throw .connectionLost(afterSending: step != "TLS handshake", reason: "closed by the server") }
        _ = BIO_write(incoming, bytes, Int32(bytes.count))
    }

    func send(_ bytes: [UInt8], by deadline: Deadline) throws(HTTPError) {
        if !bytes.isEmpty {
            let written = SSL_write(ssl, bytes, Int32(bytes.count))
            guard written == Int32(bytes.count) else { throw .tls("write failed: \(TLSContext.lastError())") }
        }
        try flush(by: deadline)
    }

    func receive(maximum: Int, by deadline: Deadline, wake: Int32?) throws(HTTPError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = SSL_read(ssl, &buffer, Int32(maximum))
            if count > 0 { return Array(buffer[..<Int(count)]) }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_ZERO_RETURN:
                return []
            case SSL_ERROR_WANT_READ:
                try flush(by: deadline)
                do {
                    try pull(by: deadline, wake: wake, step: "receive")
                } catch .connectionLost {
                    return []
                }
            default:
                throw .connectionLost(afterSending: true, reason: "TLS read failed: \(TLSContext.lastError())")
            }
        }
    }

    var isStale: Bool { SSL_pending(ssl) > 0 || socket.isStale }

    func close() { socket.close() }

    deinit {
        SSL_free(ssl)  // frees both memory buffers too
        socket.close()
    }
}
