import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// SPEC §3 "Values read back": a stored number, at any depth, casts with `as?` to every Swift integer and
/// floating-point type that holds it exactly, as it does on Apple platforms; containers cast element-wise.
/// Every cast is checked in a new process (the TestWorker), against an oracle that is Swift's own
/// `init(exactly:)`, not Foundation's bridging.
@Suite("Numbers read back cast to every numeric type that holds them exactly")
struct NumericCastTests {
    /// What was written, as the oracle sees it.
    indirect enum Written: Sendable {
        case int(Int), uint(UInt64), double(Double), float(Float), bool(Bool)
        case array([Written]), dictionary([String: Written])
    }

    /// Entry name → (the value handed to the subscript, what it is).
    nonisolated(unsafe) static let entries: [String: (native: Any, written: Written)] = [
        "i0": (0, .int(0)), "i1": (1, .int(1)), "i5": (5, .int(5)), "iMinus1": (-1, .int(-1)),
        "i127": (Int8(127), .int(127)), "iMinus8": (Int8(-8), .int(-8)), "i128": (Int16(128), .int(128)),
        "i200": (UInt8(200), .int(200)), "i255": (UInt8(255), .int(255)), "i256": (UInt16(256), .int(256)),
        "i300": (Int32(300), .int(300)), "i32768": (Int64(32768), .int(32768)), "i65536": (UInt(65536), .int(65536)),
        "iInt32Min": (Int32.min, .int(Int(Int32.min))), "iUInt32Max": (UInt32.max, .int(Int(UInt32.max))),
        "i2p24p1": (16_777_217, .int(16_777_217)), "i2p53p1": ((1 << 53) + 1, .int((1 << 53) + 1)),
        "iMax": (Int.max, .int(Int.max)), "iMin": (Int.min, .int(Int.min)), "iUInt64": (UInt64(7), .int(7)),
        "uMax": (UInt64.max, .uint(.max)), "aU64": ([UInt64.max, 1], .array([.uint(.max), .uint(1)])),
        "d0.8": (0.8, .double(0.8)), "d1.5": (1.5, .double(1.5)), "d5": (5.0, .double(5)), "d1": (1.0, .double(1)),
        "dMinus0": (-0.0, .double(-0.0)), "dMinus2.5": (-2.5, .double(-2.5)), "d1e300": (1e300, .double(1e300)),
        "dNaN": (Double.nan, .double(.nan)), "dInf": (Double.infinity, .double(.infinity)),
        "d2p63": (9_223_372_036_854_775_808.0, .double(9_223_372_036_854_775_808.0)), "d300": (300.0, .double(300)),
        "f0.8": (Float(0.8), .float(0.8)), "f12.3": (Float(12.3), .float(12.3)), "f3": (Float(3), .float(3)),
        "fNaN": (Float.nan, .float(.nan)), "f1e38": (Float(1e38), .float(1e38)), "fMinus0.25": (Float(-0.25), .float(-0.25)),
        "bTrue": (true, .bool(true)), "bFalse": (false, .bool(false)),
        "aFloats": ([Float(0.8), Float(1.5)], .array([.float(0.8), .float(1.5)])),
        "aSmall": ([1, 2, 3], .array([.int(1), .int(2), .int(3)])),
        "aInts": ([1, 200, 300], .array([.int(1), .int(200), .int(300)])),
        "aMixed": ([1, 2.5] as [Any], .array([.int(1), .double(2.5)])),
        "aBools": ([true, false], .array([.bool(true), .bool(false)])),
        "mU8": (["a": 200, "b": 3], .dictionary(["a": .int(200), "b": .int(3)])),
        "mI32": (["a": Int32.max, "b": -5] as [String: Any], .dictionary(["a": .int(Int(Int32.max)), "b": .int(-5)])),
        "mFloats": (["x": Float(0.25), "y": Float(0.8)], .dictionary(["x": .float(0.25), "y": .float(0.8)])),
        "nested": (["outer": ["inner": [Float(2.5), Float(0.8)]]], .dictionary(["outer": .dictionary(["inner": .array([.float(2.5), .float(0.8)])])])),
    ]

