// The figures of `harness bench`: timing, medians, the table and the JSON.

import Foundation
import Glibc
import PrefsTool

/// The figures of one case.
struct BenchResult {
    let name: String
    let ours: [Double]
    let peer: [Double]?
    let floor: [Double]?
    let bytes: Int?
    /// Further samples timed beside ours, peer and floor (a second floor, the untyped form of a typed
    /// call), each reported as `<name>_us` with its median.
    var others: [(name: String, samples: [Double])] = []
    /// Further figures of the case, already computed (percentiles, CPU time), reported as `<name>=<value>`.
    var figures: [(name: String, value: String)] = []

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    /// The value below which `fraction` of the samples lie (nearest rank).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((Double(sorted.count) * fraction).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    var oursMedian: Double { Self.median(ours) }
    var peerMedian: Double? { peer.map(Self.median) }
    var floorMedian: Double? { floor.map(Self.median) }

    static func format(_ value: Double?) -> String {
        guard let value else { return "-" }
        return abs(value) < 10 ? String(format: "%.3f", value) : String(format: "%.1f", value)
    }

    /// The extra fields of the BENCH line, in order: the others' medians, then the figures.
    var extraFields: [(name: String, value: String)] {
        others.map { ("\($0.name)_us", Self.format(Self.median($0.samples))) } + figures
    }

    var line: String {
        "BENCH case=\(name) ours_us=\(Self.format(oursMedian)) peer_us=\(Self.format(peerMedian)) floor_us=\(Self.format(floorMedian))"
            + extraFields.map { " \($0.name)=\($0.value)" }.joined()
    }

    /// Times `batch` calls of each of ours, peer, floor and `others` per sample, interleaved, after a
    /// warm-up of a tenth of the samples; the `prepare` closures run before each timed call, untimed.
    static func measure(
        _ name: String, samples: Int, batch: Int,
        prepareOurs: (() -> Void)? = nil, ours: () -> Void,
        preparePeer: (() -> Void)? = nil, peer: (() -> Void)?,
        prepareFloor: (() -> Void)? = nil, floor: (() -> Void)?,
        others: [(name: String, body: () -> Void)] = [],
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
        var otherSamples = [[Double]](repeating: [], count: others.count)
        for index in 0..<(warmUp + samples) {
            let a = timed(prepareOurs, ours)
            let b = peer.map { timed(preparePeer, $0) }
            let c = floor.map { timed(prepareFloor, $0) }
            let d = others.map { timed(nil, $0.body) }
            guard index >= warmUp else { continue }
            oursSamples.append(a)
            if let b { peerSamples.append(b) }
            if let c { floorSamples.append(c) }
            for (slot, value) in d.enumerated() { otherSamples[slot].append(value) }
        }
        return BenchResult(name: name, ours: oursSamples, peer: peer == nil ? nil : peerSamples,
                           floor: floor == nil ? nil : floorSamples, bytes: bytes,
                           others: zip(others, otherSamples).map { ($0.name, $1) })
    }

    /// CLOCK_MONOTONIC in nanoseconds: system-wide, so that two processes' readings can be subtracted.
    static func now() -> UInt64 {
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
                    + result.extraFields.map { "  \($0.name)=\($0.value)" }.joined()
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
            for other in result.others {
                object["\(other.name)_us"] = other.samples
                object["\(other.name)_median_us"] = median(other.samples)
            }
            for figure in result.figures { object[figure.name] = Double(figure.value) ?? figure.value }
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
