import Foundation
import PrefsPropertyList
import PrefsStorage
import Synchronization

/// A defaults domain kept in an etcd v3 cluster (3.4 or later), shared by every process on every machine that
/// uses the same key: the persistent domain of a ``/RVS_PersistentPrefs/DefaultsSuite`` across machines.
///
/// ```swift
/// let domain = try EtcdDomainStorage(endpoints: [URL(string: "http://10.0.0.1:2379")!,
///                                                URL(string: "http://10.0.0.2:2379")!], name: "com.example.fleet")
/// let prefs = FleetSettings(key: "settings", suite: DefaultsSuite(persistentDomain: domain))
/// ```
///
/// The domain is one etcd key, `<prefix><name>` (`/RVS_PersistentPrefs/<name>` by default), whose value is the
/// same `bplist00` bytes a domain file holds. The storage speaks HTTP/1.1 to etcd's JSON gateway on the client
/// port, with `https` verified through the system's OpenSSL.
///
/// - **Reads** (``snapshot()``) are linearizable: each sees every write that completed before it began, on any
///   machine, in one round trip that transfers nothing while the domain is unchanged. ``ReadMode/watched``
///   serves them from the watch's copy instead.
/// - **Writes** (``modify(repairing:_:)``) are compare-and-swap transactions on the key's revision, retried on
///   conflict, so concurrent changes of different entries are all kept; exactly once even when a member dies
///   with the request in flight.
/// - **Changes made elsewhere** are told through an etcd watch (``watchChanges(_:)``), which resumes from the
///   last revision seen after a member fails.
/// - **Failures:** the endpoints are tried in turn; without a quorum an operation fails within ``timeout`` with
///   ``/RVS_PersistentPrefs/PrefsError/storageUnreachable(location:reason:)``, having changed nothing, or, for a write that reached
///   a member before the quorum went, ``/RVS_PersistentPrefs/PrefsError/outcomeUnknown(location:reason:)``: applied once or not at
///   all. The next operation after the quorum returns succeeds.
///
/// ## Topics
///
/// ### Creating a Domain
/// - ``init(endpoints:name:prefix:timeout:credentials:caFile:readMode:requestLimit:)``
/// - ``EtcdCredentials``
/// - ``ReadMode``
///
/// ### Inspecting a Domain
/// - ``name``
/// - ``key``
/// - ``endpoints``
/// - ``timeout``
/// - ``readMode``
/// - ``watchedReadBound``
/// - ``requestLimit``
/// - ``location``
///
/// ### Reading and Writing
/// - ``snapshot()``
/// - ``modify(repairing:_:)``
/// - ``watchChanges(_:)``
/// - ``watchChanges(handingOver:)``
/// - ``isKnownToExist``
/// - ``generation``
public final class EtcdDomainStorage: OptimisticDomainStorage {
    /// The domain's name, the last part of its key.
    public let name: String
    /// The etcd key holding the domain: the prefix followed by the name.
    public let key: String
    /// The client URLs of the cluster's members, tried in turn.
    public let endpoints: [URL]
    /// The most an operation may take, retries included, before it fails.
    public let timeout: Duration
    /// Where reads come from: the cluster on every read (``ReadMode/linearizable``, the default), or a copy
    /// the domain's etcd watch keeps, served while the cluster confirmed it less than ``watchedReadBound`` ago
    /// and asked of the cluster otherwise (``ReadMode/watched``).
    public let readMode: ReadMode
    /// How stale a read in ``ReadMode/watched`` mode may be: the watch's copy is served only while the
    /// cluster confirmed it (answered a linearizable read or a write of this object) less than this long ago.
    public static let watchedReadBound = Duration.seconds(1)
    /// The cluster's request limit in bytes (etcd's `--max-request-bytes`): a write whose request would be larger
    /// is refused as ``/RVS_PersistentPrefs/PrefsError/domainTooLarge(path:size:limit:)``.
    public let requestLimit: Int
    /// `etcd key <key> at <endpoints>`, for messages; it also identifies the domain for ``/RVS_PersistentPrefs/DefaultsSuite/shared(persistentDomain:globalDomain:)``.
    public let location: String

    let client: EtcdClient
    let keyBytes: [UInt8]
    /// The key written in the same transaction as every write of the domain, holding that write's unique
    /// identifier: how a writer tells afterwards whether a request whose outcome it could not see was applied.
    let writerKey: [UInt8]