    /// The casts the worker reports (see `castTable` in Tests/TestWorker/main.swift).
    enum Cast: String, CaseIterable, Sendable {
        case int = "Int", int8 = "Int8", int16 = "Int16", int32 = "Int32", int64 = "Int64"
        case uint = "UInt", uint8 = "UInt8", uint16 = "UInt16", uint32 = "UInt32", uint64 = "UInt64"
        case float = "Float", double = "Double", bool = "Bool", cgFloat = "CGFloat"

        /// What `as?` must give for one scalar: Swift's exact conversions. NaN casts to the floating-point
        /// types (bridging keeps it; `init(exactly:)` would refuse it); a number equal to 0 or 1 casts to
        /// Bool as on Apple platforms; a Bool casts to nothing but Bool; nothing casts to CGFloat on Linux.
        func expected(_ written: Written) -> String? {
            func text<T>(_ value: T?) -> String? { value.map { "\($0)" } }
            switch (self, written) {
            case (.bool, .bool(let bool)): return text(bool)
            case (_, .bool), (.cgFloat, _), (_, .array), (_, .dictionary): return nil
            case (.bool, .int(let int)): return int == 0 ? "false" : int == 1 ? "true" : nil
            case (.bool, .uint(let int)): return int == 0 ? "false" : int == 1 ? "true" : nil
            case (.bool, .double(let double)): return double == 0 ? "false" : double == 1 ? "true" : nil
            case (.bool, .float(let float)): return float == 0 ? "false" : float == 1 ? "true" : nil
            case (.float, .int(let int)): return text(Float(exactly: int))
            case (.float, .uint(let int)): return text(Float(exactly: int))
            case (.float, .double(let double)): return double.isNaN ? text(Float.nan) : text(Float(exactly: double))
            case (.float, .float(let float)): return text(float)
            case (.double, .int(let int)): return text(Double(exactly: int))
            case (.double, .uint(let int)): return text(Double(exactly: int))
            case (.double, .double(let double)): return text(double)
            case (.double, .float(let float)): return text(Double(float))
            default: return integer(written)
            }
        }

        private func integer(_ written: Written) -> String? {
            switch self {
            case .int: return exactly(written, Int.self)
            case .int8: return exactly(written, Int8.self)
            case .int16: return exactly(written, Int16.self)
            case .int32: return exactly(written, Int32.self)
            case .int64: return exactly(written, Int64.self)
            case .uint: return exactly(written, UInt.self)
            case .uint8: return exactly(written, UInt8.self)
            case .uint16: return exactly(written, UInt16.self)
            case .uint32: return exactly(written, UInt32.self)
            case .uint64: return exactly(written, UInt64.self)
            default: return nil
            }
        }

        private func exactly<T: BinaryInteger>(_ written: Written, _ type: T.Type) -> String? {
            switch written {
            case .int(let int): return T(exactly: int).map { "\($0)" }
            case .uint(let int): return T(exactly: int).map { "\($0)" }
            case .double(let double): return double.isFinite ? T(exactly: double).map { "\($0)" } : nil
            case .float(let float): return float.isFinite ? T(exactly: float).map { "\($0)" } : nil
            default: return nil
            }
        }

        /// `as? [T]`: every element casts, joined by ",".
        func expectedArray(_ written: Written) -> String? {
            guard case .array(let elements) = written else { return nil }
            let cast = elements.map(expected)
            return cast.contains(where: { $0 == nil }) ? nil : cast.map { $0! }.joined(separator: ",")
        }

