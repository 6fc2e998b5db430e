import EtcdTestSupport
import Foundation
@testable import PrefsEtcd
import PrefsPropertyList
@testable import PrefsStorage
import Testing
import TestSupport

/// etcd's generation (SPEC §10): the revision its watch applied, in watched read mode only.
@Suite("etcd's generation is the revision its watch applied", .enabled(if: EtcdCluster.isAvailable, etcdMissing))
struct EtcdGenerationTests {
    @Test("In watched read mode a suite keeps its reads while the watch's copy stands and reads another member's write once the watch applied it; in linearizable mode it keeps none")
    func watchedModeKeepsReads() throws {
        let pair = try WatchedReadPair("generation")
        let (cluster, name) = (pair.cluster, pair.name)
        let (reader, other) = (pair.reader, pair.writer)
        #expect(reader.generation == nil, "a domain never read reported a generation")
        try reader.modify(repairing: .failIfUnreadable) { $0["c"] = .dictionary(["v": .integer(1)]) }
        let suite = DefaultsSuite(persistentDomain: reader, globalDomain: nil, argumentDomain: [:])
        // The watch's copy vouches once the watch is live and the cluster confirmed the copy within the bound: a
        // read past the bound asks the cluster again, which confirms it. (On a machine too slow to read within the
        // bound, nothing is kept, which is also right; so the reads go on until a generation is reported.)
        var before: UInt64?
        let deadline = ContinuousClock.now + .seconds(30)
        while before == nil && ContinuousClock.now < deadline {
            _ = try suite.find("c")
            before = reader.generation
        }
        #expect(before != nil, "a watched domain never reported a generation")
        // Reported: a suite keeps its read (a fourth read after the generation stood), unless the bound passed.
        for _ in 0..<2 { _ = try suite.find("c") }
        let kept = try suite.find("c")
        #expect(kept?.value == .dictionary(["v": .integer(1)]))
        if let now = reader.generation, now == before {
            #expect(kept?.keptAt != nil, "a suite over a watched etcd domain that reports a generation kept no read")
        }
        let counter = ChangeCounter()
        let watch = try #require(reader.watchChanges(counter.handler))
        try other.modify(repairing: .failIfUnreadable) { $0["c"] = .dictionary(["v": .integer(2)]) }
        while try suite.find("c")?.value != .dictionary(["v": .integer(2)]) { #expect(counter.waitForCall()) }
        if let before, let after = reader.generation { #expect(after != before, "the generation stood still over another member's write") }
        watch.cancel()

        let linearizable = try EtcdDomainStorage(endpoints: cluster.endpoints(attachedTo: 2), name: name)
        let asking = DefaultsSuite(persistentDomain: linearizable, globalDomain: nil, argumentDomain: [:])
        for _ in 0..<3 { _ = try asking.find("c") }
        #expect(linearizable.generation == nil)
        #expect(try asking.find("c")?.keptAt == nil, "a suite kept a read of a linearizable etcd domain")
    }
}
