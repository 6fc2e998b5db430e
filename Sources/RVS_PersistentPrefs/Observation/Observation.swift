import Foundation

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
public final class PrefsObservation: @unchecked Sendable {
    private let lock = Lock()
    private weak var list: ObserverList?  // guarded by `lock`
    private let id: Int

    init(list: ObserverList, id: Int) {
        self.list = list
        self.id = id
    }

    /// Stops the observation: once this returns, no notification of this observer starts on this
    /// thread, nor for any write that begins afterwards (a notification already being delivered on
    /// another thread may still finish). Safe to call more than once, from several threads at once,
    /// from inside a handler, and after the instance is gone.
    public func invalidate() {
        let list = lock.withLock { () -> ObserverList? in
            defer { self.list = nil }
            return self.list
        }
        list?.remove(id)
    }

    deinit { list?.remove(id) }
}

/// Key-path observation of ``RVS_PersistentPrefs`` instances, with the typed `Self` of a subclass.
///
/// It exists only so that ``PrefsObserving/observe(_:options:changeHandler:)`` can give its handler
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
    /// ``RVS_PersistentPrefs/deleteAll()``, initializer merges — on the thread that wrote, in the order
    /// the observers were added, even when the write stored an equal value. It never runs for reads,
    /// rejected writes, ``RVS_PersistentPrefs/flush()``, or changes made by other instances or
    /// processes, unless ``RVS_PersistentPrefs/watchesExternalChanges`` is on (then those run on the
    /// instance's external-change queue). (An initializer's merge happens before `observe` can be called from outside, so only
    /// an observer registered during initialization, for example from an overridden
    /// ``RVS_PersistentPrefs/userDefaults``, hears it.) Every observer hears every such write, whatever
    /// key path it watches, even when that key path's value did not change: the key path chooses what
    /// the change carries, not which writes notify.
    ///
    /// A write's handlers run synchronously on the writing thread, while other threads' operations on the
    /// instance wait: keep them short, and do not wait in one for another thread that uses the
    /// instance. The handler is not `@Sendable`; that is sound while the instance stays in one
    /// isolation domain.
    ///
    /// It may read and write the instance (a nested write notifies every observer again, before the
    /// remaining observers of the outer write) and add or invalidate any token. `newValue` is read when
    /// each notification is delivered, so after a nested write, later observers are given the value as
    /// it is after that nested write: the last notification an observer gets always carries the
    /// current value.
    ///
    /// - Parameters:
    ///   - keyPath: The key path whose value the notifications carry.
    ///   - options: The values to carry (`.new`, `.old`) and the extra notifications to send
    ///     (`.initial`, which runs the handler once before `observe` returns; `.prior`).
    ///   - changeHandler: Called with the instance and the change.
    /// - Returns: The token; observation stops when it is released or invalidated.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: PrefsObservingOptions = [],
        changeHandler: @escaping (Self, PrefsObservedChange<Value>) -> Void
    ) -> PrefsObservation {
        let observer = KeyPathObserver(keyPath: keyPath, options: options, handler: changeHandler)
        let token = observers.add(observer)
        if options.contains(.initial) {
            let current = options.contains(.new) ? observer.evaluate(self) : nil
            changeHandler(self, PrefsObservedChange(kind: .setting, newValue: current, oldValue: nil, isPrior: false))
        }
        return token
    }
}

/// What the list needs of an observer, whatever the type of its instance and value.
protocol AnyPrefsObserver: AnyObject {
    /// Reads what the notifications of one write need before the write, and returns the deliveries.
    func begin(_ object: RVS_PersistentPrefs, isActive: @escaping () -> Bool) -> PendingDelivery
}

/// The two halves of one observer's notifications of one write.
struct PendingDelivery {
    let prior: (() -> Void)?
    let after: () -> Void
}

final class KeyPathObserver<Object: RVS_PersistentPrefs, Value>: AnyPrefsObserver {
    let keyPath: KeyPath<Object, Value>
    let options: PrefsObservingOptions
    let handler: (Object, PrefsObservedChange<Value>) -> Void

    init(keyPath: KeyPath<Object, Value>, options: PrefsObservingOptions, handler: @escaping (Object, PrefsObservedChange<Value>) -> Void) {
        self.keyPath = keyPath
        self.options = options
        self.handler = handler
    }

    /// Reads the key path without letting that read count as the instance's latest operation.
    func evaluate(_ object: Object) -> Value {
        let outcome = object.lastError
        defer { object.lastError = outcome }
        return object[keyPath: keyPath]
    }

    func begin(_ object: RVS_PersistentPrefs, isActive: @escaping () -> Bool) -> PendingDelivery {
        let object = object as! Object  // registered through `observe` on an instance of `Object`
        let wantsOld = options.contains(.old)
        let old = wantsOld ? evaluate(object) : nil
        let prior: (() -> Void)? = options.contains(.prior) ? { [handler] in
            guard isActive() else { return }
            handler(object, PrefsObservedChange(kind: .setting, newValue: nil, oldValue: old, isPrior: true))
        } : nil
        return PendingDelivery(prior: prior) { [options, handler] in
            guard isActive() else { return }
            let new = options.contains(.new) ? self.evaluate(object) : nil
            guard isActive() else { return }
            handler(object, PrefsObservedChange(kind: .setting, newValue: new, oldValue: old, isPrior: false))
        }
    }
}