        /// `as? [String: T]`: every value casts, as sorted "key=value" joined by ",".
        func expectedDictionary(_ written: Written) -> String? {
            guard case .dictionary(let entries) = written else { return nil }
            var parts: [String] = []
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                guard let cast = expected(value) else { return nil }
                parts.append("\(key)=\(cast)")
            }
            return parts.joined(separator: ",")
        }
    }

    /// The worker's report: entry → cast → result. Written once, read once by a new process, shared by
    /// every test of the suite.
    static let report: Result<[String: [String: String]], WorkerFailed> = {
        let directory = TemporaryDirectory()
        do {
            let domain = try FileDomainStorage(directory: directory.appending("prefs"), name: "app")
            let suite = DefaultsSuite(persistentDomain: domain, arguments: [])
            let prefs = BaseClassTestPrefs(suite: suite, key: "settings", values: nil, allowing: Array(entries.keys))
            prefs.values = entries.mapValues(\.native)
            guard prefs.lastError == nil else { return .failure(WorkerFailed(message: "write: \(prefs.lastError!)")) }
            let worker = try ChildProcess.worker("cast-entries", directory.appending("prefs"), "app", "settings")
            var table: [String: [String: String]] = [:]
            while let line = worker.readLine() {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count == 3 else { return .failure(WorkerFailed(message: "bad line \(line)")) }
                table[fields[0], default: [:]][fields[1]] = fields[2]
            }
            guard worker.wait() == 0 else { return .failure(WorkerFailed(message: worker.readErrors())) }
            return .success(table)
        } catch {
            return .failure(WorkerFailed(message: "\(error)"))
        }
    }()

    struct WorkerFailed: Error { let message: String }

    private func check(_ cast: String, expected: (Written) -> String?) throws {
        let table = try Self.report.get()
        #expect(table.count == Self.entries.count, "the worker read \(table.count) entries")
        for (name, entry) in Self.entries.sorted(by: { $0.key < $1.key }) {
            let seen = table[name]?[cast]
            #expect(seen == (expected(entry.written) ?? "nil"), "\(name) as? \(cast)")
        }
    }

    @Test("Each stored scalar, read in a new process, casts to the type exactly when the type holds it", arguments: Cast.allCases)
    func scalarCast(cast: Cast) throws {
        try check(cast.rawValue, expected: cast.expected)
    }

    @Test("Arrays read in a new process cast element-wise to [T]", arguments: Cast.allCases)
    func arrayCast(cast: Cast) throws {
        try check("[\(cast.rawValue)]", expected: cast.expectedArray)
    }

    @Test("Dictionaries read in a new process cast value-wise to [String: T]", arguments: Cast.allCases)
    func dictionaryCast(cast: Cast) throws {
        try check("[String: \(cast.rawValue)]", expected: cast.expectedDictionary)
    }

    @Test("A number two levels down casts too: as? [String: [String: [Float]]]")
    func nestedCast() throws {
        let table = try Self.report.get()
        #expect(table["nested"]?["[String: [String: [Float]]]"] == "outer=\(["inner": [Float(2.5), Float(0.8)]])")
        #expect(table["mFloats"]?["[String: [String: [Float]]]"] == "nil")
    }

    @Test("The casts the issue names, spelled out: a Float property and Int32, UInt8 and UInt properties read back")
    func portedGetters() throws {
        let table = try Self.report.get()
        #expect(table["f0.8"]?["Float"] == "0.8", "var volume: Float { self[\"volume\"] as? Float ?? 0.5 }")
        #expect(table["f0.8"]?["Double"] == "0.800000011920929")
        #expect(table["iInt32Min"]?["Int32"] == "-2147483648")
        #expect(table["i200"]?["UInt8"] == "200" && table["i300"]?["UInt8"] == "nil")
        #expect(table["i5"]?["UInt"] == "5" && table["iMinus1"]?["UInt"] == "nil")
        #expect(table["i5"]?["Double"] == "5.0")
        #expect(table["aFloats"]?["[Float]"] == "0.8,1.5")
        #expect(table["mI32"]?["[String: Int32]"] == "a=2147483647,b=-5")
        #expect(table["mU8"]?["[String: UInt8]"] == "a=200,b=3")
        #expect(table["bTrue"]?["Bool"] == "true" && table["bTrue"]?["Int"] == "nil")
        #expect(table["d1.5"]?["CGFloat"] == "nil", "Foundation on Linux does not bridge NSNumber to CGFloat")
        #expect(table["uMax"]?["UInt64"] == "18446744073709551615" && table["uMax"]?["Int64"] == "nil")
    }

    @Test("In the writing process too, a Float reads back as? Float equal to it, prints as written, and writes back unchanged")
    func sameProcessFloat() throws {
        let fixture = try BaseClassFixture()
        let prefs = BaseClassTestPrefs(suite: fixture.suite, key: "settings", values: nil, allowing: ["volume"])
        prefs["volume"] = Float(0.8)
        #expect(prefs["volume"] as? Float == 0.8)
        #expect(prefs["volume"] as? Double == Double(Float(0.8)))
        #expect("\(prefs["volume"]!)" == "0.8")
        let before = fileBytes(fixture.path)
        prefs.values = prefs.values
        #expect(fileBytes(fixture.path) == before, "a value read back must be written back as the same bytes")
    }
}
