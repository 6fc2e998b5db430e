#include "CPrefsLinux.h"

#include <sys/eventfd.h>
#include <sys/vfs.h>

int cprefs_file_system_type(const char *path, uint32_t *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (uint32_t)info.f_type;
    return 0;
}

int cprefs_wake_descriptor(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
