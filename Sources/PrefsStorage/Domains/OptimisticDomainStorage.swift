/// A backend whose ``DomainStorage/modify(repairing:_:)`` is optimistic: instead of locking the domain, it reads,
/// runs the transform, and writes only if nobody changed the domain meanwhile, retrying on conflict (an etcd
/// domain, `PrefsEtcd`'s `EtcdDomainStorage`, is one).
///
/// Conforming says two things (SPEC §10, "Optimistic backends say so"):
/// - The transform may run more than once (once per attempt), while the change is applied exactly once; keep
///   transforms free of side effects.
/// - `modify` holds no lock that ``DomainStorage/snapshot()`` waits for while the transform runs, and may spend
///   a long time waiting for a network. An `RVS_PersistentPrefs` instance therefore does not hold its operation
///   lock while such a domain's `modify` runs: a read of the instance on another thread goes on meanwhile,
///   within its own timeout, instead of waiting for the write's round trips and retries. (Writes of one instance
///   still follow one another: a second waits for the first to be told.)
///
/// A backend that locks the domain for the transform (a domain file, ``InMemoryDomainStorage``) does not
/// conform: its readers wait for the transform anyway, and the instance keeps its lock across such a `modify`.
public protocol OptimisticDomainStorage: DomainStorage {}
