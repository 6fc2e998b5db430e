import Foundation

/// Apple's binary property-list format (`bplist00`), the on-disk format of a defaults domain.
///
/// Written by hand rather than through `PropertyListSerialization` for three reasons: a Bool must
/// stay a Bool and an integer an integer (Foundation on Linux blurs them through `NSNumber`), equal
/// values must give identical bytes (the storage layer compares bytes to skip redundant writes), and
/// a file on disk is untrusted input that must never crash the process that reads it.
///
/// Layout: the 8-byte header `bplist00`, the objects, a table giving each object's offset, and a
/// 32-byte trailer (offset-entry width, reference width, object count, root object, table offset).
/// Integers in the format are big-endian.
package enum BinaryPropertyList {

    // MARK: Encoding

    /// Encodes a value as a complete `bplist00` file.
    ///
    /// The value must pass ``isWithinDepthLimit(_:)``; every value made by ``PropertyListValue/init(_:)``
    /// or decoded here does.
    ///
    /// Dictionary keys are written in code-point order (``EquivalentKeys/precedes(_:_:)``), so two
    /// dictionaries that compare equal encode to the same bytes no matter how they were built
    /// (`0.0`/`-0.0` and differently normalized but equal strings are the exceptions: `==` ignores what
    /// the bytes keep).
    /// Nothing is uniqued: uniquing costs a hash per string, and domain files are small.
    package static func encode(_ root: PropertyListValue) -> [UInt8] {
        encode(root, shadowed: nil)
    }

    /// Encodes a value as ``encode(_:)`` does, with entries its dictionaries cannot hold beside theirs.
    ///
    /// - Parameter shadowed: Entries to write beside those of `root`'s dictionaries, each in its
    ///   dictionary, as ``ShadowedEntries/retained(in:)`` of `root` returns them (only then does no
    ///   dictionary get a key twice).
    package static func encode(_ root: PropertyListValue, shadowed: ShadowedEntries?) -> [UInt8] {
        var census = Census()
        census.count(root, shadowed)
        var writer = Writer(objectCount: census.objects, estimatedSize: census.bytes)
        writer.write(root, ref: 0, shadowed: shadowed)
        return writer.finish()
    }

    /// Whether a value nests no deeper than ``PropertyListValue/maximumDepth``, the limit the decoder
    /// enforces. The storage layer must check this before writing a value it did not get from
    /// ``PropertyListValue/init(_:)``: `encode` would write a deeper value faithfully, producing a
    /// file no reader of this library accepts, and far deeper values overflow the stack of the
    /// recursive encoder. The check itself recurses at most one level past the limit.
    package static func isWithinDepthLimit(_ value: PropertyListValue) -> Bool {
        func check(_ value: PropertyListValue, _ depth: Int) -> Bool {
            guard depth <= PropertyListValue.maximumDepth else { return false }
            switch value {
            case .array(let values):
                for element in values where !check(element, depth + 1) { return false }
            case .dictionary(let values):
                for element in values.values where !check(element, depth + 1) { return false }
            default:
                break
            }
            return true
        }
        return check(value, 0)
    }

    /// A first pass over the value: the object count fixes the width of every reference, which has
    /// to be known before the first container is written; the byte estimate sizes the output once.
    private struct Census {
        var objects = 0
        var bytes = 0

        mutating func count(_ value: PropertyListValue, _ shadowed: ShadowedEntries?) {
            objects += 1
            switch value {
            case .string(let string): bytes += 9 + string.utf8.count
            case .data(let data): bytes += 9 + data.count
            case .array(let values):
                bytes += 9 + values.count * 2
                for index in values.indices { count(values[index], shadowed?.child(.index(index))) }
            case .dictionary(let values):
                bytes += 9 + values.count * 4
                for (key, element) in values {
                    countKey(key)
                    count(element, shadowed?.child(.key(ExactKey(key))))
                }
                for entry in shadowed?.entries ?? [] {
                    bytes += 4
                    countKey(entry.key)
                    count(entry.value, shadowed?.child(.key(ExactKey(entry.key))))
                }
            case .bool: bytes += 1
            case .float: bytes += 5
            case .integer, .real, .date: bytes += 9
            case .unsignedInteger: bytes += 17
            }
        }

        private mutating func countKey(_ key: String) {
            objects += 1
            bytes += 9 + key.utf8.count
        }
    }

    /// The second pass. A container reserves a block of consecutive object numbers for its direct
    /// children as it is written, so its references are known before the children are; objects
    /// land in the file in depth-first order and the offset table maps numbers to positions.
    private struct Writer {
        var bytes: [UInt8] = []
        var offsets: [Int]
        var nextRef = 1
        let refSize: Int

        init(objectCount: Int, estimatedSize: Int) {
            refSize = BinaryPropertyList.width(forUnsigned: UInt64(max(objectCount - 1, 0)))
            offsets = [Int](repeating: 0, count: objectCount)
            bytes.reserveCapacity(8 + estimatedSize + objectCount * (refSize + 4) + 32)
            bytes.append(contentsOf: BinaryPropertyList.magic)
        }

        mutating func finish() -> [UInt8] {
            let tableOffset = bytes.count
            let offsetSize = BinaryPropertyList.width(forUnsigned: UInt64(tableOffset))
            for offset in offsets { appendBigEndian(UInt64(offset), size: offsetSize) }
            bytes.append(contentsOf: [0, 0, 0, 0, 0, 0] as [UInt8])  // unused + sort version
            bytes.append(UInt8(offsetSize))
            bytes.append(UInt8(refSize))
            appendBigEndian(UInt64(offsets.count), size: 8)
            appendBigEndian(0, size: 8)  // the root is always object 0
            appendBigEndian(UInt64(tableOffset), size: 8)
            return bytes
        }

        /// The recursion runs through here and the two container writers, kept apart from the
        /// scalar writer so that each level of nesting costs little stack, even in a debug build.
        mutating func write(_ value: PropertyListValue, ref: Int, shadowed: ShadowedEntries?) {
            offsets[ref] = bytes.count
            switch value {
            case .array(let values): writeArray(values, shadowed: shadowed)
            case .dictionary(let values): writeDictionary(values, shadowed: shadowed)
            default: writeScalar(value)
            }
        }

        private mutating func writeArray(_ values: [PropertyListValue], shadowed: ShadowedEntries?) {
            appendMarker(0xA0, count: values.count)
            let first = reserveRefs(values.count)
            for index in values.indices { appendRef(first + index) }
            for index in values.indices {
                write(values[index], ref: first + index, shadowed: shadowed?.child(.index(index)))
            }
        }

        /// Keys in code-point order make the bytes a function of the dictionary's contents alone.
        private mutating func writeDictionary(_ values: [String: PropertyListValue], shadowed: ShadowedEntries?) {
            var entries = values.sorted { EquivalentKeys.precedes($0.key, $1.key) }
            if let shadowed, !shadowed.entries.isEmpty { entries = Self.merged(entries, shadowed.entries) }
            appendMarker(0xD0, count: entries.count)
            let firstKey = reserveRefs(entries.count * 2)
            let firstValue = firstKey + entries.count
            for index in entries.indices { appendRef(firstKey + index) }
            for index in entries.indices { appendRef(firstValue + index) }
            for index in entries.indices {
                offsets[firstKey + index] = bytes.count
                appendString(entries[index].key)
            }
            for index in entries.indices {
                let key = entries[index].key
                write(entries[index].value, ref: firstValue + index, shadowed: shadowed?.child(.key(ExactKey(key))))
            }
        }

        /// The entries with the shadowed ones among them, in the same order.
        @inline(never)
        private static func merged(
            _ entries: [(key: String, value: PropertyListValue)], _ shadowed: [ShadowedEntries.Entry]
        ) -> [(key: String, value: PropertyListValue)] {
            (entries + shadowed.map { (key: $0.key, value: $0.value) }).sorted { EquivalentKeys.precedes($0.key, $1.key) }
        }

        @inline(never)
        private mutating func writeScalar(_ value: PropertyListValue) {
            switch value {
            case .bool(let bool):
                bytes.append(bool ? 0x09 : 0x08)
            case .integer(let int):
                appendInteger(Int64(int))
            case .unsignedInteger(let int):
                appendUnsigned(int)
            case .real(let double):
                bytes.append(0x23)
                appendBigEndian(double.bitPattern, size: 8)
            case .float(let float):
                // 4 bytes, as CoreFoundation writes a Float, so readers show the digits written.
                bytes.append(0x22)
                appendBigEndian(UInt64(float.bitPattern), size: 4)
            case .date(let date):
                bytes.append(0x33)
                appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8)
            case .data(let data):
                appendMarker(0x40, count: data.count)
                data.withUnsafeBytes { bytes.append(contentsOf: $0) }
            case .string(let string):
                appendString(string)
            case .array, .dictionary:
                preconditionFailure("containers are written by write(_:ref:)")
            }
        }

        private mutating func reserveRefs(_ count: Int) -> Int {
            let first = nextRef
            nextRef += count
            return first
        }

        private mutating func appendRef(_ ref: Int) {
            appendBigEndian(UInt64(ref), size: refSize)
        }

        /// Apple's readers take 1, 2 and 4-byte integers as unsigned and 8-byte ones as signed, so a
        /// negative number needs all 8 bytes.
        private mutating func appendInteger(_ value: Int64) {
            if value < 0 {
                bytes.append(0x13)
                appendBigEndian(UInt64(bitPattern: value), size: 8)
                return
            }
            let size = BinaryPropertyList.width(forUnsigned: UInt64(value))
            bytes.append(0x10 | UInt8(size.trailingZeroBitCount))
            appendBigEndian(UInt64(value), size: size)
        }

        /// CoreFoundation writes an unsigned value above `Int64.max` as a 16-byte integer whose high 8
        /// bytes are zero: an 8-byte one would read back negative.
        private mutating func appendUnsigned(_ value: UInt64) {
            guard value > UInt64(Int64.max) else { return appendInteger(Int64(value)) }
            bytes.append(0x14)
            appendBigEndian(0, size: 8)
            appendBigEndian(value, size: 8)
        }

        /// A count below 15 fits in the marker's low nibble; a larger one follows as an int object.
        private mutating func appendMarker(_ marker: UInt8, count: Int) {
            if count < 15 {
                bytes.append(marker | UInt8(count))
            } else {
                bytes.append(marker | 0x0F)
                appendInteger(Int64(count))
            }
        }

        /// ASCII text is stored as bytes, anything else as UTF-16, as Apple's writer does.
        private mutating func appendString(_ string: String) {
            var string = string
            let ascii = string.withUTF8 { utf8 -> Bool in
                var union: UInt8 = 0
                for byte in utf8 { union |= byte }
                guard union < 0x80 else { return false }
                appendMarker(0x50, count: utf8.count)
                bytes.append(contentsOf: utf8)
                return true
            }
            guard !ascii else { return }
            let utf16 = string.utf16
            appendMarker(0x60, count: utf16.count)
            for unit in utf16 {
                bytes.append(UInt8(truncatingIfNeeded: unit &>> 8))
                bytes.append(UInt8(truncatingIfNeeded: unit))
            }
        }

        private mutating func appendBigEndian(_ value: UInt64, size: Int) {
            var shift = (size - 1) * 8
            while shift >= 0 {
                bytes.append(UInt8(truncatingIfNeeded: value &>> UInt64(shift)))
                shift -= 8
            }
        }
    }

    /// The smallest of 1, 2, 4 or 8 bytes that holds the value: the widths every reader accepts.
    private static func width(forUnsigned value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    private static let magic: [UInt8] = Array("bplist00".utf8)
    private static let trailerSize = 32

    // MARK: Decoding

    /// Decodes a `bplist00` file.
    ///
    /// Every number read from the input is checked before it is used: offsets, counts and references
    /// against the buffer and the object table, with arithmetic that cannot overflow. Nesting deeper
    /// than ``PropertyListValue/maximumDepth`` and reference cycles are rejected, and so is a graph
    /// of shared containers that would expand to far more values than the file's size can justify.
    ///
    /// Two keys of one dictionary that Swift's `String ==` treats as equal but whose code points
    /// differ (a precomposed `"é"` and `"e\u{301}"`: distinct keys to CoreFoundation and Python, which
    /// compare code points, so Python writes such files) do not make the file unreadable. One entry
    /// survives, key and value together: the one whose key is in Unicode normalization form C (the
    /// precomposed spelling), or, when neither is, the one whose key comes first in code-point order
    /// (``EquivalentKeys``). The choice depends on the keys alone, not on the order a writer put them
    /// in, so the same dictionary reads the same however it was written, binary or XML. The other
    /// entry is not in the value: ``decodeKeepingShadowed(_:)`` returns it aside, for the storage layer
    /// to write back. A key repeated with identical code points is still rejected, since no writer that
    /// serializes a dictionary can produce one in a binary file: it marks a damaged file.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(PropertyListCodingError) -> PropertyListValue {
        var reader = try Reader(bytes, tracking: false)
        return try reader.value(ref: reader.topObject, depth: 0)
    }

    /// Decodes a `bplist00` file as ``decode(_:)-(UnsafeRawBufferPointer)`` does, and returns aside the
    /// entries that lost to an equal key spelled otherwise (`nil` when there are none).
    ///
    /// The reader does not know where it is in the tree, which would cost every read; when the value
    /// turns out to hold shadowed entries (rare: only other programs write such files), it reads the
    /// file a second time, noting where they are.
    package static func decodeKeepingShadowed(
        _ bytes: UnsafeRawBufferPointer
    ) throws(PropertyListCodingError) -> (value: PropertyListValue, shadowed: ShadowedEntries?) {
        var reader = try Reader(bytes, tracking: false)
        let value = try reader.value(ref: reader.topObject, depth: 0)
        guard reader.sawShadowed else { return (value, nil) }
        var tracker = try Reader(bytes, tracking: true)
        let tracked = try tracker.value(ref: tracker.topObject, depth: 0)
        return (tracked, tracker.shadowed.isEmpty ? nil : tracker.shadowed)
    }

    /// Decodes a `bplist00` file held in an array.
    package static func decode(_ bytes: [UInt8]) throws(PropertyListCodingError) -> PropertyListValue {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try decode(buffer) }
        }.get()
    }

    /// Decodes a `bplist00` file held in `Data`.
    package static func decode(_ data: Data) throws(PropertyListCodingError) -> PropertyListValue {
        try data.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try decode(buffer) }
        }.get()
    }

    /// Walks the object graph of one file. Positions are plain `Int`s that are always inside the
    /// buffer; values read from the input are `UInt64` until checked and converted with `exactly:`.
    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        /// Where the objects end; every object must lie in `8 ..< tableOffset`.
        let tableOffset: Int
        let offsetSize: Int
        let refSize: Int
        let objectCount: Int
        let topObject: Int
        /// Containers on the path from the root to the object being read: meeting one again is a cycle.
        var onPath: [Bool]
        /// Objects left to produce. Shared references are legal, but a few kilobytes of containers
        /// referring to each other many times over would expand to billions of values; a tree
        /// visits at most one object per byte of the file, so a small multiple of the size is ample.
        var visitsLeft: Int
        /// Whether the reader notes where each shadowed entry is (see ``decodeKeepingShadowed(_:)``).
        let tracking: Bool
        /// Whether any dictionary had an entry shadowed by an equal key spelled otherwise.
        var sawShadowed = false
        /// When tracking: the way from the root to the container being read, and what was found.
        var path: [ShadowedEntries.Step] = []
        var shadowed = ShadowedEntries()

        init(_ buffer: UnsafeRawBufferPointer, tracking: Bool) throws(PropertyListCodingError) {
            self.buffer = buffer
            self.tracking = tracking
            let count = buffer.count
            guard count >= 8, zip(buffer.prefix(8), BinaryPropertyList.magic).allSatisfy({ $0 == $1 }) else {
                throw PropertyListCodingError(reason: "missing bplist00 header")
            }
            guard count >= 8 + BinaryPropertyList.trailerSize + 2 else {
                throw PropertyListCodingError(reason: "truncated trailer")
            }
            let trailer = count - BinaryPropertyList.trailerSize
            let offsetSize = Int(buffer[trailer + 6])
            let refSize = Int(buffer[trailer + 7])
            guard (1...8).contains(offsetSize) else {
                throw PropertyListCodingError(reason: "offset size \(offsetSize) in trailer is not 1 to 8")
            }
            guard (1...8).contains(refSize) else {
                throw PropertyListCodingError(reason: "object reference size \(refSize) in trailer is not 1 to 8")
            }
            let rawCount = Self.readUnsigned(buffer, at: trailer + 8, size: 8)
            let rawTop = Self.readUnsigned(buffer, at: trailer + 16, size: 8)
            let rawTable = Self.readUnsigned(buffer, at: trailer + 24, size: 8)
            // The table must start after at least one object byte and leave room for its entries.
            guard let table = Int(exactly: rawTable), table > 8, table < trailer else {
                throw PropertyListCodingError(reason: "offset table position \(rawTable) is outside the file")
            }
            guard let objectCount = Int(exactly: rawCount), objectCount > 0,
                  objectCount <= (trailer - table) / offsetSize else {
                throw PropertyListCodingError(reason: "object count \(rawCount) does not fit the offset table")
            }
            guard let top = Int(exactly: rawTop), top < objectCount else {
                throw PropertyListCodingError(reason: "top object \(rawTop) out of range")
            }
            self.tableOffset = table
            self.offsetSize = offsetSize
            self.refSize = refSize
            self.objectCount = objectCount
            self.topObject = top
            self.onPath = [Bool](repeating: false, count: objectCount)
            let (budget, overflow) = count.multipliedReportingOverflow(by: 4)
            self.visitsLeft = overflow ? Int.max : budget
        }

        /// Reads a big-endian unsigned number; the caller has checked that the bytes exist.
        static func readUnsigned(_ buffer: UnsafeRawBufferPointer, at position: Int, size: Int) -> UInt64 {
            var result: UInt64 = 0
            for index in position ..< position + size {
                result = result &<< 8 | UInt64(buffer[index])
            }
            return result
        }

        /// The end of `count` items of `width` bytes starting at `start`, if they all lie before the
        /// offset table. Division instead of multiplication keeps a hostile count from overflowing.
        @inline(never)
        func end(of count: Int, width: Int, from start: Int, what: String) throws(PropertyListCodingError) -> Int {
            guard count >= 0, start <= tableOffset, count <= (tableOffset - start) / width else {
                throw PropertyListCodingError(reason: "\(what) at offset \(start) runs past the object area")
            }
            return start + count * width
        }

        @inline(never)
        func offset(of ref: Int) throws(PropertyListCodingError) -> Int {
            // `ref < objectCount` was checked, and the table was checked to hold `objectCount` entries.
            let raw = Self.readUnsigned(buffer, at: tableOffset + ref * offsetSize, size: offsetSize)
            guard let offset = Int(exactly: raw), offset >= 8, offset < tableOffset else {
                throw PropertyListCodingError(reason: "offset \(raw) of object \(ref) is outside the object area")
            }
            return offset
        }

        @inline(never)
        func ref(at position: Int) throws(PropertyListCodingError) -> Int {
            let raw = Self.readUnsigned(buffer, at: position, size: refSize)
            guard let ref = Int(exactly: raw), ref < objectCount else {
                throw PropertyListCodingError(reason: "object reference \(raw) out of range")
            }
            return ref
        }

        /// Reads the count a marker announces: in its low nibble, or, when that is 0xF, in the int
        /// object that follows. Returns the count and where the payload starts.
        @inline(never)
        func count(marker: UInt8, at position: Int) throws(PropertyListCodingError) -> (count: Int, start: Int) {
            let nibble = Int(marker & 0x0F)
            if nibble != 0x0F { return (nibble, position + 1) }
            let intAt = position + 1
            guard intAt < tableOffset else {
                throw PropertyListCodingError(reason: "count at offset \(position) is truncated")
            }
            let intMarker = buffer[intAt]
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
                throw PropertyListCodingError(reason: "count at offset \(position) is not an integer")
            }
            let size = 1 << Int(intMarker & 0x0F)
            let start = try end(of: size, width: 1, from: intAt + 1, what: "count")
            let raw = Self.readUnsigned(buffer, at: intAt + 1, size: size)
            // An 8-byte int is signed, so its top bit makes the count negative.
            guard let count = Int(exactly: raw), size < 8 || raw >> 63 == 0 else {
                throw PropertyListCodingError(reason: "count at offset \(position) is negative or too large")
            }
            return (count, start)
        }

        /// Reads one object. The recursion runs through here and the two container readers only, and
        /// everything they call is kept out of line (`@inline(never)`): inlined, the scalar readers,
        /// hashing and error messages would sit in every level's frame. Measured at the depth limit:
        /// about 256 KB of stack in an optimized build, about 1 MB in a debug build.
        mutating func value(ref: Int, depth: Int) throws(PropertyListCodingError) -> PropertyListValue {
            guard depth <= PropertyListValue.maximumDepth else { throw Self.tooDeep() }
            let position = try visit(ref)
            let marker = buffer[position]
            switch marker >> 4 {
            case 0xA: return try array(ref: ref, marker: marker, at: position, depth: depth)
            case 0xD: return try dictionary(ref: ref, marker: marker, at: position, depth: depth)
            default: return try scalar(marker: marker, at: position)
            }
        }

        /// Counts the object against the expansion budget and finds where it starts.
        @inline(never)
        private mutating func visit(_ ref: Int) throws(PropertyListCodingError) -> Int {
            guard visitsLeft > 0 else {
                throw PropertyListCodingError(reason: "shared objects expand to more values than the file size allows")
            }
            visitsLeft -= 1
            return try offset(of: ref)
        }

        /// Counts the payload of a data or string object against the same budget: a shared object is
        /// copied at every reference, so a small file referring many times to one large payload would
        /// otherwise expand to gigabytes.
        private mutating func charge(payload count: Int) throws(PropertyListCodingError) {
            guard count >= 0, visitsLeft >= count else {
                throw PropertyListCodingError(reason: "shared objects expand to more bytes than the file size allows")
            }
            visitsLeft -= count
        }

        private static func tooDeep() -> PropertyListCodingError {
            PropertyListCodingError(reason: "nesting deeper than \(PropertyListValue.maximumDepth) levels")
        }

        @inline(never)
        private mutating func array(
            ref: Int, marker: UInt8, at position: Int, depth: Int
        ) throws(PropertyListCodingError) -> PropertyListValue {
            let (count, start) = try count(marker: marker, at: position)
            _ = try end(of: count, width: refSize, from: start, what: "array")
            try enter(ref)
            var values: [PropertyListValue] = []
            values.reserveCapacity(count)
            for index in 0 ..< count {
                if tracking { enterStep(.index(index)) }
                values.append(try value(ref: try self.ref(at: start + index * refSize), depth: depth + 1))
                if tracking { leaveStep() }
            }
            onPath[ref] = false
            return .array(values)
        }

        @inline(never)
        private mutating func dictionary(
            ref: Int, marker: UInt8, at position: Int, depth: Int
        ) throws(PropertyListCodingError) -> PropertyListValue {
            let (count, start) = try count(marker: marker, at: position)
            // Two references per entry, keys first; the check divides, so it cannot overflow.
            _ = try end(of: count, width: refSize * 2, from: start, what: "dictionary")
            try enter(ref)
            var values: [String: PropertyListValue] = [:]
            values.reserveCapacity(count)
            var losers: [ShadowedEntries.Entry] = []
            for index in 0 ..< count {
                let key = try self.key(ref: try self.ref(at: start + index * refSize))
                if tracking { enterStep(.key(ExactKey(key))) }
                let element = try value(ref: try self.ref(at: start + (count + index) * refSize), depth: depth + 1)
                if tracking { leaveStep() }
                guard Self.insert(element, forKey: key, into: &values, shadowed: &losers) else {
                    throw Self.repeatedKey(at: position)
                }
            }
            if !losers.isEmpty { record(losers) }
            onPath[ref] = false
            return .dictionary(values)
        }

        /// Out of line because the inlined hashing code would otherwise sit in every recursion frame.
        @inline(never)
        private static func insert(
            _ element: PropertyListValue, forKey key: String, into values: inout [String: PropertyListValue],
            shadowed: inout [ShadowedEntries.Entry]
        ) -> Bool {
            EquivalentKeys.insert(element, forKey: key, into: &values, shadowed: &shadowed, identical: .reject)
        }

        @inline(never)
        private mutating func enterStep(_ step: ShadowedEntries.Step) { path.append(step) }

        @inline(never)
        private mutating func leaveStep() { path.removeLast() }

        @inline(never)
        private mutating func record(_ losers: [ShadowedEntries.Entry]) {
            sawShadowed = true
            if tracking { shadowed.add(losers, at: path[...]) }
        }

        private static func repeatedKey(at position: Int) -> PropertyListCodingError {
            PropertyListCodingError(reason: "dictionary at offset \(position) repeats a key")
        }

        @inline(never)
        private mutating func scalar(marker: UInt8, at position: Int) throws(PropertyListCodingError) -> PropertyListValue {
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw unsupported(marker, at: position)
                }
            case 0x1:
                return try integer(marker: marker, at: position)
            case 0x2:
                switch marker {
                case 0x22:
                    _ = try end(of: 4, width: 1, from: position + 1, what: "real")
                    let bits = UInt32(truncatingIfNeeded: Self.readUnsigned(buffer, at: position + 1, size: 4))
                    return .float(Float(bitPattern: bits))
                case 0x23:
                    _ = try end(of: 8, width: 1, from: position + 1, what: "real")
                    return .real(Double(bitPattern: Self.readUnsigned(buffer, at: position + 1, size: 8)))
                default:
                    throw PropertyListCodingError(reason: "real at offset \(position) has an unsupported size")
                }
            case 0x3:
                guard marker == 0x33 else {
                    throw PropertyListCodingError(reason: "date at offset \(position) has an unsupported size")
                }
                _ = try end(of: 8, width: 1, from: position + 1, what: "date")
                let seconds = Double(bitPattern: Self.readUnsigned(buffer, at: position + 1, size: 8))
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case 0x4:
                let (count, start) = try count(marker: marker, at: position)
                try charge(payload: count)
                let stop = try end(of: count, width: 1, from: start, what: "data")
                return .data(Data(UnsafeRawBufferPointer(rebasing: buffer[start ..< stop])))
            case 0x5, 0x6:
                try charge(payload: try count(marker: marker, at: position).count)
                return .string(try string(marker: marker, at: position))
            default:
                throw unsupported(marker, at: position)
            }
        }

        @inline(never)
        private mutating func enter(_ ref: Int) throws(PropertyListCodingError) {
            guard !onPath[ref] else {
                throw PropertyListCodingError(reason: "object \(ref) contains itself")
            }
            onPath[ref] = true
        }

        private func unsupported(_ marker: UInt8, at position: Int) -> PropertyListCodingError {
            let hex = String(marker, radix: 16, uppercase: true)
            return PropertyListCodingError(reason: "unsupported object type 0x\(hex) at offset \(position)")
        }

        /// Apple writes 1, 2 and 4-byte integers unsigned, 8-byte ones signed, and 16-byte ones for
        /// values above `Int64.max`; a 16-byte value is accepted when it fits `Int64` or `UInt64`.
        private func integer(marker: UInt8, at position: Int) throws(PropertyListCodingError) -> PropertyListValue {
            let nibble = marker & 0x0F
            guard nibble <= 4 else {
                throw PropertyListCodingError(reason: "integer at offset \(position) has an unsupported size")
            }
            let size = 1 << Int(nibble)
            _ = try end(of: size, width: 1, from: position + 1, what: "integer")
            let value: Int64
            switch size {
            case 16:
                let high = Int64(bitPattern: Self.readUnsigned(buffer, at: position + 1, size: 8))
                let low = Self.readUnsigned(buffer, at: position + 9, size: 8)
                if high == 0 && low >> 63 == 1 { return .unsignedInteger(low) }
                guard (high == 0 && low >> 63 == 0) || (high == -1 && low >> 63 == 1) else {
                    throw PropertyListCodingError(reason: "integer at offset \(position) is outside the 64-bit range")
                }
                value = Int64(bitPattern: low)
            case 8:
                value = Int64(bitPattern: Self.readUnsigned(buffer, at: position + 1, size: 8))
            default:
                // At most 4 bytes, so the unsigned value always fits.
                value = Int64(Self.readUnsigned(buffer, at: position + 1, size: size))
            }
            guard let int = Int(exactly: value) else {
                throw PropertyListCodingError(reason: "integer at offset \(position) does not fit Int")
            }
            return .integer(int)
        }

        @inline(never)
        private mutating func key(ref: Int) throws(PropertyListCodingError) -> String {
            let position = try visit(ref)
            let marker = buffer[position]
            guard marker >> 4 == 0x5 || marker >> 4 == 0x6 else {
                throw PropertyListCodingError(reason: "dictionary key object \(ref) is not a string")
            }
            return try string(marker: marker, at: position)
        }

        /// Marker 0x5 holds ASCII bytes (anything above 0x7F is rejected, as Apple's and Python's
        /// readers do); 0x6 holds UTF-16 big-endian code units, whose unpaired surrogates Swift
        /// cannot represent and replaces with U+FFFD.
        private func string(marker: UInt8, at position: Int) throws(PropertyListCodingError) -> String {
            let (count, start) = try count(marker: marker, at: position)
            if marker >> 4 == 0x5 {
                let stop = try end(of: count, width: 1, from: start, what: "string")
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[start ..< stop])
                var union: UInt8 = 0
                for byte in bytes { union |= byte }
                guard union < 0x80 else {
                    throw PropertyListCodingError(reason: "ASCII string at offset \(position) holds a non-ASCII byte")
                }
                return String(unsafeUninitializedCapacity: count) { destination in
                    UnsafeMutableRawBufferPointer(destination).copyMemory(from: bytes)
                    return count
                }
            }
            _ = try end(of: count, width: 2, from: start, what: "string")
            return withUnsafeTemporaryAllocation(of: UInt16.self, capacity: count) { units in
                for index in 0 ..< count {
                    let byte = start + index * 2
                    units[index] = UInt16(buffer[byte]) &<< 8 | UInt16(buffer[byte + 1])
                }
                return String(decoding: units, as: UTF16.self)
            }
        }
    }
}
