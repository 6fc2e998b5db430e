extension EtcdDomainStorage {
    /// Where reads of an ``EtcdDomainStorage`` come from.
    public enum ReadMode: Sendable, Hashable {
        /// Every read asks the cluster (the default): it sees every write that completed before it began, on
        /// any machine. One round trip, which transfers nothing while the domain is unchanged.
        case linearizable
        /// Reads are served from a copy the domain's own etcd watch keeps up to date, with no round trip, for
        /// hot paths that can accept a bounded delay: this process's writes are seen at once, other machines'
        /// as soon as the watch delivers them, and a read never returns an older state than one returned
        /// before.
        ///
        /// **Staleness bound:** a read returns a state that was the domain's current one less than
        /// ``EtcdDomainStorage/watchedReadBound`` (1 second) before the read began. The copy is served only
        /// while the cluster confirmed it that recently (a linearizable read or a write of this object; the
        /// watch keeps it current in between, but cannot vouch for itself: a member cut off from the others,
        /// or stopped, holds its stream open and silent). Past the bound, and while the watch is down, the
        /// read asks the cluster as in ``linearizable`` (one round trip, which transfers nothing while the
        /// domain is unchanged, and confirms the copy for the next second), and fails with
        /// ``/RVS_PersistentPrefs/PrefsError/storageUnreachable(location:reason:)`` when no quorum answers. So a process reading
        /// often pays about one round trip a second.
        case watched
    }
}
