extension EtcdDomainStorage {
    /// Where reads of an ``EtcdDomainStorage`` come from.
    public enum ReadMode: Sendable, Hashable {
        /// Every read asks the cluster (the default): it sees every write that completed before it began, on
        /// any machine. One round trip, which transfers nothing while the domain is unchanged.
        case linearizable
        /// Reads are served from a copy the domain's own etcd watch keeps up to date, with no round trip: this
        /// process's writes are seen at once, other machines' as soon as the watch delivers them, and a read
        /// never returns an older state than one returned before. While the watch is down (no member
        /// reachable), reads ask the cluster as in ``linearizable``. For hot paths that can accept that delay.
        case watched
    }
}
