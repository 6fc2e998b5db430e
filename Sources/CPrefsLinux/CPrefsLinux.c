#include "CPrefsLinux.h"

#include <sys/eventfd.h>
#include <sys/vfs.h>

int cprefs_file_system_type(const char *path, uint32_t *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (uint32_t)info.f_type;
    return 0;
}

static _Thread_local unsigned read_scope_depth;
static _Thread_local uintptr_t read_scope_taken;

void cprefs_read_scope_begin(void) {
    if (read_scope_depth++ == 0) read_scope_taken = 0;
}

void cprefs_read_scope_end(void) {
    if (read_scope_depth > 0 && --read_scope_depth == 0) read_scope_taken = 0;
}

int cprefs_read_scope_has_taken(uintptr_t engine) {
    return read_scope_depth > 0 && read_scope_taken == engine;
}

void cprefs_read_scope_note_taken(uintptr_t engine) {
    if (read_scope_depth > 0) read_scope_taken = engine;
}

int cprefs_wake_descriptor(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
