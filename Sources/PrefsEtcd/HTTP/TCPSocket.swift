import Glibc

/// A non-blocking TCP connection whose connect, sends and receives each wait in `poll()` until a deadline, so a
/// member that stops answering (or a dead host that never refuses) cannot hold an operation past its timeout.
final class TCPSocket: ByteStream {
    private(set) var descriptor: Int32

    /// Connects to `host:port`, trying each address the name resolves to until one accepts.
    init(host: String, port: Int, by deadline: Deadline) throws(HTTPError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .connectFailed("\(host) does not resolve: \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastReason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            if fd < 0 { lastReason = String(cString: strerror(errno)); continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                do {
                    try Self.wait(fd, for: Int16(POLLOUT), by: deadline, step: "connect", wake: nil)
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { descriptor = fd; return }
                    lastReason = String(cString: strerror(error))
                } catch {
                    Glibc.close(fd)
                    throw error
                }
            } else {
                lastReason = String(cString: strerror(errno))
            }
            Glibc.close(fd)
        }
        throw .connectFailed("\(host):\(port): \(lastReason)")
    }

    /// Waits until `fd` is ready for `events`, the deadline passes, or `wake` becomes readable.
    static func wait(_ fd: Int32, for events: Int16, by deadline: Deadline, step: String, wake: Int32?) throws(HTTPError) {
        var fds = [pollfd(fd: fd, events: events, revents: 0)]
        if let wake { fds.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
        while true {
            let ready = poll(&fds, nfds_t(fds.count), deadline.pollMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .connectionLost(afterSending: false, reason: "poll: \(String(cString: strerror(errno)))")
            }
            if fds.count > 1 && fds[1].revents != 0 { throw .cancelled }
            if ready > 0 { return }
            if deadline.hasPassed { throw .timedOut(step: step) }
        }
    }

    func send(_ bytes: [UInt8], by deadline: Deadline) throws(HTTPError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 { offset += sent; continue }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try Self.wait(descriptor, for: Int16(POLLOUT), by: deadline, step: "send", wake: nil)
            default: throw .connectionLost(afterSending: offset > 0, reason: "send: \(String(cString: strerror(errno)))")
            }
        }
    }

    func receive(maximum: Int, by deadline: Deadline, wake: Int32?) throws(HTTPError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 {
                buffer.removeSubrange(count...)
                return buffer
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try Self.wait(descriptor, for: Int16(POLLIN), by: deadline, step: "receive", wake: wake)
            default: throw .connectionLost(afterSending: true, reason: "receive: \(String(cString: strerror(errno)))")
            }
        }
    }

    var isStale: Bool {
        guard descriptor >= 0 else { return true }
        var fds = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&fds, 1, 0) != 0
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
