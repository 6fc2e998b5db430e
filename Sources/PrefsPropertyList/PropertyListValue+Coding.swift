import Foundation

// Public encoding and decoding of property lists, for tools that move domain contents in and out of
// files (the harness's `defaults export` and `import`) and for apps that keep a property list of their
// own. These are thin wrappers over the encoders and parsers the storage layer itself uses, so bytes
// written here are exactly what a domain file holds, and bytes accepted here are exactly what a domain
// file may hold.

extension PropertyListValue {
    /// Reads the bytes of a property-list file: binary (`bplist00`) or XML, as a defaults domain file
    /// may be written.
    ///
    /// OpenStep text is refused here, as it is for domain files, because almost any text is valid
    /// OpenStep (a lone word is a string) and would make a damaged or foreign file look valid; use
    /// ``init(propertyListText:)`` for text typed by a person. The root may be any value; a domain
    /// file additionally needs a dictionary root (check ``dictionaryValue``).
    ///
    ///
    /// XML is read as Python's `plistlib` reads it, where Foundation's parser alone differs: a comment
    /// inside a key or string is ignored, a leading U+FEFF in a string or key is kept, and of two keys
    /// that Swift's `String ==` treats as equal (a precomposed `"é"` and `"e\u{301}"`, which Python
    /// and CoreFoundation keep apart) the one in normalization form C survives with its value, as in a
    /// binary file. A value holds one entry per key, so encoding it again drops the other; a domain file
    /// keeps both, because the storage layer keeps the other entry aside and writes it back.
    ///
    /// - Parameter data: The whole file.
    /// - Throws: ``PropertyListCodingError`` when the bytes are not a binary or XML property list,
    ///   nest deeper than the library accepts, or hold a value that is not a property-list value.
    public init(propertyListData data: Data) throws(PropertyListCodingError) {
        self = try data.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFile(buffer) }
        }.get()
    }

    /// Parses property-list text as a person types it: OpenStep (`{appearance = dark;}`,
    /// `(a, b)`, `"a string"`) or XML.
    ///
    /// Unlike the argument domain (`-key value` on the command line), which takes unparsable text as a
    /// string, this fails, so that a tool can refuse a malformed value instead of storing it verbatim.
    /// OpenStep has no numbers, Booleans or dates: every scalar in it is a string.
    ///
    /// - Throws: ``PropertyListCodingError`` when the text is not a property list.
    public init(propertyListText text: String) throws(PropertyListCodingError) {
        self = try PropertyListText.decode(Data(text.utf8))
    }

    /// The value as a binary property list (`bplist00`): the bytes a domain file holds.
    ///
    /// Dictionary keys are written sorted by code point (as Python's `plistlib` sorts them), so equal
    /// values give identical bytes.
    /// - Throws: ``PropertyListCodingError`` when the value nests deeper than the library reads back
    ///   (values made by ``init(_:)`` or decoded by this library never do).
    public func binaryPropertyListData() throws(PropertyListCodingError) -> Data {
        try checkDepth()
        return Data(BinaryPropertyList.encode(self))
    }

    /// The value as an XML property list (UTF-8), with dictionary keys sorted by code point so output is stable.
    ///
    /// XML is lossier than binary, as with Apple's tools: dates keep whole seconds only, and a
    /// ``float(_:)`` is written with the digits of its exact `Double` value (XML has no 4-byte real),
    /// so it reads back as a ``real(_:)`` of the same value, which still casts `as? Float`. Everything
    /// else reads back exactly with ``init(propertyListData:)``, including a string or key that
    /// starts with U+FEFF, and any value nested as deep as a binary domain file may be.
    /// - Throws: ``PropertyListCodingError`` when the value nests deeper than the library reads back
    ///   (values made by ``init(_:)`` or decoded by this library never do).
    public func xmlPropertyListData() throws(PropertyListCodingError) -> Data {
        try checkDepth()
        return PropertyListText.encodeXML(self)
    }

    /// Both encoders recurse, so a hand-built value nested far too deep must be refused before them.
    private func checkDepth() throws(PropertyListCodingError) {
        guard BinaryPropertyList.isWithinDepthLimit(self) else {
            throw PropertyListCodingError(reason: "the value nests deeper than \(PropertyListValue.maximumDepth) levels")
        }
    }
}
