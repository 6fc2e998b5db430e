import PrefsPropertyList
import PrefsStorage
import Synchronization

/// Which values a change notification carries, and when notifications are sent; the meanings of
/// Foundation's `NSKeyValueObservingOptions`.
public struct PrefsObservingOptions: OptionSet, Sendable {
    /// The value this option set encodes.
    public let rawValue: UInt
    /// Makes an option set from its raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The change carries the value after the write in ``PrefsObservedChange/newValue``.
    public static let new = PrefsObservingOptions(rawValue: 1 << 0)
    /// The change carries the value before the write in ``PrefsObservedChange/oldValue``.
    public static let old = PrefsObservingOptions(rawValue: 1 << 1)
    /// A notification is sent at once, when observation begins (with the current value if `.new`).
    public static let initial = PrefsObservingOptions(rawValue: 1 << 2)
    /// A notification is also sent before each write, once it has passed validation, with
    /// ``PrefsObservedChange/isPrior`` set (and the old value if `.old`). A rejected write sends none;
    /// a write that passed validation but then fails in storage (a failed disk write, an unavailable
    /// domain) may already have sent its prior notification, and sends no after-notification.
    public static let prior = PrefsObservingOptions(rawValue: 1 << 3)
}

/// One notification: the values of the observed key path before and after a write, as asked for.
public struct PrefsObservedChange<Value> {
    /// What kind of change: always ``Kind/setting`` for preferences.
    public enum Kind: Sendable {
        /// The observed value was set.
        case setting
    }

    /// Always ``Kind/setting``.
    public let kind: Kind
    /// The value after the write, when `.new` was asked for; `nil` in a prior notification.
    public let newValue: Value?
    /// The value before the write, when `.old` was asked for; `nil` in an `.initial` notification.
    public let oldValue: Value?
    /// `true` in the notification sent before a write (option `.prior`).
    public let isPrior: Bool
}

/// A running observation. Keep it for as long as you want notifications: releasing it, or calling
/// ``invalidate()``, stops them. It does not keep the observed instance alive.
public final class PrefsObservation: Sendable {
    /// Weak, so that a token outliving its instance keeps nothing alive.
    private struct Link {
        weak var list: ObserverList?
    }

    private let link: PrefsMutex<Link>
    private let id: Int

    init(list: ObserverList, id: Int) {
        link = PrefsMutex(Link(list: list))
        self.id = id
    }

    /// Stops the observation: once this returns, no notification of this observer starts on this
    /// thread, nor for any write that begins afterwards (a notification already being delivered on
    /// another thread may still finish). Safe to call more than once, from several threads at once,
    /// from inside a handler, and after the instance is gone.
    public func invalidate() {
        let list = link.withLock { link -> ObserverList? in
            defer { link.list = nil }
            return link.list
        }
        list?.remove(id)
    }

    deinit { invalidate() }
}

/// Key-path observation of ``RVS_PersistentPrefs`` instances, with the typed `Self` of a subclass.
///
/// It exists only so that ``PrefsObserving/observe(_:options:isolation:changeHandler:)`` can give its handler
/// the subclass's own type (`Self`). ``RVS_PersistentPrefs`` conforms; do not conform other types,
/// which it gives nothing.
public protocol PrefsObserving: AnyObject {}

extension RVS_PersistentPrefs: PrefsObserving {}

