#!/usr/bin/env bash
# What the write's system calls and watches cost with no library code: a C model of one domain write, timed
# against the bench's floor (the bare locked rename), to tell the design's floor from the library's own cost.
#
#   Scripts/write-cost-model.sh [ROUNDS] [WRITES]     default: 3 rounds of 2,000 writes per configuration
#
# Each configuration makes, per write, the calls `strace` shows for `harness bench`'s write-entry: the lock
# file opened and its identity checked (fstat, then stat of its path), the temporary file made with O_EXCL,
# written, closed, renamed over the domain file. Then, as the configuration says:
#   read     the domain file read under the lock first (open, fstat, read, close): Invariant W1
#   dir      the directory watched for entries (InotifyCalls.directoryMask), as a watching process does
#   file     the domain file's own inode watched too (fileMask), the watch placed again on each new inode
#   thread   the events read by a thread waiting on the inotify descriptor (the library's watch thread)
#   inline   the events read by the writer itself after its write (no thread waits on the descriptor)
# Writes of each configuration alternate with writes of the floor in another directory, as in the bench, the
# floor's timed once a watch thread has handled the events of the write before it (in the bench, the peer's
# write runs in between). Each line gives the medians in microseconds and their ratio:
#   MODEL config=<name> ours_us=<median> floor_us=<median> ratio=<r>
set -euo pipefail
rounds="${1:-3}"
writes="${2:-2000}"
[[ $rounds =~ ^[1-9][0-9]*$ && $writes =~ ^[1-9][0-9]*$ ]] || { echo "usage: Scripts/write-cost-model.sh [ROUNDS] [WRITES]" >&2; exit 2; }
compiler="$(command -v clang || command -v cc || true)"
[[ -n "$compiler" ]] || { echo "write-cost-model: a C compiler (clang or cc) is needed" >&2; exit 69; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cat > "$scratch/model.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { READ = 1, DIR_WATCH = 2, FILE_WATCH = 4, INLINE = 8 };
static int config, inotify = -1, fileWatch = -1;
/* Set by the watch thread from its wake-up until it has handled what woke it. */
static volatile int threadBusy = 0;
static char domainFile[4096];
static const char contents[183] = "bplist00";

static double microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

/* What the library's drain does with the events: read them, and place the file's watch on the new inode. */
static void drain(void) {
    char events[65536];
    int pending = 0;
    ioctl(inotify, FIONREAD, &pending);
    if (read(inotify, events, sizeof events) <= 0 || !(config & FILE_WATCH)) return;
    struct stat info;
    lstat(domainFile, &info);
    int watch = inotify_add_watch(inotify, domainFile, IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW);
    if (watch != fileWatch && fileWatch >= 0) inotify_rm_watch(inotify, fileWatch);
    fileWatch = watch;
}

static void *watchThread(void *unused) {
    (void)unused;
    for (;;) {
        struct pollfd wait = {inotify, POLLIN, 0};
        if (poll(&wait, 1, -1) > 0) {
            __atomic_store_n(&threadBusy, 1, __ATOMIC_SEQ_CST);
            drain();
            __atomic_store_n(&threadBusy, 0, __ATOMIC_SEQ_CST);
        }
    }
    return NULL;
}

static void write_(const char *directory, int floor) {
    char lock[4096], temporary[4096], file[4096];
    snprintf(lock, sizeof lock, "%s/domain.plist.lock", directory);
    snprintf(temporary, sizeof temporary, "%s/.domain.plist.tmp", directory);
    snprintf(file, sizeof file, "%s/domain.plist", directory);
    struct stat info;
    int lockFD = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (!floor) fstat(lockFD, &info);
    flock(lockFD, LOCK_EX);
    if (!floor) stat(lock, &info);
    if (!floor && (config & READ)) {
        int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            char bytes[400];
            fstat(fd, &info);
            if (read(fd, bytes, sizeof contents + 1) < 0) perror("read");
            close(fd);
        }
    }
    int fd = open(temporary, O_WRONLY | O_CREAT | (floor ? O_TRUNC : O_EXCL | O_NOFOLLOW) | O_CLOEXEC, 0600);
    if (write(fd, contents, sizeof contents) != sizeof contents) perror("write");
    close(fd);
    if (rename(temporary, file) != 0) perror("rename");
    close(lockFD);
    if (!floor && (config & INLINE) && inotify >= 0) {
        struct pollfd check = {inotify, POLLIN, 0};
        if (poll(&check, 1, 0) > 0) drain();
    }
}

/* Until the watch thread has handled every event of the write just made: the floor is then timed on a quiet
   machine, as the bench's is (its peer's write runs between ours and the floor's). */
static void awaitQuietThread(void) {
    if (inotify < 0 || (config & INLINE)) return;
    for (;;) {
        int pending = 0;
        ioctl(inotify, FIONREAD, &pending);
        if (pending == 0 && !__atomic_load_n(&threadBusy, __ATOMIC_SEQ_CST)) return;
        sched_yield();
    }
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    config = atoi(argv[1]);
    int writes = atoi(argv[2]);
    const char *ours = argv[3], *floorDirectory = argv[4];
    snprintf(domainFile, sizeof domainFile, "%s/domain.plist", ours);
    write_(ours, 0);
    write_(floorDirectory, 1);
    if (config & DIR_WATCH) {
        inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        inotify_add_watch(inotify, ours, IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF
                          | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK);
        if (config & FILE_WATCH)
            fileWatch = inotify_add_watch(inotify, domainFile, IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW);
        pthread_t thread;
        if (!(config & INLINE)) pthread_create(&thread, NULL, watchThread, NULL);
    }
    double *oursTimes = malloc(sizeof(double) * writes), *floorTimes = malloc(sizeof(double) * writes);
    for (int index = 0; index < writes; index++) {
        double start = microseconds();
        write_(ours, 0);
        oursTimes[index] = microseconds() - start;
        awaitQuietThread();
        double middle = microseconds();
        write_(floorDirectory, 1);
        floorTimes[index] = microseconds() - middle;
    }
    qsort(oursTimes, writes, sizeof(double), ascending);
    qsort(floorTimes, writes, sizeof(double), ascending);
    printf("%.1f %.1f\n", oursTimes[writes / 2], floorTimes[writes / 2]);
    return 0;
}
C
"$compiler" -O2 -o "$scratch/model" "$scratch/model.c" -lpthread
# name=bits: READ 1, DIR_WATCH 2, FILE_WATCH 4, INLINE 8
configs=(bare=0 read=1 dir+thread=2 dir+file+thread=6 read+dir+file+thread=7 dir+inline=10 dir+file+inline=14
         read+dir+file+inline=15)
for round in $(seq "$rounds"); do
    for entry in "${configs[@]}"; do
        name="${entry%%=*}"
        work="$scratch/$name-$round"
        mkdir -p "$work/ours" "$work/floor"
        figures="$("$scratch/model" "${entry#*=}" "$writes" "$work/ours" "$work/floor")"
        read -r ours floor <<<"$figures"
        rm -rf "$work"
        awk -v name="$name" -v ours="$ours" -v floor="$floor" \
            'BEGIN { printf "MODEL config=%s ours_us=%s floor_us=%s ratio=%.2f\n", name, ours, floor, ours / floor }'
    done
done
