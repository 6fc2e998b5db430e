#ifndef CPREFS_LINUX_H
#define CPREFS_LINUX_H

// What the Glibc module does not import well: `statfs` (its struct has a field named like a keyword in
// some Glibc versions and the function is not exported to Swift) and `eventfd` (in <sys/eventfd.h>,
// outside the module). Each wrapper is a plain call, so that Swift never sizes a C struct by hand.

#include <stdint.h>

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

#endif
