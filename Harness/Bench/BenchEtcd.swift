import EtcdTestSupport
import Foundation
import PrefsEtcd
import RVS_PersistentPrefs
import TestSupport
import PrefsTool

/// `harness bench --etcd`: an etcd domain measured against the bare gateway calls for the same bytes, each over
/// one kept-alive connection, on a three-member cluster the command starts on loopback (Debian's etcd-server).
///
/// - read: a linearizable read of an unchanged 10-entry collection; floor: a range of the key.
/// - read-watched: the same read in ``EtcdDomainStorage/ReadMode/watched`` mode; floor: the same range.
/// - write-entry: one subscript write; floor: a compare-and-swap transaction putting the same bytes.
/// - modify: an atomic increment; floor: the same transaction.
/// - external-change: a write through another member heard by a watching instance's observer, from the write
///   starting; floor: the same compare-and-swap heard on a bare watch stream of another member.
///   external-change-watched: the same with the watching instance in watched read mode.
enum BenchEtcd {
    /// A 10-entry collection's instance over an etcd domain.
    final class Preferences: RVS_PersistentPrefs {
        nonisolated(unsafe) static var suites: [String: DefaultsSuite] = [:]
        let suiteName: String
        init(key: String, suite: String) {
            suiteName = suite
            super.init(key: key)
        }
        required init(key: String, values: [String: Any] = [:]) { fatalError("not used") }
        override var keys: [String] { (0..<10).map { "entry\($0)" } + ["count"] }
        override var userDefaults: DefaultsSuite? { Self.suites[suiteName] }
    }

    /// Runs every case and prints the BENCH lines and the table, as `harness bench` does.
    static func report(quick: Bool, samples: Int?, json: String?) throws {
        #if DEBUG
        Console.say("note: this is a debug build; use `swift run -c release harness bench --etcd` for real figures")
        #endif
        let results = try run(samples: samples ?? (quick ? 41 : 201), rounds: samples ?? (quick ? 50 : 300))
        for result in results { Console.say(result.line) }
        Console.say()
        Console.say(BenchResult.table(results))
        if let json {
            do { try BenchResult.json(results).write(to: URL(fileURLWithPath: json)) }
            catch { throw HarnessError.failure("cannot write \(json): \(error)") }
        }
    }

