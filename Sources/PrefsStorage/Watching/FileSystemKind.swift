/// Whether inotify tells of every change to files on a file system, judged by its `statfs` type.
///
/// inotify reports what passes through this machine's kernel. On a local disk file system that is
/// every change. On a network or user-space file system (NFS, SMB/CIFS, FUSE, 9p, Ceph, …) writes
/// made by other machines, or behind the FUSE daemon's back, never pass through it: events are
/// incomplete there, so the watcher also polls. A type not known to be local counts as incomplete.
enum FileSystemKind: Equatable, Sendable {
    /// A local file system on which inotify sees every change.
    case local
    /// A network, user-space or unrecognized file system: inotify sees only this machine's writes.
    case eventsIncomplete(type: UInt32)

    /// Local file systems whose changes all go through this kernel.
    static let localTypes: Set<UInt32> = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0x8584_58F6, // ramfs
        0x794C_7630, // overlayfs
        0x2FC1_2FC1, // zfs
        0xF2F5_2010, // f2fs
        0x3153_464A, // jfs
        0x5265_4973, // reiserfs
        0x4D44,      // vfat
        0x2011_BAB0, // exfat
        0x7366_746E, // ntfs3
        0x5346_544E, // ntfs (old driver)
        0x7371_7368, // squashfs
    ]

    /// The kind of `type`, a `statfs` `f_type` value.
    init(type: UInt32) {
        self = Self.localTypes.contains(type) ? .local : .eventsIncomplete(type: type)
    }

    /// Whether inotify events alone can be trusted to tell of every change.
    var eventsAreComplete: Bool { self == .local }
}
