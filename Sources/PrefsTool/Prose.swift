// The demos' explanations, wrapped to read well in a terminal.

/// Wraps prose to `width` columns after `indent`.
package func paragraph(_ text: String, indent: String = "", width: Int = 100) -> String {
    var lines: [String] = []
    var line = indent
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
        if line.count > indent.count && line.count + 1 + word.count > width {
            lines.append(line)
            line = indent
        }
        line += (line.count > indent.count ? " " : "") + word
    }
    if line.count > indent.count { lines.append(line) }
    return lines.joined(separator: "\n")
}

/// Prints `text` as a wrapped paragraph.
package func explain(_ text: String, indent: String = "") {
    Console.say(paragraph(text, indent: indent))
}