    /// The last state read or written, and the parse of it.
    struct Cached {
        /// The key's `mod_revision` (0: the key does not exist).
        var modRevision: Int64
        /// The cluster revision at which this state was known to be current.
        var seenAt: Int64
        var result: Result<DomainSnapshot, PrefsError>
    }
    struct State {
        var cached: Cached?
        /// The watch behind ``ReadMode/watched``, and whether it is established.
        var readWatch: EtcdWatchStream?
        var readWatchLive = false
        /// When a request whose answer showed the cached state current was sent: a linearizable read, or a
        /// compare-and-swap that succeeded or failed. ``ReadMode/watched`` serves the copy only within
        /// ``watchedReadBound`` of it.
        var confirmedAt: ContinuousClock.Instant?
    }
    let state = PrefsMutex(State())

    /// `url` as an error may show it, quoted: as given, but without any user and password, which are never shown
    /// (and which the text says it left out).
    static func shown(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "'?'" }
        guard parts.user != nil || parts.password != nil else { return "'\(parts.string ?? "?")'" }
        (parts.user, parts.password) = (nil, nil)
        return "'\(parts.string ?? "?")' (its user and password not shown)"
    }

    /// A domain kept in the etcd cluster at `endpoints`. Nothing is sent until the first operation.
    ///
    /// - Parameters:
    ///   - endpoints: Client URLs of the cluster's members (`http://host:2379` or `https://…`), tried in turn.
    ///     They must not carry a user or password: give those as `credentials`.
    ///   - name: The domain's name (for example an app's reverse-DNS name): not empty, with no `/` or NUL.
    ///   - prefix: What the etcd key starts with; the key is `prefix + name`.
    ///   - timeout: The most an operation may take, retries and failovers included.
    ///   - credentials: An etcd user, when the cluster has authentication enabled.
    ///   - caFile: A PEM file of the CA certificates that `https` endpoints are verified against, instead of the
    ///     system's trust store.
    ///   - readMode: ``ReadMode/linearizable`` (every read asks the cluster) or ``ReadMode/watched``.
    ///   - requestLimit: The cluster's `--max-request-bytes` (etcd's default is 1.5 MiB).
    /// - Throws: ``/RVS_PersistentPrefs/PrefsError/userDefaultsUnavailable(reason:)`` when an endpoint, the name or the CA file cannot
    ///   be used.
    public init(endpoints: [URL], name: String, prefix: String = "/RVS_PersistentPrefs/",
                timeout: Duration = .seconds(5), credentials: EtcdCredentials? = nil, caFile: String? = nil,
                readMode: ReadMode = .linearizable, requestLimit: Int = 1_572_864) throws(PrefsError) {
        guard !endpoints.isEmpty else { throw .userDefaultsUnavailable(reason: "no etcd endpoint given for the domain \(name)") }
        var parsed: [HTTPEndpoint] = []
        for url in endpoints {
            guard let endpoint = HTTPEndpoint(url) else {
                throw .userDefaultsUnavailable(reason: "the etcd endpoint \(Self.shown(url)) is not an http or https URL with a host and no user or password")
            }
            parsed.append(endpoint)
        }
        guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0) else {
            throw .userDefaultsUnavailable(reason: "the etcd domain name '\(name)' is empty or holds '/' or NUL")
        }
        guard timeout > .zero else { throw .userDefaultsUnavailable(reason: "the etcd timeout must be positive") }
        self.name = name
        key = prefix + name
        self.endpoints = endpoints
        self.timeout = timeout
        self.readMode = readMode
        self.requestLimit = requestLimit
        location = "etcd key \(prefix + name) at \(parsed.map(\.description).joined(separator: ", "))"
        keyBytes = Array(key.utf8)
        writerKey = keyBytes + [0] + Array("last-write".utf8)
        do throws(HTTPError) {
            client = try EtcdClient(endpoints: parsed, caFile: caFile, credentials: credentials)
        } catch {
            throw .userDefaultsUnavailable(reason: "etcd domain \(key): \(error)")
        }
    }

    deinit { state.withLock { $0.readWatch?.cancel() } }

    /// Whether the domain existed when last read or written by this object.
    public var isKnownToExist: Bool {
        state.withLock { state in
            guard case .success(let snapshot)? = state.cached?.result else { return false }
            return snapshot.exists
        }
    }

    /// The most the domain's `bplist00` bytes may take for a write to fit in ``requestLimit``: the request also
    /// holds the key four times (compare, put, range, watch check), the writer key and its identifier, and
    /// protobuf framing.
    var valueLimit: Int { requestLimit - 4 * keyBytes.count - writerKey.count - 256 }

    // MARK: Reading

    /// Reads the domain: in ``ReadMode/linearizable`` mode, one transaction that compares the key's revision
    /// with the one last seen and returns the value only when it changed; the parse is cached by revision, so an
    /// unchanged domain returns the same snapshot object.
    /// - Throws: ``/RVS_PersistentPrefs/PrefsError/storageUnreachable(location:reason:)`` when no member answered with a quorum's
    ///   agreement within ``timeout``; ``/RVS_PersistentPrefs/PrefsError/domainUnreadable(path:reason:)`` when the value is not a
    ///   property list whose root is a dictionary.
    public func snapshot() throws(PrefsError) -> DomainSnapshot {
        if readMode == .watched {
            let now = ContinuousClock.now
            let served = state.withLock { state -> Result<DomainSnapshot, PrefsError>? in
                // The watch alone cannot vouch for its copy: a member cut off from the others, or stopped, keeps
                // the stream open and silent. Only an answer of the cluster within the bound can.
                guard state.readWatch != nil, state.readWatchLive, let confirmed = state.confirmedAt,
                      now - confirmed < Self.watchedReadBound else { return nil }
                return state.cached?.result
            }
            if let served { return try served.get() }
        }
        let cached = try refresh(by: .after(timeout))
        if readMode == .watched { startReadWatch(from: cached.seenAt + 1) }
        return try cached.result.get()
    }

    /// In ``ReadMode/watched`` mode, the revision of the key that the watch's copy holds, while a read would return
    /// that copy (the watch is live, and the cluster confirmed it within ``watchedReadBound``): a suite then keeps
    /// its reads as it does a file domain's, and they are as fresh as a watched read. `nil` in
    /// ``ReadMode/linearizable`` mode (every read asks the cluster), and while the domain is missing.
    public var generation: UInt64? {
        guard readMode == .watched else { return nil }
        let now = ContinuousClock.now
        // Invariant F6: a source reports a generation only for what it would return again (snapshot() serves the
        // watch's copy under the same conditions).
        return state.withLock { state -> UInt64? in
            guard state.readWatch != nil, state.readWatchLive, let confirmed = state.confirmedAt,
                  now - confirmed < Self.watchedReadBound, let cached = state.cached, cached.modRevision > 0 else { return nil }
            return UInt64(cached.modRevision)
        }
    }

    /// Asks the cluster for the current state, transferring the value only when it changed since the cached one.
    @discardableResult
    func refresh(by deadline: Deadline) throws(PrefsError) -> Cached {
        do throws(EtcdCallFailure) {
            return try fetch(by: deadline)
        } catch {
            throw unreachable(error, doing: "read")
        }
    }

    /// ``refresh(by:)``, failing with what each endpoint tried met.
    func fetch(by deadline: Deadline) throws(EtcdCallFailure) -> Cached {
        let known = state.withLock { $0.cached }
        let range: EtcdJSON.Object = ["request_range": ["key": EtcdJSON.base64(keyBytes)]]
        let body: EtcdJSON.Object
        if let known {
            body = ["compare": [["target": "MOD", "key": EtcdJSON.base64(keyBytes), "mod_revision": String(known.modRevision)]],
                    "success": [], "failure": [range]]
        } else {
            body = ["compare": [], "success": [range]]
        }
        let sent = ContinuousClock.now
        let response = try client.call("/v3/kv/txn", body, by: deadline, timeout: timeout).response
        let revision = EtcdJSON.revision(of: response)
        if let known, (response["succeeded"] as? Bool) == true {
            return remember(Cached(modRevision: known.modRevision, seenAt: revision, result: known.result), confirmedSince: sent)
        }
        let rangeResponse = ((response["responses"] as? [Any])?.first as? EtcdJSON.Object)?["response_range"] as? EtcdJSON.Object
        return remember(decode(EtcdKeyValue.all(in: rangeResponse).first { $0.key == keyBytes }, seenAt: revision), confirmedSince: sent)
    }

    /// The cached state for the key-value `kv` (absent: the key does not exist) known at `seenAt`.
    func decode(_ kv: EtcdKeyValue?, seenAt: Int64) -> Cached {
        guard let kv else { return Cached(modRevision: 0, seenAt: seenAt, result: .success(.missing)) }
        let result: Result<DomainSnapshot, PrefsError>
        do {
            let root = try kv.value.withUnsafeBytes { try PropertyListText.decodeFile($0) }
            if case .dictionary(let contents) = root {
                result = .success(DomainSnapshot(contents: contents))
            } else {
                result = .failure(.domainUnreadable(path: location, reason: "the root is not a dictionary"))
            }
        } catch {
            result = .failure(.domainUnreadable(path: location, reason: "\(error)"))
        }
        return Cached(modRevision: kv.modRevision, seenAt: seenAt, result: result)
    }

    /// Keeps `candidate` unless the cache already holds a later state (reads that finish out of order never
    /// move it backwards), and returns what the cache holds.
    /// - Parameter sent: When the linearizable request that returned `candidate` was sent: the state the
    ///   cache then holds was current at that instant or later (see ``ReadMode/watched``).
    @discardableResult
    func remember(_ candidate: Cached, confirmedSince sent: ContinuousClock.Instant? = nil) -> Cached {
        state.withLock { state in
            if let sent, state.confirmedAt.map({ $0 < sent }) ?? true { state.confirmedAt = sent }
            if let current = state.cached {
                // Invariant F9: the snapshot is the generation (same revision, same object).
                if current.modRevision == candidate.modRevision {
                    // Same state: keep the snapshot object, so callers' caches stay valid.
                    state.cached?.seenAt = max(current.seenAt, candidate.seenAt)
                    return state.cached!
                }
                if !Self.isLater(candidate, than: current) { return current }
            }
            state.cached = candidate
            return candidate
        }
    }

    /// Whether state `candidate` came after state `current` (their `modRevision`s differ). A key that exists
    /// was made at its `modRevision`; a missing one is known only to be missing at `seenAt`, so a deletion is
    /// later than a state written before the revision it was seen at, and a write later than an absence seen
    /// before it was made.
    static func isLater(_ candidate: Cached, than current: Cached) -> Bool {
        switch (candidate.modRevision == 0, current.modRevision == 0) {
        case (false, false): candidate.modRevision > current.modRevision
        case (true, false): candidate.seenAt > current.modRevision
        case (false, true): candidate.modRevision > current.seenAt
        case (true, true): false
        }
    }

    /// Applies what the watch saw of the domain's key.
    func absorb(_ events: [EtcdWatchStream.Event]) {
        guard let last = events.last(where: { $0.key == keyBytes }) else { return }
        let known = state.withLock { $0.cached?.modRevision ?? -1 }
        guard last.modRevision > known else { return }
        let kv = last.value.map { EtcdKeyValue(key: keyBytes, value: $0, modRevision: last.modRevision) }
        remember(kv.map { decode($0, seenAt: last.modRevision) } ?? Cached(modRevision: 0, seenAt: last.modRevision, result: .success(.missing)))
    }

    // MARK: Errors

    /// The error of an operation that could not reach a quorum: the endpoints, and what each attempt met.
    /// - Parameter unknownOutcome: Whether a write of this operation reached a member and may have been
    ///   applied: then ``/RVS_PersistentPrefs/PrefsError/outcomeUnknown(location:reason:)``, never
    ///   ``/RVS_PersistentPrefs/PrefsError/storageUnreachable(location:reason:)``, which says that nothing was changed.
    func unreachable(_ failure: EtcdCallFailure, doing operation: String, unknownOutcome: Bool = false) -> PrefsError {
        let tried = "the \(operation) failed within \(timeout) after trying \(client.endpoints.map(\.description).joined(separator: ", ")): \(failure.summary)"
        // Before the size: an earlier request of the same write may have been applied, whatever refused a later one.
        if unknownOutcome {
            return .outcomeUnknown(location: location, reason: "\(tried); the write reached a member, but whether it was applied could not be learnt")
        }
        if failure.attempts.contains(where: \.isTooLarge) {
            return .domainTooLarge(path: location, size: requestLimit + 1, limit: requestLimit)
        }
        // The cluster answered, and refused: the credentials or the user's rights are to be corrected, and no
        // member was out of reach.
        if let refusal = failure.attempts.first(where: \.isRefusedAccess) {
            return .userDefaultsUnavailable(reason: "etcd refused access to \(location): \(refusal); nothing was changed")
        }
        return .storageUnreachable(
            location: location,
            reason: "\(tried); nothing was changed")
    }
}
