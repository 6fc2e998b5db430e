import Foundation
import PrefsPropertyList
import PrefsStorage

extension EtcdDomainStorage {
    /// One compare-and-swap sent whose outcome was not seen: it may still be applied, but only as the first
    /// change after `baseRevision`.
    private struct Unseen {
        var writeID: [UInt8]
        var baseRevision: Int64
        var contents: [String: PropertyListValue]
    }

    /// Reads the domain, lets `transform` change its contents, and writes the result with a transaction that
    /// succeeds only if the key is still at the revision read; on a conflict it reads again and retries (with a
    /// growing, randomised pause), within ``timeout``.
    ///
    /// Exactly once: every write also stores a unique identifier under a companion key in the same transaction.
    /// When a request's outcome is unknown (the member died or the connection broke after it was sent), the
    /// storage looks at the first change after the revision that write compared with, the only change it could
    /// have been, before trying again.
    ///
    /// Nothing is written when `transform` throws or leaves the contents as they were. With
    /// ``/RVS_PersistentPrefs/RepairPolicy/moveUnreadableAside``, an unreadable value is first copied to the key
    /// `<key>.unreadable-<seconds>` in the same transaction.
    ///
    /// `transform` runs once per attempt: again after a conflict, so it may run more than once, while the
    /// change is applied exactly once.
    /// - Returns: The snapshot after the change.
    /// - Throws: ``/RVS_PersistentPrefs/PrefsError/domainTooLarge(path:size:limit:)`` when the request would exceed ``requestLimit``;
    ///   ``/RVS_PersistentPrefs/PrefsError/storageUnreachable(location:reason:)`` when no quorum answered within ``timeout``; the
    ///   read errors of ``snapshot()`` (unless `policy` repairs them); what `transform` throws. The domain is
    ///   then unchanged. ``/RVS_PersistentPrefs/PrefsError/outcomeUnknown(location:reason:)`` when a request reached a member and
    ///   the quorum went before whether it was applied could be learnt: the change was then applied once or
    ///   not at all.
    @discardableResult
    public func modify(
        repairing policy: RepairPolicy,
        _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> DomainSnapshot {
        let deadline = Deadline.after(timeout)
        var unseen: [Unseen] = []
        var conflicts = 0
        // Every failed attempt of this call, for the message when it gives up.
        var tried = EtcdCallFailure(attempts: [], stoppedOnUnknownOutcome: false)
        // A cached state not confirmed during this call may be stale: a write computed from it is checked by
        // the compare anyway, but "nothing to change" must be decided on a fresh read.
        var current: Cached
        if let cached = state.withLock({ $0.cached }) { current = cached } else { current = try refresh(by: deadline) }
        var confirmed = false
        while true {
            var contents: [String: PropertyListValue] = [:]
            var unreadable: [UInt8]?
            var exists = false
            switch current.result {
            case .success(let snapshot):
                contents = snapshot.contents
                exists = snapshot.exists
            case .failure(let error):
                guard case .domainUnreadable = error, policy == .moveUnreadableAside else {
                    if !confirmed { current = try refresh(by: deadline); confirmed = true; continue }
                    throw error
                }
                unreadable = try currentBytes(by: deadline)
                exists = true
            }
            let before = contents
            try transform(&contents)
            let unchanged = unreadable == nil && (exists ? PropertyListValue.dictionary(contents, isIdenticalTo: before) : contents.isEmpty)
            if unchanged {
                if confirmed, case .success(let snapshot) = current.result { return snapshot }
                current = try refresh(by: deadline)
                confirmed = true
                continue
            }
            let bytes: [UInt8]
            do throws(PrefsError) {
                bytes = try DomainLimits.encoded(contents, location: location, limit: valueLimit)
            } catch {
                // Told as the cluster's limit on the whole request, which is what the user can change.
                guard case .domainTooLarge(let path, let size, _) = error else { throw error }
                throw .domainTooLarge(path: path, size: size + requestLimit - valueLimit, limit: requestLimit)
            }
            let writeID = Array(UUID().uuidString.utf8)
            var puts: [Any] = [put(keyBytes, bytes), put(writerKey, writeID)]
            if let unreadable {
                puts.append(put(Array((key + ".unreadable-\(Int(Date().timeIntervalSince1970))").utf8), unreadable))
            }
            let body: EtcdJSON.Object = [
                "compare": [["target": "MOD", "key": EtcdJSON.base64(keyBytes), "mod_revision": String(current.modRevision)]],
                "success": puts,
                "failure": [["request_range": ["key": EtcdJSON.base64(keyBytes)]]],
            ]
            do throws(EtcdCallFailure) {
                let sent = ContinuousClock.now
                let response = try client.call("/v3/kv/txn", body, by: deadline, timeout: timeout, idempotent: false).response
                let revision = EtcdJSON.revision(of: response)
                if (response["succeeded"] as? Bool) == true {
                    let written = DomainSnapshot(contents: contents)
                    remember(Cached(modRevision: revision, seenAt: revision, result: .success(written)), confirmedSince: sent)
                    return written
                }
                let range = ((response["responses"] as? [Any])?.first as? EtcdJSON.Object)?["response_range"] as? EtcdJSON.Object
                current = remember(decode(EtcdKeyValue.all(in: range).first { $0.key == keyBytes }, seenAt: revision), confirmedSince: sent)
                confirmed = true
                conflicts += 1
            } catch {
                // No attempt at all: pauses after conflicts used the time up before this try, and nothing was sent.
                if error.attempts.isEmpty, tried.attempts.isEmpty, unseen.isEmpty, conflicts > 0 { throw gaveUp(after: conflicts) }
                tried.attempts += error.attempts
                guard error.stoppedOnUnknownOutcome else { throw unreachable(tried, doing: "write", unknownOutcome: !unseen.isEmpty) }
                unseen.append(Unseen(writeID: writeID, baseRevision: current.modRevision, contents: contents))
                do throws(EtcdCallFailure) {
                    current = try fetch(by: deadline)
                } catch {
                    tried.attempts += error.attempts
                    throw unreachable(tried, doing: "write", unknownOutcome: true)
                }
                confirmed = true
            }
            // A change after a revision an unseen write compared with settles that write: it was the change, or
            // it can never be applied.
            if let landed = try settle(&unseen, now: current, by: deadline) {
                return landed
            }
            if deadline.hasPassed {
                if !tried.attempts.isEmpty { throw unreachable(tried, doing: "write", unknownOutcome: !unseen.isEmpty) }
                throw gaveUp(after: conflicts)
            }
            if conflicts > 0 { pauseAfterConflict(conflicts, before: deadline) }
        }
    }

    /// The error of a write whose every attempt lost to another writer's until its time was up.
    private func gaveUp(after conflicts: Int) -> PrefsError {
        .storageUnreachable(location: location, reason: "the write gave up after \(conflicts) conflicting writes by others within \(timeout); nothing was changed")
    }

    /// Looks, for each unseen write whose base revision the key has moved past, at the first change after it.
    /// - Returns: The snapshot written by the unseen write that was applied, if one was.
    private func settle(_ unseen: inout [Unseen], now current: Cached, by deadline: Deadline) throws(PrefsError) -> DomainSnapshot? {
        var stillOpen: [Unseen] = []
        for write in unseen {
            guard current.modRevision != write.baseRevision else { stillOpen.append(write); continue }
            let events: [EtcdWatchStream.Event]?
            do throws(EtcdCallFailure) {
                events = try client.firstChange(of: keyBytes, rangeEnd: keyBytes + [1], after: write.baseRevision,
                                                by: deadline, timeout: timeout)
            } catch {
                throw unreachable(error, doing: "write", unknownOutcome: true)
            }
            guard let events else {
                throw PrefsError.outcomeUnknown(location: location, reason: "the write reached a member, but the cluster's history after revision \(write.baseRevision), which would tell whether it was applied, was compacted")
            }
            if events.contains(where: { $0.key == writerKey && $0.value == write.writeID }) {
                // Later changes by others are read by the next snapshot; this one is what the write produced.
                unseen = []
                return DomainSnapshot(contents: write.contents)
            }
        }
        unseen = stillOpen
        return nil
    }

    /// The raw bytes of the current value (to keep an unreadable one aside).
    private func currentBytes(by deadline: Deadline) throws(PrefsError) -> [UInt8] {
        do throws(EtcdCallFailure) {
            let response = try client.call("/v3/kv/range", ["key": EtcdJSON.base64(keyBytes)], by: deadline, timeout: timeout).response
            return EtcdKeyValue.all(in: response).first?.value ?? []
        } catch {
            throw unreachable(error, doing: "read")
        }
    }

    private func put(_ key: [UInt8], _ value: [UInt8]) -> EtcdJSON.Object {
        ["request_put": ["key": EtcdJSON.base64(key), "value": EtcdJSON.base64(value)]]
    }

    /// A random pause that grows with the number of conflicts, so that writers racing for one key spread out.
    private func pauseAfterConflict(_ conflicts: Int, before deadline: Deadline) {
        let ceiling = min(1 << min(conflicts, 6), 50)
        let pause = min(Duration.microseconds(Int.random(in: 0...(ceiling * 1000))), deadline.remaining)
        Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) * 1e-18 + Double(pause.components.seconds))
    }
}
