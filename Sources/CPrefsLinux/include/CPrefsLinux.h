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

/// A read that tells observers of a change a domain's watch reported (see ChangeDeliveryRead.swift): a
/// thread-local depth.
void cprefs_change_delivery_begin(void);
void cprefs_change_delivery_end(void);
int cprefs_change_delivery_active(void);

/// A lock in one 32-bit word that makes no system call unless contended (0 free, 1 held, 2 held with
/// waiters, the futex mutex of Drepper's "Futexes Are Tricky"). Out of line, so that a thread sanitizer
/// sees its atomics. `word` must stay at one address while the lock is used.
void cprefs_lock(uint32_t *word);
void cprefs_unlock(uint32_t *word);

/// The bytes queued for reading on `fd` (`ioctl(FIONREAD)`), 0 when it fails. Inline, so that a read's
/// one system call is made without Swift's wrapper of the variadic `ioctl`.
static inline int cprefs_pending_bytes(int fd) {
    int count = 0;
    return ioctl(fd, FIONREAD, &count) == -1 ? 0 : count;
}

#endif
