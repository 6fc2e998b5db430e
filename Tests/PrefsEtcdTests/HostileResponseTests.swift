import Foundation
import Testing
import TestSupport

/// What a server that is not etcd, or one that misbehaves, can make a client hold. No etcd is needed: the
/// server is a small python3 program on a loopback port that answers every request with a chunked body of
/// 16 MiB chunks, past the client's 128 MiB cap on a response body.
@Suite("PrefsEtcd against hostile responses")
struct HostileResponseTests {
    /// Serves one connection's requests with `chunks` chunks of 16 MiB each; prints its port first.
    static let server = """
        import socket, sys
        chunks = int(sys.argv[1])
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0)); s.listen(4)
        print(s.getsockname()[1], flush=True)
        piece = b"a" * (16 << 20)
        c, _ = s.accept()
        s.close()  # later attempts are refused at once
        request = b""
        while b"\\r\\n\\r\\n" not in request:
            data = c.recv(65536)
            if not data: sys.exit(0)
            request += data
        try:
            c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n")
            for _ in range(chunks):
                c.sendall(b"%x\\r\\n" % len(piece) + piece + b"\\r\\n")
            c.sendall(b"0\\r\\n\\r\\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        """

    @Test("A chunked response of 16 MiB chunks past the body cap is refused, holding little more than the cap")
    func hugeChunksAreRefusedWithinTheCap() throws {
        let server = try pythonProcess(["-c", Self.server, "9"])
        defer { server.kill() }
        let port = try #require(server.readLine())
        let worker = try ChildProcess("EtcdTestWorker", ["read-peak", "http://127.0.0.1:\(port)", "test.hostile", "k"])
        let output = worker.readAllOutput()
        #expect(worker.wait() == 0, "\(worker.readErrors())")
        #expect(output.contains("body too large"), "\(output)")
        let peak = try #require(output.split(separator: "\n").first { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) })
        // The cap is 128 MiB; one read held 578 MB before (the receive buffer, a copy of each chunk, and a body
        // doubling past the cap). Now the body grows to at most the cap and the copy that grows it: under 1.8x.
        #expect(peak < 230 * 1024, "peak resident memory \(peak) KB")
        print("hostile chunked response: peak resident memory \(peak) KB")
    }
}
