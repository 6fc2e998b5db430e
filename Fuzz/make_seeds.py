#!/usr/bin/env python3
"""Writes the python-made part of the fuzz seed corpus into DIRECTORY (Fuzz/corpus by default).

Valid domains from plistlib (binary and XML), truncated ones, and hand-built hostile ones: cycles, huge
counts, deep nesting, bad trailers, garbage. Deterministic: running it again gives identical files.
The seeds made by the library's own encoder are written by the fuzzer binary (see Fuzz/run.sh --seeds).
"""
import datetime
import os
import plistlib
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)


def put(name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def bplist(objects, top=0, ref_size=1, offset_size=1, count=None, table=None):
    """A binary property list from raw object bytes, with every trailer field overridable."""
    body = bytearray(b"bplist00")
    offsets = []
    for obj in objects:
        offsets.append(len(body))
        body += obj
    table_at = len(body)
    for offset in offsets:
        body += offset.to_bytes(min(max(offset_size, 1), 8), "big")
    body += bytes([0, 0, 0, 0, 0, 0, offset_size & 0xFF, ref_size & 0xFF])
    body += struct.pack(">QQQ", len(objects) if count is None else count, top, table_at if table is None else table)
    return bytes(body)


def ascii_string(text):
    raw = text.encode("ascii")
    return bytes([0x50 | len(raw)]) + raw


# --- valid domains from plistlib ---------------------------------------------------------------------
domain = {
    "com.example.app.preferences": {
        "appearance": "dark",
        "launchCount": 42,
        "ratio": 0.75,
        "enabled": True,
        "disabled": False,
        "lastLaunch": datetime.datetime(2024, 5, 1, 12, 30, 15),
        "token": b"\x00\x01\xfe\xff",
        "recent": ["a", "b", "a", "b"],  # plistlib shares equal objects: the same ref twice
        "nested": {"inner": {"list": [1, 2, 3], "name": "ünïcødé ✓"}},
        "negative": -5,
        "big": 2**40,
    },
    "other.suite": {"x": 1},
}
put("plistlib-domain.bplist", plistlib.dumps(domain, fmt=plistlib.FMT_BINARY, sort_keys=True))
put("plistlib-domain.xml", plistlib.dumps(domain, fmt=plistlib.FMT_XML, sort_keys=True))
put("plistlib-empty.bplist", plistlib.dumps({}, fmt=plistlib.FMT_BINARY))
put("plistlib-empty.xml", plistlib.dumps({}, fmt=plistlib.FMT_XML))
put("plistlib-root-array.xml", plistlib.dumps([1, "two", 3.0], fmt=plistlib.FMT_XML))
put("plistlib-utf16-keys.bplist", plistlib.dumps({"ключ": {"värde": "値"}}, fmt=plistlib.FMT_BINARY))
put("plistlib-int128.bplist", plistlib.dumps({"k": {"huge": 2**64 - 1, "fits": 2**63 - 1}}, fmt=plistlib.FMT_BINARY))
wide = {"k": {("key%04d" % i): i * 7 for i in range(300)}}  # 2-byte references and offsets
put("plistlib-wide-refs.bplist", plistlib.dumps(wide, fmt=plistlib.FMT_BINARY, sort_keys=True))
put("xml-bom-leading-space.xml", b"\xef\xbb\xbf \n\t" + plistlib.dumps({"k": {"v": 1}}, fmt=plistlib.FMT_XML))
put("xml-no-prolog.xml", '<plist version="1.0"><dict><key>k</key><dict><key>v</key><true/></dict></dict></plist>')
# Keys equal under Swift's String == but spelled differently (precomposed and decomposed "é"), as Python writes them.
equivalent = {"k": {"\u00e9": 1, "e\u0301": 2, "nested": {"e\u0301": "d", "\u00e9": "p"}}}
put("plistlib-equivalent-keys.bplist", plistlib.dumps(equivalent, fmt=plistlib.FMT_BINARY, sort_keys=True))
put("plistlib-equivalent-keys.xml", plistlib.dumps(equivalent, fmt=plistlib.FMT_XML, sort_keys=False))
# Equal keys as storage keys, inside a shadowed entry's value, in an array, and in three spellings (Å, A + ring, Å sign).
deep_equivalent = {"\u00e9": {"a": 1}, "e\u0301": {"\u00e9": 1, "e\u0301": 2},
                   "k": {"list": [{"\u00c5": 1, "A\u030a": 2, "\u212b": 3}, [{"\u00e9": 1, "e\u0301": 2}]]}}
put("plistlib-equivalent-keys-deep.bplist", plistlib.dumps(deep_equivalent, fmt=plistlib.FMT_BINARY, sort_keys=True))
put("plistlib-equivalent-keys-deep.xml", plistlib.dumps(deep_equivalent, fmt=plistlib.FMT_XML, sort_keys=False))
# A leading U+FEFF in keys and strings, which Foundation's XML parser alone drops.
put("plistlib-leading-feff.xml", plistlib.dumps({"k": {"\ufeffa": "\ufeffb", "\ufeff": ["\ufeff\ufeff"]}}, fmt=plistlib.FMT_XML))

# --- truncated ---------------------------------------------------------------------------------------
valid = plistlib.dumps(domain, fmt=plistlib.FMT_BINARY, sort_keys=True)
for cut in (8, 9, 40, 41, len(valid) // 2, len(valid) - 33, len(valid) - 1):
    put("truncated-binary-%d.bplist" % cut, valid[:cut])
valid_xml = plistlib.dumps(domain, fmt=plistlib.FMT_XML, sort_keys=True)
for cut in (1, 40, len(valid_xml) // 2, len(valid_xml) - 9):
    put("truncated-xml-%d.xml" % cut, valid_xml[:cut])

# --- hostile binary ------------------------------------------------------------------------------------
# Cycles: an array holding itself, a dictionary holding itself, a cycle through two containers.
put("cycle-array-self.bplist", bplist([bytes([0xA1, 0x00])]))
put("cycle-dict-self.bplist", bplist([bytes([0xD1, 0x01, 0x00]), ascii_string("k")]))
put("cycle-two-arrays.bplist", bplist([bytes([0xD1, 0x01, 0x02]), ascii_string("k"), bytes([0xA1, 0x03]), bytes([0xA1, 0x02])]))
# Shared references that expand exponentially (each level refers to the next twice).
levels = 40
objects = [bytes([0xD1, 0x01, 0x02]), ascii_string("k")]
for i in range(levels):
    nxt = 2 + i + 1
    objects.append(bytes([0xA2, nxt, nxt]))
objects.append(ascii_string("leaf"))
put("shared-exponential.bplist", bplist(objects))
# Huge counts: via an 8-byte int after a 0xF nibble, for an array, a string, data and a dictionary.
huge8 = bytes([0x13]) + (2**62).to_bytes(8, "big")
put("huge-count-array.bplist", bplist([bytes([0xAF]) + huge8]))
put("huge-count-string.bplist", bplist([bytes([0x5F]) + huge8 + b"abc"]))
put("huge-count-data.bplist", bplist([bytes([0x4F]) + huge8 + b"abc"]))
put("huge-count-utf16.bplist", bplist([bytes([0x6F]) + huge8 + b"\x00a"]))
put("huge-count-dict.bplist", bplist([bytes([0xDF]) + bytes([0x13]) + (2**63 - 1).to_bytes(8, "big")]))
put("negative-count.bplist", bplist([bytes([0xAF, 0x13]) + (2**64 - 1).to_bytes(8, "big")]))
put("huge-object-count.bplist", bplist([bytes([0xD0])], count=2**64 - 1))
put("huge-top-object.bplist", bplist([bytes([0xD0])], top=2**63))
put("huge-table-offset.bplist", bplist([bytes([0xD0])], table=2**64 - 8))
# Bad trailers: widths 0 and 9, a table inside the header, offsets into the table, references past the end.
put("trailer-offset-size-0.bplist", bplist([bytes([0xD0])], offset_size=0))
put("trailer-offset-size-9.bplist", bplist([bytes([0xD0])], offset_size=9))
put("trailer-ref-size-0.bplist", bplist([bytes([0xD0])], ref_size=0))
put("trailer-table-in-header.bplist", bplist([bytes([0xD0])], table=3))
into_table = bytearray(bplist([bytes([0xD0])]))
into_table[9] = 9  # the one offset-table entry (at 9) points at the table itself
put("offset-into-table.bplist", bytes(into_table))
put("ref-past-end.bplist", bplist([bytes([0xD1, 0x05, 0x06])]))
put("dict-key-not-string.bplist", bplist([bytes([0xD1, 0x01, 0x02]), bytes([0x10, 0x01]), bytes([0x09])]))
put("dict-repeated-key.bplist", bplist([bytes([0xD2, 0x01, 0x01, 0x02, 0x02]), ascii_string("k"), bytes([0x08])]))
put("ascii-string-high-byte.bplist", bplist([bytes([0xD1, 0x01, 0x02]), ascii_string("k"), bytes([0x52, 0x41, 0xC3])]))
put("unpaired-surrogate.bplist", bplist([bytes([0xD1, 0x01, 0x02]), ascii_string("k"), bytes([0x61, 0xD8, 0x00])]))
put("unsupported-markers.bplist", bplist([bytes([0xA6, 1, 2, 3, 4, 5, 6]), b"\x00", b"\x0f", b"\x80\x01", b"\xc0", b"\xf0", b"\x24" + b"\x00" * 16]))
put("int128-out-of-range.bplist", bplist([bytes([0xD1, 0x01, 0x02]), ascii_string("k"), bytes([0x14]) + (2**64).to_bytes(16, "big")]))
put("real4-and-date.bplist", bplist([bytes([0xA2, 0x01, 0x02]), b"\x22" + struct.pack(">f", 1.5), b"\x33" + struct.pack(">d", float("nan"))]))
# Deep nesting: 600 arrays inside each other (the limit is 512), with 2-byte references.
depth = 600
objects = [bytes([0xA1]) + (i + 1).to_bytes(2, "big") for i in range(depth)] + [bytes([0x08])]
put("deep-arrays-600.bplist", bplist(objects, ref_size=2, offset_size=2))
deep_dict = []
for i in range(520):
    deep_dict.append(bytes([0xD1]) + (2 * i + 1).to_bytes(2, "big") + (2 * i + 2).to_bytes(2, "big"))
    deep_dict.append(ascii_string("k"))
deep_dict.append(bytes([0x09]))
put("deep-dicts-520.bplist", bplist(deep_dict, ref_size=2, offset_size=2))
# Exactly at the depth limit (a leaf 512 levels below the root) and one level past it.
for arrays, name in ((511, "limit-depth-512.bplist"), (512, "limit-depth-513.bplist")):
    objects = [bytes([0xD1, 0x00, 0x01, 0x00, 0x02]), ascii_string("k")]
    objects += [bytes([0xA1]) + (3 + i).to_bytes(2, "big") for i in range(arrays)] + [bytes([0x09])]
    put(name, bplist(objects, ref_size=2, offset_size=2))

# --- hostile XML and garbage -------------------------------------------------------------------------
head = '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
put("xml-deep-arrays-600.xml", head + '<plist version="1.0">' + "<array>" * 600 + "</array>" * 600 + "</plist>")
# XML accepts the depth binary does (a leaf 512 levels below the root): at the limit and one past it.
for arrays, name in ((511, "xml-limit-depth-512.xml"), (512, "xml-limit-depth-513.xml")):
    put(name, head + '<plist version="1.0"><dict><key>k</key>' + "<array>" * arrays + "<true/>" + "</array>" * arrays + "</dict></plist>")
put("xml-deep-unclosed.xml", head + '<plist version="1.0">' + "<dict><key>k</key>" * 300)
put("xml-entity-expansion.xml", '<?xml version="1.0"?>\n<!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>\n<plist><dict><key>k</key><string>&c;&c;&c;</string></dict></plist>')
put("xml-missing-value.xml", head + "<plist><dict><key>a</key></dict></plist>")
put("xml-duplicate-key.xml", head + "<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>")
put("xml-mismatched-tags.xml", head + "<plist><dict><key>a</key><array></dict></array></plist>")
put("xml-bad-values.xml", head + "<plist><dict><key>i</key><integer>99999999999999999999999</integer><key>r</key><real>x1</real>"
    "<key>d</key><date>2024-13-45T99:99:99Z</date><key>b</key><data>!!!notbase64</data><key>n</key><integer>-</integer></dict></plist>")
put("xml-control-chars.xml", head + "<plist><dict><key>&#0;&#1;</key><string>&#xD800;&#x110000;&amp;&lt;&#9;</string></dict></plist>")
put("xml-comments-in-text.xml", head + "<plist><dict><key><!-- c --></key><true/><key>a<!-- c -->b</key><string>x<!-- c --></string>"
    "<key>i</key><integer>1<!-- c -->2</integer><key>t</key><true><!-- c --></true><key/><string/></dict></plist>")
put("xml-cdata-comments-pi.xml", head + "<plist><!-- c --><dict><?pi x?><key><![CDATA[k]]></key><string><![CDATA[<v>]]></string></dict></plist>")
put("xml-utf16-declared.xml", '<?xml version="1.0" encoding="UTF-16"?><plist><dict/></plist>')
put("xml-root-scalar.xml", head + "<plist><string>not a domain</string></plist>")
put("xml-two-roots.xml", head + "<plist><dict/><dict/></plist>")
put("xml-unknown-tag.xml", head + "<plist><dict><key>k</key><uid>1</uid></dict></plist>")
put("xml-lone-lt.xml", "<")
put("openstep-text.txt", "{appearance = dark;}")
put("empty-file.bin", b"")
put("header-only.bplist", b"bplist00")
put("bplist01.bplist", b"bplist01" + b"\x00" * 40)
put("garbage.bin", bytes((i * 197 + 13) % 256 for i in range(200)))
put("nul-bytes.bin", b"\x00" * 64)
