import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// XML is read as Python's `plistlib` (a conforming XML reader) reads it, where Foundation's parser alone
/// would refuse a comment or drop a leading U+FEFF.
@Suite("XML read as other XML readers read it")
struct XMLInputRepairTests {
    private static let head = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        """

    private func decodeFile(_ bytes: [UInt8]) throws(PropertyListCodingError) -> PropertyListValue {
        try PropertyListValue(propertyListData: Data(bytes))
    }

    /// What `plistlib` reads from `xml`, as a value: Python re-encodes it as a binary property list for
    /// this library's binary reader, which Foundation's XML parser has no part in.
    private func plistlibReading(_ xml: [UInt8]) throws -> PropertyListValue {
        try BinaryPropertyList.decode(try python("""
            import plistlib, sys
            sys.stdout.buffer.write(plistlib.dumps(plistlib.loads(sys.stdin.buffer.read()), fmt=plistlib.FMT_BINARY))
            """, input: xml))
    }

    @Test("A comment inside a key, a string or another scalar reads as plistlib reads it", arguments: [
        "<dict><key><!-- c --></key><true/></dict>",
        "<dict><key>a<!-- c -->b</key><true/></dict>",
        "<dict><key>k</key><string><!-- c -->text<!-- d --></string></dict>",
        "<dict><key>k</key><integer>1<!-- c -->2</integer><key>r</key><real><!-- c -->1.5</real></dict>",
        "<dict><key>k</key><data>AP8<!-- c -->QgH8=</data><key>d</key><date>2025-01-02T03:04:05Z<!-- c --></date></dict>",
        "<dict><key>k</key><true><!-- c --></true></dict>",
        "<!-- before --><dict><!-- c --><key>k</key><!-- d --><string>x</string><!-- e --></dict><!-- after -->",
        "<dict><key>k</key><string>a<!-- <string>not</string> ]]> -->b</string></dict>",
    ])
    func commentsIgnored(body: String) throws {
        let xml = Array((Self.head + body + "</plist>\n").utf8)
        let ours = try decodeFile(xml)
        #expect(ours == (try plistlibReading(xml)))
    }

    @Test("Markup inside a CDATA section, a processing instruction or an escaped text is not taken for a comment or a tag")
    func cdataAndEscapesUntouched() throws {
        let body = """
            <dict><key>cdata</key><string><![CDATA[<!-- kept --><string>]]></string>\
            <?pi <!-- not a comment --> ?><key>escaped</key><string>&lt;!-- kept --&gt;</string>\
            <key>attribute</key><string>x</string></dict>
            """
        let xml = Array((Self.head + body + "</plist>\n").utf8)
        let expected = PropertyListValue.dictionary([
            "cdata": .string("<!-- kept --><string>"), "escaped": .string("<!-- kept -->"), "attribute": .string("x"),
        ])
        #expect(try decodeFile(xml) == expected)
        #expect(try plistlibReading(xml) == expected)
    }

    @Test("An empty key element and an empty string element read as empty text, as plistlib reads them")
    func emptyElements() throws {
        let xml = Array((Self.head + "<dict><key/><string/><key>e</key><string></string></dict></plist>\n").utf8)
        let expected = PropertyListValue.dictionary(["": .string(""), "e": .string("")])
        #expect(try decodeFile(xml) == expected)
        #expect(try plistlibReading(xml) == expected)
    }

    /// Strings and keys that start with U+FEFF, which Foundation's parser alone drops once.
    private static let byteOrderMarkValue = PropertyListValue.dictionary([
        "\u{FEFF}a": .string("\u{FEFF}b"),
        "\u{FEFF}": .string("\u{FEFF}"),
        "\u{FEFF}\u{FEFF}twice": .array([.string("\u{FEFF}\u{FEFF}"), .string("middle\u{FEFF}kept")]),
        "plain": .string(""),
    ])

    @Test("A leading U+FEFF in a string or key survives XML export and import exactly")
    func byteOrderMarkRoundTrip() throws {
        let xml = try Self.byteOrderMarkValue.xmlPropertyListData()
        #expect(String(decoding: xml, as: UTF8.self).contains("<key>&#xFEFF;a</key>"))
        let back = try PropertyListValue(propertyListData: xml)
        #expect(back == Self.byteOrderMarkValue)
        // `==` on String ignores nothing here, but a dropped U+FEFF changes the key set; check bytes too.
        #expect(BinaryPropertyList.encode(back) == BinaryPropertyList.encode(Self.byteOrderMarkValue))
    }

    @Test("plistlib reads the exported U+FEFF exactly, and its own XML with a literal U+FEFF reads back exactly")
    func byteOrderMarkWithPython() throws {
        let xml = [UInt8](try Self.byteOrderMarkValue.xmlPropertyListData())
        #expect(try plistlibReading(xml) == Self.byteOrderMarkValue)
        let pythonXML = try python("""
            import plistlib, sys
            value = {'\\ufeffa': '\\ufeffb', '\\ufeff': '\\ufeff', '\\ufeff\\ufefftwice': ['\\ufeff\\ufeff', 'middle\\ufeffkept'], 'plain': ''}
            data = plistlib.dumps(value, fmt=plistlib.FMT_XML)
            assert '\\ufeff'.encode() in data
            sys.stdout.buffer.write(data)
            """)
        #expect(try decodeFile(pythonXML) == Self.byteOrderMarkValue)
    }

    @Test("OpenStep text is not touched by the XML repair")
    func openStepUntouched() throws {
        #expect(try PropertyListValue(propertyListText: "{a = \"<string><!-- x -->\";}")
            == .dictionary(["a": .string("<string><!-- x -->")]))
    }
}
