// What `harness check` does, drawn from its seed: each worker's operations and the nemesis's faults. Both are
// pure functions of the seed, so a run can be replayed and two runs compared by the digest of their plan.

import Foundation
import Glibc
import PrefsTool

/// SplitMix64: a small generator whose whole state is its seed, identical on every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476C_E5E4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed of worker `number` of a run seeded with `seed`.
    static func workerSeed(_ seed: UInt64, worker number: Int) -> UInt64 {
        var generator = SeededGenerator(seed: seed ^ (UInt64(number + 1) &* 0xD6E8_FEB8_6659_FD93))
        return generator.next()
    }
}

/// The layout every process of a check agrees on, under one root directory.
struct CheckLayout {
    let root: String
    /// The domains: `d0` in a real directory, `d1` in a directory reached through a symbolic link.
    static let domains = ["d0", "d1"]
    /// The storage key of the checked registers, and the entries that are registers.
    static let key = "k0"
    static let entries = ["a", "b", "c", "t"]
    /// The storage key and entry of the `modify` counter.
    static let counterKey = "ctr"
    static let counterEntry = "n"
    /// The entries an administrator's files supply: a system default and a forced entry.
    static let systemEntry = "sysdefault"
    static let managedEntry = "policy"

    var preferences: String { root + "/prefs" }
    var link: String { root + "/link" }
    var systemDirectory: String { root + "/sys" }
    var managedDirectory: String { root + "/managed" }
    var logs: String { root + "/log" }
    var scratch: String { root + "/scratch" }

    /// The directory a domain's file is named in (for `d1`, through the link).
    func directory(of domain: String) -> String { domain == "d0" ? preferences : link }
    func file(of domain: String) -> String { directory(of: domain) + "/\(domain).plist" }
    func log(of worker: Int) -> String { logs + "/p\(worker).jsonl" }
}

/// One operation of a worker; the values it writes are chosen when it runs (unique per process and operation).
enum CheckStep: Equatable {
    case write(domain: String, entry: String)
    case remove(domain: String, entry: String)
    case replace(domain: String, entries: [String])
    case typedWrite(domain: String)
    case increment(domain: String, typed: Bool)
    case read(domain: String, entry: String)
    case readAll(domain: String)
    case typedRead(domain: String)
    case readCounter(domain: String)

    /// The next operation drawn from `generator`: a mix weighted towards writes and reads of entries.
    static func next(_ generator: inout SeededGenerator) -> CheckStep {
        let domain = CheckLayout.domains[Int(generator.next() % 2)]
        let entry = ["a", "b", "c"][Int(generator.next() % 3)]
        switch generator.next() % 100 {
        case 0..<22: return .write(domain: domain, entry: entry)
        case 22..<28: return .remove(domain: domain, entry: entry)
        case 28..<35:
            let entries = CheckLayout.entries.filter { _ in generator.next() % 2 == 0 }
            return .replace(domain: domain, entries: entries.isEmpty ? [entry] : entries)
        case 35..<42: return .typedWrite(domain: domain)
        case 42..<56: return .increment(domain: domain, typed: generator.next() % 2 == 0)
        case 56..<76: return .read(domain: domain, entry: entry)
        case 76..<86: return .readAll(domain: domain)
        case 86..<92: return .typedRead(domain: domain)
        default: return .readCounter(domain: domain)
        }
    }
}