    static func run(samples: Int, rounds: Int) throws -> [BenchResult] {
        Console.say("Starting a three-member etcd cluster on loopback…")
        let cluster: EtcdCluster
        do { cluster = try EtcdCluster() } catch { throw HarnessError.failure("\(error)") }
        defer { cluster.stop() }
        Console.say("Members: \(cluster.endpoints.map(\.absoluteString).joined(separator: ", "))\n")
        let name = "bench.\(UUID().uuidString)"
        func domain(_ member: Int, _ mode: EtcdDomainStorage.ReadMode = .linearizable) throws -> EtcdDomainStorage {
            do { return try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: member), name: name, readMode: mode) }
            catch { throw HarnessError.failure("\(error)") }
        }
        func preferences(_ suite: String, _ storage: EtcdDomainStorage, key: String = "bench") -> Preferences {
            Preferences.suites[suite] = DefaultsSuite(persistentDomain: storage, arguments: [])
            return Preferences(key: key, suite: suite)
        }
        let linearizable = try domain(0)
        let prefs = preferences("linearizable", linearizable)
        prefs.values = Dictionary(uniqueKeysWithValues: (0..<10).map { ("entry\($0)", $0) })
        try prefs.throwIfFailed()
        let watchedPrefs = preferences("watched", try domain(0, .watched))
        _ = watchedPrefs.values

        let bare = try bareConnection(cluster.members[0].clientURL)
        let key = Data("/RVS_PersistentPrefs/\(name)".utf8).base64EncodedString()
        let rangeBody = Array(#"{"key":"\#(key)"}"#.utf8)
        let value = try rawValue(bare, rangeBody)
        let valueBase64 = Data(value).base64EncodedString()
        // The floor's own key, so that its writes never conflict with ours.
        let floorKey = Data("/RVS_PersistentPrefs/\(name).floor".utf8).base64EncodedString()
        var floorRevision = Int64(0)
        func floorCompareAndSwap() {
            let body = #"{"compare":[{"target":"MOD","key":"\#(floorKey)","mod_revision":"\#(floorRevision)"}],"success":[{"request_put":{"key":"\#(floorKey)","value":"\#(valueBase64)"}}],"failure":[{"request_range":{"key":"\#(floorKey)"}}]}"#
            if let answer = try? bare.post("/v3/kv/txn", Array(body.utf8)) { floorRevision = revision(in: answer) }
        }
        let range = { _ = try? bare.post("/v3/kv/range", rangeBody) }

        var results: [BenchResult] = []
        results.append(BenchResult.measure("etcd-read", samples: samples, batch: 10,
                                           ours: { _ = prefs.values }, peer: nil, floor: range,
                                           bytes: value.count))
        results.append(BenchResult.measure("etcd-read-watched", samples: samples, batch: 10,
                                           ours: { _ = watchedPrefs.values }, peer: nil, floor: range,
                                           bytes: value.count))
        var round = 0
        results.append(BenchResult.measure("etcd-write-entry", samples: samples, batch: 1,
                                           ours: {
                                               round += 1
                                               prefs["entry\(round % 10)"] = round
                                           },
                                           peer: nil, floor: floorCompareAndSwap, bytes: value.count))
        results.append(BenchResult.measure("etcd-modify", samples: samples, batch: 1,
                                           ours: { prefs.modify("count") { ($0 as? Int ?? 0) + 1 } },
                                           peer: nil, floor: floorCompareAndSwap, bytes: value.count))
        try prefs.throwIfFailed()
        let writer = preferences("writer", try domain(0), key: "external")
        results.append(try externalChange("etcd-external-change", cluster,
                                          prefs: preferences("watcher", try domain(1), key: "external"),
                                          writer: writer, bare: bare, rounds: rounds))
        // The same, the watching instance reading in watched mode: its delivery's read needs no round trip.
        results.append(try externalChange("etcd-external-change-watched", cluster,
                                          prefs: preferences("watched-watcher", try domain(1, .watched), key: "external"),
                                          writer: writer, bare: bare, rounds: rounds))
        return results
    }

    /// A write through member 0 heard by an instance attached to member 1; the floor makes the same
    /// compare-and-swap transaction through a bare connection and waits for its event on a bare watch stream of
    /// member 1.
    private static func externalChange(_ name: String, _ cluster: EtcdCluster, prefs: Preferences, writer: Preferences,
                                       bare: EtcdBareConnection, rounds: Int) throws -> BenchResult {
        writer["count"] = -1
        try writer.throwIfFailed()
        let heard = WaitableValue<[Int: UInt64]>([:])
        prefs.watchesExternalChanges = true
        let observation = prefs.observe(\.values, options: [.new]) { _, change in
            guard let number = change.newValue?["count"] as? Int else { return }
            let time = BenchResult.now()
            heard.update { $0[number] = time }
        }
        defer {
            observation.invalidate()
            prefs.watchesExternalChanges = false
        }
        let watchKey = Data("/bench-floor-watch/\(name)".utf8).base64EncodedString()
        let stream = try bareConnection(cluster.members[1].clientURL)
        defer { stream.close() }
        do {
            try stream.startStream("/v3/watch", Array(#"{"create_request":{"key":"\#(watchKey)"}}"#.utf8))
            _ = try stream.nextPiece()  // "created"
        } catch { throw HarnessError.failure("cannot start a bare watch: \(error)") }
        let payload = Data(BinaryPropertyListBytes.sample).base64EncodedString()
        var floorRevision = Int64(0)

        let warmUp = min(20, max(1, rounds / 10))
        var ours: [Double] = [], floor: [Double] = []
        for number in 0..<(warmUp + rounds) {
            let started = BenchResult.now()
            writer["count"] = number
            try writer.throwIfFailed()
            guard heard.wait(timeout: 30, until: { $0[number] != nil }), let time = heard.current[number] else {
                throw HarnessError.failure("the watching instance was not told of write \(number) within 30 seconds")
            }
            let floorStarted = BenchResult.now()
            do {
                let body = #"{"compare":[{"target":"MOD","key":"\#(watchKey)","mod_revision":"\#(floorRevision)"}],"success":[{"request_put":{"key":"\#(watchKey)","value":"\#(payload)"}}],"failure":[{"request_range":{"key":"\#(watchKey)"}}]}"#
                floorRevision = revision(in: try bare.post("/v3/kv/txn", Array(body.utf8)))
                _ = try stream.nextPiece()
            } catch { throw HarnessError.failure("bare watch: \(error)") }
            let floorHeard = BenchResult.now()
            guard number >= warmUp else { continue }
            ours.append((Double(time) - Double(started)) / 1_000)
            floor.append((Double(floorHeard) - Double(floorStarted)) / 1_000)
        }
        var result = BenchResult(name: name, ours: ours, peer: nil, floor: floor, bytes: nil)
        result.figures = [("ours_p99_us", BenchResult.format(BenchResult.percentile(ours, 0.99))),
                          ("floor_p99_us", BenchResult.format(BenchResult.percentile(floor, 0.99)))]
        return result
    }

    private static func bareConnection(_ url: URL) throws -> EtcdBareConnection {
        do { return try EtcdBareConnection(url) } catch { throw HarnessError.failure("cannot connect to \(url): \(error)") }
    }

    /// The raw value of the domain's key.
    private static func rawValue(_ bare: EtcdBareConnection, _ rangeBody: [UInt8]) throws -> [UInt8] {
        guard let answer = try? bare.post("/v3/kv/range", rangeBody),
              let object = try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any],
              let kvs = object["kvs"] as? [[String: Any]], let text = kvs.first?["value"] as? String,
              let bytes = Data(base64Encoded: text) else { throw HarnessError.failure("cannot read the bench domain") }
        return [UInt8](bytes)
    }

    /// The header revision of a gateway answer, found without parsing the whole JSON.
    private static func revision(in answer: [UInt8]) -> Int64 {
        let text = String(decoding: answer.prefix(200), as: UTF8.self)
        guard let start = text.range(of: #""revision":""#)?.upperBound,
              let end = text[start...].firstIndex(of: "\"") else { return 0 }
        return Int64(text[start..<end]) ?? 0
    }
}

/// The bytes the floor's watch case puts: a small domain, as a domain write would.
private enum BinaryPropertyListBytes {
    static let sample: [UInt8] = Array("bplist00-floor-payload-of-a-small-domain".utf8)
}
