// The POSIX read and write loops, written once: a call interrupted by a signal is retried, a short
// write is continued, and a failure carries its errno.

import Foundation
import Glibc

/// A failed system call's `errno`, described as the system describes it.
package struct SystemError: Error, CustomStringConvertible {
    package let code: Int32

    /// The `errno` of the call that just failed.
    package static var current: SystemError { SystemError(code: errno) }

    /// Such as "No such file or directory".
    package var description: String { String(cString: strerror(code)) }
}

package enum PosixIO {
    /// Writes every byte of `buffer` to `descriptor`.
    package static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemError) {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            offset += written
        }
    }

    /// Writes every byte of `data` to `descriptor`.
    package static func writeAll(_ data: Data, to descriptor: Int32) throws(SystemError) {
        try data.withUnsafeBytes { buffer in Result { () throws(SystemError) in try writeAll(buffer, to: descriptor) } }.get()
    }

    /// Reads what is available, up to `count` bytes; an empty array at the end of the input.
    package static func read(_ descriptor: Int32, upTo count: Int) throws(SystemError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            return Array(chunk[..<got])
        }
    }

    /// Reads to the end of the input, but never more than `limit` bytes into memory.
    /// - Returns: The bytes, or `nil` when the input holds more than `limit` bytes (endless input included).
    package static func readAll(_ descriptor: Int32, limit: Int) throws(SystemError) -> Data? {
        var contents = Data()
        while true {
            let chunk = try read(descriptor, upTo: 65_536)
            if chunk.isEmpty { return contents }
            contents.append(contentsOf: chunk)
            if contents.count > limit { return nil }
        }
    }

    /// The whole contents of the file at `path`, or of standard input for `-`, if it holds at most
    /// `limit` bytes.
    /// - Parameter regularOnly: Refuse a path that is not a regular file (a FIFO would block until a
    ///   writer comes, which may be never; a device may never end). It is opened without blocking and
    ///   checked before anything is read.
    /// - Returns: The bytes, or `nil` when there are more than `limit`.
    /// - Throws: A failure naming the file and the system's reason when it cannot be read.
    package static func readWholeFile(_ path: String, atMost limit: Int, regularOnly: Bool = false) throws(HarnessError) -> Data? {
        let name = path == "-" ? "standard input" : path
        let descriptor = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0))
        guard descriptor >= 0 else { throw .failure("cannot read \(name): \(SystemError.current)") }
        defer { if descriptor != 0 { close(descriptor) } }
        if regularOnly && descriptor != 0 {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw .failure("cannot read \(name): \(SystemError.current)") }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw .failure("cannot read \(name): it is \(fileKind(info.st_mode)), not a regular file; give a file, or - to read standard input (cat \(name) | ...)")
            }
            // Back to blocking reads, which a regular file never needs but the loop below expects.
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        }
        do {
            return try readAll(descriptor, limit: limit)
        } catch {
            throw .failure("cannot read \(name): \(error)")
        }
    }
}