extension PrefsObserving where Self: RVS_PersistentPrefs {
    /// Observes `keyPath` of this instance: `\.values`, or a typed property of a subclass such as
    /// `\.launchCount`.
    ///
    /// `changeHandler` runs after each successful write through this instance — subscript writes,
    /// assignments of ``RVS_PersistentPrefs/values``, removals, ``RVS_PersistentPrefs/clear()``,
    /// ``RVS_PersistentPrefs/deleteAll()``, initializer merges — in the order
    /// the observers were added, even when the write stored an equal value. It never runs for reads,
    /// rejected writes, ``RVS_PersistentPrefs/flush()``, or changes made by other instances or
    /// processes, unless ``RVS_PersistentPrefs/watchesExternalChanges`` is on (where those run is said
    /// below). (An initializer's merge happens
    /// before `observe` can be called from outside, so only an observer registered during initialization,
    /// for example from an overridden ``RVS_PersistentPrefs/userDefaults``, hears it.)
    ///
    /// Which writes it hears depends on the key path:
    /// - a key path that reads only `@Entry` properties (`\.appearance`, for `@Entry("appearance") var
    ///   appearance`) is told only when one of those entries' stored value changed: a write of another
    ///   entry, or of an equal value, tells it nothing;
    /// - any other key path (`\.values`, a computed property over the subscript) hears every such write,
    ///   even when its value did not change: the key path chooses what the change carries, not which
    ///   writes notify.
    ///
    /// Each notification carries, as asked, the key path's value over the collection before the change
    /// (`oldValue`) and over the collection the change produced (`newValue`): for a write through the
    /// instance, the collection read just before and just after it; for a change made elsewhere, what the
    /// previous notification carried as new and the collection found to differ.
    ///
    /// Where the handler runs depends on where `observe` is called from (SPEC §12):
    /// - **from the main actor, or another actor** (a `@MainActor` model, an `actor`'s method): the
    ///   handler runs isolated to that actor, for writes through the instance and changes made elsewhere
    ///   alike, so it may touch the actor's state. A write made on the main thread tells a main-actor
    ///   handler synchronously, before the write returns (after the calls for earlier changes, when some
    ///   still wait for the main actor: each observer hears its changes in order); a write made on another
    ///   thread, and every change made elsewhere, is told on the main actor soon after (the main thread must
    ///   run its loop: `await`,
    ///   `dispatchMain()` or `RunLoop.main.run()`). A handler of another actor is always told
    ///   asynchronously, on that actor. Each observer hears its notifications in order, one at a time.
    /// - **from a nonisolated context** (a plain function, a test, a background thread): the handler runs on
    ///   the thread that wrote, synchronously, and for changes made elsewhere on a delivery thread the
    ///   library shares between watching instances. Keep what it touches safe to reach from any thread.
    ///   Write such a handler `@Sendable`: the compiler then checks what it touches (it does not insist).
    ///   A program whose main loop is not Dispatch's (GTK's GLib loop) passes `isolation: nil` with a
    ///   `@Sendable` handler, which copies what it needs out of the change and hands it to the loop
    ///   (`g_main_context_invoke`); see "A main loop that is not Dispatch's" in the Observation article.
    ///
    /// A handler run on the writing thread runs while other threads' operations on the instance wait:
    /// keep it short, and do not wait in one for another thread that uses the instance. A handler told on
    /// its actor takes the instance's operation lock there, and reads `.old` and `.new` over the versions
    /// of the collection the change carried, whatever was written since.
    ///
    /// It may read and write the instance and add or invalidate any token. A write made inside a handler
    /// is told after the handler that made it returns, never by calling a handler again from inside
    /// it: the remaining observers of the change being delivered hear it first, then every observer
    /// hears the handler's write. A handler that writes what it observes therefore cannot overflow the
    /// stack, and each observer hears the changes in the order they were made. To write without telling
    /// this instance's observers at all, use ``RVS_PersistentPrefs/withoutNotifying(_:)``.
    ///
    /// - Parameters:
    ///   - keyPath: The key path whose value the notifications carry.
    ///   - options: The values to carry (`.new`, `.old`) and the extra notifications to send
    ///     (`.initial`, which runs the handler once before `observe` returns; `.prior`).
    ///   - isolation: The actor the handler is isolated to: by default the caller's (`#isolation`), `nil`
    ///     from a nonisolated context. Leave it out, unless the program's main thread runs a loop that is
    ///     not Dispatch's: then pass `nil`, with a `@Sendable` handler.
    ///   - changeHandler: Called with the instance and the change.
    /// - Returns: The token; observation stops when it is released or invalidated.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: PrefsObservingOptions = [],
        isolation: isolated (any Actor)? = #isolation,
        changeHandler: @escaping (Self, PrefsObservedChange<Value>) -> Void
    ) -> PrefsObservation {
        locked {
            let observer = KeyPathObserver(
                keyPath: keyPath, options: options, isolation: isolation.map(HandlerIsolation.init), handler: changeHandler
            )
            let token = observers.add(observer)
            if let seen = externalChanges.lastTold { observer.classify(self, over: seen) }
            if options.contains(.initial) {
                let current = options.contains(.new) ? KeyPathObserver.evaluate(keyPath, of: self) : nil
                asHandler {
                    changeHandler(self, PrefsObservedChange(kind: .setting, newValue: current, oldValue: nil, isPrior: false))
                }
            }
            return token
        }
    }
}

