// The one argument parser of prefsctl and the harness: every subcommand and verb takes its options and operands from it.

/// The words of a command line, taken apart by name and by position.
///
/// Options (`--name VALUE`, `--name=VALUE`, `--flag`) are found anywhere before a `--`, which ends option
/// processing so that a value such as `--help` can still be passed after it; operands are taken in order.
/// A subcommand takes its options first, then its operands, then calls ``finish(_:)`` so that a word it
/// did not expect is an error rather than silently ignored.
package struct Arguments {
    /// The words not taken yet, in order, without the `--`.
    package private(set) var remaining: [String]
    /// How many of ``remaining``, from the start, came before the `--` and so may be options.
    private var optionCount: Int

    /// The words of a command line; a `--` among them ends the options.
    package init(_ words: [String]) {
        if let end = words.firstIndex(of: "--") {
            remaining = Array(words[..<end] + words[(end + 1)...])
            optionCount = end
        } else {
            remaining = words
            optionCount = words.count
        }
    }

    /// Words that are all operands, none an option: what the tour passes to the inspector.
    package init(operands words: [String]) {
        remaining = words
        optionCount = 0
    }

    package var isEmpty: Bool { remaining.isEmpty }
    package var count: Int { remaining.count }

    /// Removes every `name` that comes before a `--`; whether there was one.
    package mutating func flag(_ name: String) -> Bool {
        var found = false
        while let index = remaining[..<optionCount].firstIndex(of: name) {
            remove(at: index)
            found = true
        }
        return found
    }

    /// Removes every `name VALUE` and `name=VALUE` before a `--`, and returns the last value.
    /// - Throws: A usage error saying that `name` needs `what` when it is the last word.
    package mutating func option(_ name: String, needs what: String) throws(HarnessError) -> String? {
        var value: String?
        var index = 0
        while index < optionCount {
            let word = remaining[index]
            if word == name {
                guard index + 1 < optionCount else { throw .usage("\(name) needs \(what)") }
                value = remaining[index + 1]
                remove(at: index + 1)
                remove(at: index)
            } else if word.hasPrefix(name + "=") {
                value = String(word.dropFirst(name.count + 1))
                remove(at: index)
            } else {
                index += 1
            }
        }
        return value
    }

    /// ``option(_:needs:)`` converted by `convert`, which returns `nil` for a value it refuses.
    /// - Throws: A usage error saying that `name` needs `what` when the value is missing or refused.
    package mutating func option<Value>(
        _ name: String, needs what: String, _ convert: (String) -> Value?
    ) throws(HarnessError) -> Value? {
        guard let text = try option(name, needs: what) else { return nil }
        guard let value = convert(text) else { throw .usage("\(name) needs \(what)") }
        return value
    }

    /// Takes the next word, option or operand, in order; `nil` when none is left.
    package mutating func next() -> String? {
        guard !remaining.isEmpty else { return nil }
        let word = remaining[0]
        remove(at: 0)
        return word
    }

    /// Takes the next word, which must be there.
    /// - Throws: A usage error with `complaint` when no word is left.
    package mutating func next(orComplain complaint: @autoclosure () -> String) throws(HarnessError) -> String {
        guard let word = next() else { throw .usage(complaint()) }
        return word
    }

    /// The words left that may be options: those before the `--`.
    package var optionWords: ArraySlice<String> { remaining[..<optionCount] }

    /// Takes the verb: the first word, before the `--` or after it, that is neither an option nor the value
    /// of one of `valueOptions` (`--format json`), so that options may come before the verb as well as after it.
    /// - Returns: The verb, and the option words that came before it; `nil` when there is no such word.
    package mutating func takeVerb(valueOptions: Set<String>) -> (verb: String, before: [String])? {
        var index = 0
        while index < remaining.count {
            let word = remaining[index]
            guard index < optionCount, word.hasPrefix("-"), word != "-" else {
                let before = Array(remaining[..<index])
                remove(at: index)
                return (word, before)
            }
            index += valueOptions.contains(word) ? 2 : 1
        }
        return nil
    }

    /// Takes every word left.
    package mutating func rest() -> [String] {
        defer {
            remaining = []
            optionCount = 0
        }
        return remaining
    }

    /// Requires every word to have been taken.
    /// - Throws: A usage error made by `complaint` from the first word left over.
    package func finish(_ complaint: (String) -> String) throws(HarnessError) {
        if let extra = remaining.first { throw .usage(complaint(extra)) }
    }

    private mutating func remove(at index: Int) {
        remaining.remove(at: index)
        if index < optionCount { optionCount -= 1 }
    }
}
