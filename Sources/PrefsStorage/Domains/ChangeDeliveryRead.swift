import CPrefsLinux

/// The read that tells an instance's observers of a change one of its domains' watches reported.
///
/// A backend whose every read is a round trip to another machine may serve this read from the state its own
/// live watch last delivered: that is the change being told (the watch applies an event before it reports
/// it), and the watch delivers later changes in order, so what observers are told never goes backwards.
/// Every other read, the handlers' own and those of the instance's overridden accessors included, is
/// answered as always. A thread-local depth: the delivery searches on its own thread, inside ``reading(_:)``.
package enum ChangeDeliveryRead {
    /// Runs `body` as the read of a change delivery.
    package static func reading<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        cprefs_change_delivery_begin()
        defer { cprefs_change_delivery_end() }
        return try body()
    }

    /// Whether the current thread is inside the read of a change delivery.
    package static var isActive: Bool { cprefs_change_delivery_active() != 0 }
}