/// What a delivery needs of an observer, whatever the type of its instance and value. Called only while
/// the instance's operation lock is held.
protocol AnyPrefsObserver: AnyObject, Sendable {
    /// Whether it asked for `.prior` notifications.
    var wantsPrior: Bool { get }
    /// The actor its handler runs on; `nil` for a handler registered from a nonisolated context.
    var isolation: HandlerIsolation? { get }
    /// Whether it hears a write of `write` about to be made over `before`, when the write cannot yet say
    /// what it changes: whether to send it a `.prior` notification.
    func announces(_ write: CollectionWrite, to object: RVS_PersistentPrefs, over before: [String: PropertyListValue]) -> Bool
    /// Whether it hears `change` of `object`.
    func hears(_ change: ChangeEvent, by object: RVS_PersistentPrefs) -> Bool
    /// Sends the `.prior` notification of a change from `before` (`shared`: the version other instances share,
    /// when it is one).
    func sendPrior(to object: RVS_PersistentPrefs, before: [String: PropertyListValue], shared: DeliveredCollection?)
    /// Sends the notification of `change`.
    func send(_ change: ChangeEvent, to object: RVS_PersistentPrefs)
    /// Finds now, over `collection` (no storage is read), which entries it reads (see ``hears(_:by:)``), so that
    /// the first change made elsewhere does not: a watching instance's deliveries are what must be cheap.
    func classify(_ object: RVS_PersistentPrefs, over collection: DeliveredCollection)
}

/// One `observe` call's key path, options and handler.
///
/// Unchecked: the key path and the handler are not `Sendable`, and the observer is only stored and
/// dropped on any thread; it is read, called and classified (``entries(of:over:)``) only while the instance's
/// operation lock is held (during a delivery or a write's notification, when it is registered, when watching
/// begins), which the compiler cannot see.
final class KeyPathObserver<Object: RVS_PersistentPrefs, Value>: AnyPrefsObserver, @unchecked Sendable {
    let keyPath: KeyPath<Object, Value>
    let options: PrefsObservingOptions
    let handler: (Object, PrefsObservedChange<Value>) -> Void
    let isolation: HandlerIsolation?
    /// What ``entries(of:over:)`` found when it last looked, with the values those entries had in the collection it
    /// read the key path over: the same entries are read over any collection that holds the same values there.
    private var classification: (entries: Set<String>?, values: [String: PropertyListValue])?

    init(
        keyPath: KeyPath<Object, Value>, options: PrefsObservingOptions, isolation: HandlerIsolation?,
        handler: @escaping (Object, PrefsObservedChange<Value>) -> Void
    ) {
        self.keyPath = keyPath
        self.options = options
        self.isolation = isolation
        self.handler = handler
    }

