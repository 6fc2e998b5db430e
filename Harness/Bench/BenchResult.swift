// The figures of `harness bench`: timing, medians, the table and the JSON.

import Foundation
import Glibc

/// The figures of one case.
struct BenchResult {
    let name: String
    let ours: [Double]
    let peer: [Double]?
    let floor: [Double]?
    let bytes: Int?

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    var oursMedian: Double { Self.median(ours) }
    var peerMedian: Double? { peer.map(Self.median) }
    var floorMedian: Double? { floor.map(Self.median) }

    static func format(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value < 10 ? String(format: "%.3f", value) : String(format: "%.1f", value)
    }

    var line: String {
        "BENCH case=\(name) ours_us=\(Self.format(oursMedian)) peer_us=\(Self.format(peerMedian)) floor_us=\(Self.format(floorMedian))"
    }

    /// Times `batch` calls of each of ours, peer and floor per sample, interleaved, after a warm-up of
    /// a tenth of the samples; the `prepare` closures run before each timed call, untimed.
    static func measure(
        _ name: String, samples: Int, batch: Int,
        prepareOurs: (() -> Void)? = nil, ours: () -> Void,
        preparePeer: (() -> Void)? = nil, peer: (() -> Void)?,
        prepareFloor: (() -> Void)? = nil, floor: (() -> Void)?,
        bytes: Int? = nil
    ) -> BenchResult {
        func timed(_ prepare: (() -> Void)?, _ body: () -> Void) -> Double {
            var total: UInt64 = 0
            for _ in 0..<batch {
                prepare?()
                let start = now()
                body()
                total += now() - start
            }
            return Double(total) / Double(batch) / 1_000
        }
        let warmUp = samples < 10 ? 1 : max(3, samples / 10)
        var oursSamples: [Double] = [], peerSamples: [Double] = [], floorSamples: [Double] = []
        for index in 0..<(warmUp + samples) {
            let a = timed(prepareOurs, ours)
            let b = peer.map { timed(preparePeer, $0) }
            let c = floor.map { timed(prepareFloor, $0) }
            guard index >= warmUp else { continue }
            oursSamples.append(a)
            if let b { peerSamples.append(b) }
            if let c { floorSamples.append(c) }
        }
        return BenchResult(name: name, ours: oursSamples, peer: peer == nil ? nil : peerSamples,
                           floor: floor == nil ? nil : floorSamples, bytes: bytes)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func table(_ results: [BenchResult]) -> String {
        var lines = ["case                        ours µs    peer µs   floor µs  ours/floor  bytes"]
        for result in results {
            let ratio = result.floorMedian.map { String(format: "%.2f×", result.oursMedian / $0) } ?? "-"
            lines.append(
                result.name.padding(toLength: 26, withPad: " ", startingAt: 0)
                    + format(result.oursMedian).leftPadded(10) + format(result.peerMedian).leftPadded(11)
                    + format(result.floorMedian).leftPadded(11) + ratio.leftPadded(12)
                    + (result.bytes.map(String.init) ?? "-").leftPadded(7)
            )
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [BenchResult]) -> Data {
        let objects: [[String: Any]] = results.map { result in
            var object: [String: Any] = ["case": result.name, "ours_us": result.ours, "ours_median_us": result.oursMedian]
            if let peer = result.peer { object["peer_us"] = peer; object["peer_median_us"] = result.peerMedian ?? 0 }
            if let floor = result.floor { object["floor_us"] = floor; object["floor_median_us"] = result.floorMedian ?? 0 }
            if let bytes = result.bytes { object["bytes"] = bytes }
            return object
        }
        return (try? JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
