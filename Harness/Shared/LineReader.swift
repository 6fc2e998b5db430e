// Lines read from a file descriptor (the other process's standard output in the `share` demo).

import PrefsTool

/// Reads lines from a file descriptor.
final class LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line without its newline, or `nil` at the end of the input (or when it fails).
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let chunk = (try? PosixIO.read(descriptor, upTo: 4096)) ?? []
            if chunk.isEmpty {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk)
        }
    }
}
