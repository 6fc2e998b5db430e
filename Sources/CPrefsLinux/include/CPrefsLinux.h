#ifndef CPREFS_LINUX_H
#define CPREFS_LINUX_H

// What the Glibc module does not import well: `statfs` (its struct has a field named like a keyword in
// some Glibc versions and the function is not exported to Swift) and `eventfd` (in <sys/eventfd.h>,
// outside the module). Each wrapper is a plain call, so that Swift never sizes a C struct by hand.

#include <stdint.h>
#include <sys/ioctl.h>

/// The `f_type` magic number of the file system holding `path`, in `*type`; 0 on success, else -1 with errno set.
int cprefs_file_system_type(const char *path, uint32_t *type);

/// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`: a descriptor to wake a thread waiting in poll(); -1 with errno set.
int cprefs_wake_descriptor(void);

/// A read of several domains as one moment (see ReadScope.swift): a thread-local depth and the engine whose
/// pending events this scope has already taken. C's `_Thread_local`, which Swift has no plain spelling of.
void cprefs_read_scope_begin(void);
void cprefs_read_scope_end(void);
/// Whether the current scope has already taken the pending events of `engine`.
int cprefs_read_scope_has_taken(uintptr_t engine);
/// Records that the current scope (if any) has taken the pending events of `engine`.
void cprefs_read_scope_note_taken(uintptr_t engine);

/// A lock in one 32-bit word that makes no system call unless contended (0 free, 1 held, 2 held with
/// waiters, the futex mutex of Drepper's "Futexes Are Tricky"). Out of line, so that a thread sanitizer
/// sees its atomics. `word` must stay at one address while the lock is used.
void cprefs_lock(uint32_t *word);
void cprefs_unlock(uint32_t *word);

/// The sleeping and waking of a futex lock kept elsewhere (PrefsStorage's `PrefsMutex`, whose atomics are
/// Swift's): sleeps while `*word` is `value` (or until woken), and wakes one sleeper of `word`.
void cprefs_futex_wait(uint32_t *word, uint32_t value);
void cprefs_futex_wake_one(uint32_t *word);

/// The bytes queued for reading on `fd` (`ioctl(FIONREAD)`); -1 with errno set when it fails (SystemCalls
/// makes it, so that a fault can be injected). Here because Swift cannot call the variadic `ioctl`.
static inline int cprefs_pending_bytes(int fd) {
    int count = 0;
    return ioctl(fd, FIONREAD, &count) == -1 ? -1 : count;
}

/// The reads' check of a watch engine for changes (see WatchEngine.swift): the engine's inotify descriptor and
/// the process's mount table, which reports each change once per descriptor, to whichever `poll` comes first.
/// So the check and the note of what it found are one step under `lock`, and a read on another thread that
/// comes second finds the note; the engine clears it once it applied the change. At one address while used.
struct cprefs_mount_check {
    uint32_t lock;
    /// 1 when a change of the mount table was seen and not yet applied.
    uint32_t changed;
    /// A descriptor of `/proc/self/mountinfo` kept for this check, or -1.
    int32_t descriptor;
};

/// With no waiting, one `ppoll` system call made directly (no wait, so glibc's cancellation handling around
/// `poll` would only cost): bit 1 when events are queued on `inotify`, bit 2 when a change of the mount
/// table is noted and not applied (found now or before). A failed call reports both, which costs re-reads only.
int cprefs_pending_changes(struct cprefs_mount_check *check, int inotify);

/// Whether a change of the mount table is noted and not yet applied (after looking at the descriptor again
/// when `look`): 1 or 0. The note stays until `cprefs_clear_mount_change`, so that a read checking meanwhile
/// still finds it.
int cprefs_mount_change_noted(struct cprefs_mount_check *check, int look);

/// Forgets the note of a change of the mount table: called by the one applying it, once reads that check
/// from now on are made to wait for it.
void cprefs_clear_mount_change(struct cprefs_mount_check *check);

/// Makes `descriptor` (or -1) the one the check uses, forgetting any note; the one it replaces may be closed
/// once this returns.
void cprefs_set_mount_descriptor(struct cprefs_mount_check *check, int descriptor);

#endif
