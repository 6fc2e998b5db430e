import Foundation

/// Why bytes or text could not be read as a property list, or why a value could not be encoded.
///
/// The reason describes the structure only (an offset, a count, the kind of fault), never a value
/// found in the input, so that it can be shown or logged without leaking what a file holds.
public struct PropertyListCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in a few words: for example `not a property list`.
    public let reason: String

    /// Makes an error with the given reason.
    package init(reason: String) { self.reason = reason }

    /// The reason, so that the error reads well inside a caller's own message.
    public var description: String { reason }
}

extension PropertyListCodingError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` gives the reason too.
    public var errorDescription: String? { reason }
}
