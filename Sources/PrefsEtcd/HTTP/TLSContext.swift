internal import COpenSSL
import PrefsStorage
import Synchronization

/// How an `https` endpoint's certificate is verified: against the system's trust store, or against the CA
/// certificates of one file (PEM). Always with the endpoint's host name or IP address; there is no way to turn
/// verification off.
final class TLSContext: Sendable {
    /// The OpenSSL context, shared by every connection (an `SSL_CTX` may be used from several threads once set
    /// up; the mutex only makes that visible to the compiler).
    private let context: PrefsMutex<OpaquePointer>

    /// - Parameter caFile: A PEM file of CA certificates to trust instead of the system's trust store.
    init(caFile: String?) throws(HTTPError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls("cannot create a context: \(Self.lastError())") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        let loaded = caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            SSL_CTX_free(context)
            throw .tls(caFile.map { "cannot load the CA file \($0): \(Self.lastError())" } ?? "cannot load the system's trust store: \(Self.lastError())")
        }
        self.context = PrefsMutex(context)
    }

    /// A new TLS session of this context.
    func makeSession() -> OpaquePointer? { context.withLock { SSL_new($0) } }

    deinit { context.withLock { SSL_CTX_free($0) } }

    /// OpenSSL's error queue as text, emptied.
    static func lastError() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? "unknown error" : reasons.joined(separator: "; ")
    }
}
