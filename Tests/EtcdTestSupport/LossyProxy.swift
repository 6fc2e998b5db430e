import Foundation
import TestSupport

/// A TCP proxy in front of one etcd member that loses the connection around the first write (a transaction
/// that puts), as a member dying mid-request does: either after forwarding the request and receiving etcd's
/// answer (the write was applied, the client never hears so), or before forwarding it (nothing was applied);
/// and, when asked, it then stops listening, as the member dying with the answer does.
/// Everything else passes through. A python3 child process, stopped by process id when released.
package final class LossyProxy: Sendable {
    package enum Loss: String, Sendable {
        /// The write reaches etcd and is applied; its answer is dropped and the connection closed.
        case answerOfFirstWrite = "answer"
        /// The connection is closed after the client sent the write, which never reaches etcd.
        case firstWrite = "request"
        /// As ``answerOfFirstWrite``, and the proxy then stops listening, as a member that died with the answer
        /// does: a client that knows no other member cannot learn whether its write was applied.
        case answerOfFirstWriteThenGone = "answer-then-gone"
    }

    private let child: ChildProcess
    /// The proxy's own client URL.
    package let url: URL

    package init(to upstream: URL, losing loss: Loss) throws {
        child = try pythonProcess(["-c", Self.script, String(upstream.port!), loss.rawValue])
        guard let port = child.readLine().flatMap(Int.init) else { throw EtcdClusterError.notReady("proxy", child.readErrors()) }
        url = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// How many writes it lost (read after the client is done).
    package func stop() -> Int {
        child.closeInput()
        let lost = Int(child.readLine() ?? "") ?? -1
        child.wait()
        return lost
    }

    deinit { child.kill() }

    private static let script = #"""
import socket, sys, threading
upstream_port, mode = int(sys.argv[1]), sys.argv[2]
lost = [0]
lock = threading.Lock()
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)

def read_request(conn, buffered):
    while b"\r\n\r\n" not in buffered:
        data = conn.recv(65536)
        if not data: return None, b""
        buffered += data
    head, rest = buffered.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length": length = int(value)
    while len(rest) < length:
        data = conn.recv(65536)
        if not data: return None, b""
        rest += data
    return head + b"\r\n\r\n" + rest[:length], rest[length:]

def serve(conn):
    buffered = b""
    while True:
        request, buffered = read_request(conn, buffered)
        if request is None: break
        is_write = b"/v3/kv/txn" in request.split(b"\r\n", 1)[0] and b"request_put" in request
        with lock:
            lose = is_write and lost[0] == 0
            if lose: lost[0] += 1
        if lose and mode == "request":
            break
        head, body = request.split(b"\r\n\r\n", 1)
        up = socket.create_connection(("127.0.0.1", upstream_port))
        up.sendall(head + b"\r\nConnection: close\r\n\r\n" + body)
        answer = b""
        while True:
            data = up.recv(65536)
            if not data: break
            answer += data
        up.close()
        if lose:
            if mode == "answer-then-gone":
                listener.shutdown(socket.SHUT_RDWR)
            break
        conn.sendall(answer)
        break
    conn.close()

def accept():
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=serve, args=(conn,), daemon=True).start()

threading.Thread(target=accept, daemon=True).start()
sys.stdin.read()
print(lost[0], flush=True)
"""#
}
