#include "CPrefsLinux.h"

#include <linux/futex.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
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

void cprefs_futex_wait(uint32_t *word, uint32_t value) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

void cprefs_futex_wake_one(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/// `poll` of `entries` with no wait, as the system call itself.
static long cprefs_poll_now(struct pollfd *entries, unsigned long count) {
    struct timespec zero = {0, 0};
    return syscall(SYS_ppoll, entries, count, &zero, NULL, (size_t)0);
}

int cprefs_pending_changes(struct cprefs_mount_check *check, int inotify) {
    cprefs_lock(&check->lock);
    struct pollfd entries[2] = {{inotify, POLLIN, 0}, {check->descriptor, POLLPRI, 0}};
    // A negative descriptor is skipped by the kernel.
    long count = cprefs_poll_now(entries, 2);
    int result = 0;
    if (count < 0) {
        result = 1;
        check->changed = 1;
    } else if (count > 0) {
        if (entries[0].revents & POLLIN) result |= 1;
        if (entries[1].revents & (POLLPRI | POLLERR)) check->changed = 1;
    }
    if (check->changed) result |= 2;
    cprefs_unlock(&check->lock);
    return result;
}

int cprefs_mount_change_noted(struct cprefs_mount_check *check, int look) {
    cprefs_lock(&check->lock);
    if (look && check->descriptor >= 0) {
        struct pollfd entry = {check->descriptor, POLLPRI, 0};
        long count = cprefs_poll_now(&entry, 1);
        if (count < 0 || (count > 0 && (entry.revents & (POLLPRI | POLLERR)))) check->changed = 1;
    }
    int changed = (int)check->changed;
    cprefs_unlock(&check->lock);
    return changed;
}

void cprefs_clear_mount_change(struct cprefs_mount_check *check) {
    cprefs_lock(&check->lock);
    check->changed = 0;
    cprefs_unlock(&check->lock);
}

void cprefs_set_mount_descriptor(struct cprefs_mount_check *check, int descriptor) {
    cprefs_lock(&check->lock);
    check->descriptor = descriptor;
    check->changed = 0;
    cprefs_unlock(&check->lock);
}
