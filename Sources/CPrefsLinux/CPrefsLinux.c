#include "CPrefsLinux.h"

#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
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

static _Thread_local unsigned change_delivery_depth;

void cprefs_change_delivery_begin(void) { change_delivery_depth++; }
void cprefs_change_delivery_end(void) { if (change_delivery_depth > 0) change_delivery_depth--; }
int cprefs_change_delivery_active(void) { return change_delivery_depth > 0; }

int cprefs_wake_descriptor(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void cprefs_lock(uint32_t *word) {
    uint32_t expected = 0;
    if (__atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    // Contended: mark the word as having waiters, and sleep until it is free when we mark it.
    while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) {
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

void cprefs_unlock(uint32_t *word) {
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) {
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}