    /// The typed entries the key path reads over `collection`, when it reads nothing else: it is then told only of
    /// changes from `collection` that change one of them (SPEC §9); `nil` for any other key path, told of every
    /// change (for good: `nil` is never looked at again).
    ///
    /// Found by reading the key path over a collection (which reads no storage: an observer registered while the
    /// instance resolves its suite must not make it resolve it again), and looked for again only over a collection
    /// whose values of those entries differ: a key path such as `muted ? 0 : volume` reads `volume` only while
    /// `muted` is false, so what it read while muted says nothing of a collection where it is not. (Found once and
    /// kept, it left such an observer deaf to every volume change after unmuting.) Looked for when watching begins or
    /// the observer is registered while watching (``classify(_:over:)``), else when a write's notification or a
    /// delivery needs it.
    private func entries(of object: RVS_PersistentPrefs, over collection: [String: PropertyListValue],
                         shared: DeliveredCollection? = nil) -> Set<String>? {
        if let classification {
            guard let entries = classification.entries else { return nil }
            if entries.allSatisfy({ PropertyListValue.same(collection[$0], classification.values[$0]) }) { return entries }
        }
        let object = object as! Object  // registered through `observe` on an instance of `Object`
        let (_, found) = object.reading(collection, shared: shared) { object.readingEntries { Self.evaluate(keyPath, of: object) } }
        var values: [String: PropertyListValue] = [:]
        for name in found ?? [] { values[name] = collection[name] }
        classification = (found, values)
        return found
    }

    /// Reads the key path without letting that read count as the instance's latest operation.
    static func evaluate(_ keyPath: KeyPath<Object, Value>, of object: Object) -> Value {
        let outcome = object.lastError
        defer { object.lastError = outcome }
        return object[keyPath: keyPath]
    }

    /// The key path's value over `collection`: what it was, or became, in one change.
    /// - Parameter shared: `collection` as the version other instances share, when it is one.
    private func value(of object: Object, over collection: [String: PropertyListValue], shared: DeliveredCollection? = nil) -> Value {
        object.reading(collection, shared: shared) { Self.evaluate(keyPath, of: object) }
    }

    var wantsPrior: Bool { options.contains(.prior) }

    func announces(_ write: CollectionWrite, to object: RVS_PersistentPrefs, over before: [String: PropertyListValue]) -> Bool {
        guard let entries = entries(of: object, over: before) else { return true }
        if let replacement = write.replacement {
            return entries.contains { !PropertyListValue.same(before[$0], replacement[$0]) }
        }
        // An entry whose new value the write knows before its lock (not a `modify` transform's) is announced only
        // if that value differs: an `@Entry` observer is told only of a change (SPEC §9), its `.prior` as well.
        return entries.intersection(write.namedEntries).contains { name in
            if let value = write.knownValues[name] { return !PropertyListValue.same(before[name], value) }
            if write.removing.contains(name) { return before[name] != nil }
            return true
        }
    }

    func hears(_ change: ChangeEvent, by object: RVS_PersistentPrefs) -> Bool {
        // The entries it reads over the collection before the change: if none of them changed, it reads the same
        // values over the one after, and its value is the same.
        guard let entries = entries(of: object, over: change.before, shared: change.sharedBefore) else { return true }
        return entries.contains { !PropertyListValue.same(change.before[$0], change.after[$0]) }
    }

    func sendPrior(to object: RVS_PersistentPrefs, before: [String: PropertyListValue], shared: DeliveredCollection?) {
        let object = object as! Object  // registered through `observe` on an instance of `Object`
        let old = options.contains(.old) ? value(of: object, over: before, shared: shared) : nil
        handler(object, PrefsObservedChange(kind: .setting, newValue: nil, oldValue: old, isPrior: true))
    }

    func classify(_ object: RVS_PersistentPrefs, over collection: DeliveredCollection) {
        _ = entries(of: object, over: collection.entries, shared: collection)
    }

    func send(_ change: ChangeEvent, to object: RVS_PersistentPrefs) {
        let object = object as! Object
        let old = options.contains(.old) ? value(of: object, over: change.before, shared: change.sharedBefore) : nil
        let new = options.contains(.new) ? value(of: object, over: change.after, shared: change.sharedAfter) : nil
        handler(object, PrefsObservedChange(kind: .setting, newValue: new, oldValue: old, isPrior: false))
    }
}