/// One fault of the nemesis, at `time` seconds after the workers started.
struct Fault: Equatable {
    enum Kind: String, CaseIterable {
        /// The preferences directory replaced by a new one holding the same files (atomically exchanged),
        /// while the coordinator holds the old one open.
        case recreateDirectory = "directory removed and made again"
        /// A copy of the domain file renamed over it: same bytes, new inode.
        case renameOverFile = "rename over the file"
        /// A write made in place through a hard link to the domain file (a write the nemesis records).
        case hardLinkWrite = "write through a hard link"
        /// The symbolic link on `d1`'s path retargeted to a new directory holding the same files.
        case retargetSymlink = "symbolic link retargeted"
        /// The system defaults file of `d0` appearing, changing or going.
        case systemFile = "system file appears, changes, goes"
        /// The managed (forced) file of `d0` appearing, changing or going.
        case managedFile = "managed file appears, changes, goes"
        /// A directory on a domain's path (the preferences directory, or the directory `d1`'s link names) covered
        /// by a bind mount of a new directory holding hard links to the same files, and unmounted (lazily, so
        /// that open descriptors keep the covered one) up to 2.2 s later, after the files written meanwhile
        /// were linked back under the covered path. A plan may mount one before the workers start.
        case bindMount = "bind mount over a directory of the path, then unmounted"
        /// `kill -9` of a worker, then a new one.
        case killWorker = "kill -9 of a worker"
        /// etcd: `kill -9` of one member, restarted over its data a moment later.
        case killMember = "kill -9 of an etcd member"
        /// etcd: `kill -9` of two members of three at once (quorum lost), restarted a moment later.
        case killTwoMembers = "kill -9 of two etcd members (quorum lost)"
        /// etcd: `SIGSTOP` of a member, `SIGCONT` a moment later.
        case pauseMember = "SIGSTOP/SIGCONT of an etcd member"
        /// etcd: a member cut off from the other two for 1 to 4.8 s while the workers attached to it still reach
        /// it: every member runs in a network namespace of its own, and the run's namespace drops the traffic
        /// between the cut-off member and the others (blackhole routing rules). Where no namespaces can be made,
        /// the member is paused instead, and the output says so.
        case partitionMember = "etcd member cut off from the others"

        /// The faults of a run on file domains.
        static let files: [Kind] = [.recreateDirectory, .renameOverFile, .hardLinkWrite, .retargetSymlink, .systemFile, .managedFile, .bindMount, .killWorker]
        /// The faults of a run on etcd domains.
        static let etcd: [Kind] = [.killMember, .killTwoMembers, .pauseMember, .partitionMember, .killWorker]
    }

    let time: Double
    let kind: Kind
    /// Which domain, worker slot, entry or state: drawn with the fault, its meaning depends on the kind.
    let choice: Int

    /// A fault at time 0 is applied before the workers start (and so before any of them watches).
    var beforeStart: Bool { time == 0 }
}

/// The nemesis's faults for a run of `duration` seconds with `processes` workers, from `seed`.
func nemesisSchedule(seed: UInt64, duration: Double, processes: Int, etcd: Bool = false) -> [Fault] {
    var generator = SeededGenerator(seed: seed ^ 0x5EED_0F_FA17)
    var faults: [Fault] = []
    var time = 0.3
    let kinds = etcd ? Fault.Kind.etcd : Fault.Kind.files
    // On file domains, one run in two starts with a bind mount in place, made before any worker watches.
    if !etcd, generator.next() % 2 == 0 {
        faults.append(Fault(time: 0, kind: .bindMount, choice: Int(generator.next() % 1000)))
    }
    while true {
        // etcd faults last up to seconds each (an outage, then a restart): they are spaced further apart.
        time += etcd ? 1 + Double(generator.next() % 2_000) / 1000 : 0.1 + Double(generator.next() % 900) / 1000
        // The last second is quiet, so that the last writes are not all of unknown outcome.
        guard time < duration - 1 else { break }
        faults.append(Fault(time: time, kind: kinds[Int(generator.next() % UInt64(kinds.count))], choice: Int(generator.next() % 1000)))
    }
    return faults
}

/// FNV-1a over the plan: the faults and the first operations of the first workers. The same seed, duration
/// and process count give the same digest.
func planDigest(seed: UInt64, faults: [Fault], processes: Int) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    func mix(_ text: String) {
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
    }
    for fault in faults { mix("\(fault.time) \(fault.kind.rawValue) \(fault.choice)\n") }
    for worker in 0..<processes {
        var generator = SeededGenerator(seed: SeededGenerator.workerSeed(seed, worker: worker))
        for _ in 0..<1_000 { mix("\(worker) \(CheckStep.next(&generator))\n") }
    }
    return String(hash, radix: 16)
}

/// Nanoseconds of CLOCK_MONOTONIC: one clock for every process of the machine.
func monotonicNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
