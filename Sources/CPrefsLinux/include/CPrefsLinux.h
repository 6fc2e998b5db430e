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

#endif
