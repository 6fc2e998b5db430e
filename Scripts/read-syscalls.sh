#!/usr/bin/env bash
# System calls per read of an unchanged collection, counted by strace, with and without administrators'
# files (a system default and a forced entry, SPEC §7.3) in the search list.
#
#   Scripts/read-syscalls.sh [CASE...]     default: read read-watched read-typed read-typed-watched
#
# Each case runs `harness bench --count-reads CASE:N` under `strace -f` twice, with N = 100 and N = 3100;
# the difference of the two counts over 3,000 is the cost of one read, set-up and tear-down cancelling out.
# Prints one line per case and setting:
#   SYSCALLS case=<name> administrators=<none|files> per_read=<n.nnn>
# and fails when a read costs more than one system call (SPEC §7.4: at most one per unchanged read).
# Environment: READ_SYSCALLS_HARNESS=<path> uses that harness instead of the debug build's.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
command -v strace >/dev/null || { echo "read-syscalls: strace is needed (apt-get install -y strace)" >&2; exit 69; }
# Where the machine forbids tracing (ptrace refused in a container, say), say so and count nothing.
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "read-syscalls: strace cannot trace processes on this machine; nothing counted" >&2
    exit 0
fi
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(read read-watched read-typed read-typed-watched)
harness="${READ_SYSCALLS_HARNESS:-$(swift build --show-bin-path)/harness}"
[[ -x "$harness" ]] || { echo "read-syscalls: no harness at $harness (swift build first)" >&2; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# The traces apart from the watched directories (a missing administrators' directory is watched through
# its nearest existing ancestor): a trace written where the process watches would feed its own events.
traces="$(mktemp -d)"
trap 'rm -rf "$scratch" "$traces"' EXIT

# The administrators' files, as an administrator installs them: root's or this user's, mode 0600, in
# directories writable by nobody else.
mkdir -m 700 -p "$scratch/xdg/RVS_PersistentPrefs" "$scratch/managed"
python3 - "$scratch" <<'PY'
import plistlib, sys
root = sys.argv[1]
for path, entries in ((root + "/xdg/RVS_PersistentPrefs/harness.plist", {"read": {"systemDefault": 1}}),
                      (root + "/managed/harness.plist", {"read": {"forced": 2}})):
    with open(path, "wb") as f:
        plistlib.dump(entries, f, fmt=plistlib.FMT_BINARY)
PY
chmod 600 "$scratch/xdg/RVS_PersistentPrefs/harness.plist" "$scratch/managed/harness.plist"

# The system calls the main thread makes in one run of `count` reads (exit and signal lines are not calls,
# nor the second half of a call another thread's interrupted in the trace).
calls() {
    local case="$1" setting="$2" count="$3" out="$traces/trace.$1.$2.$3"
    local environment=(XDG_CONFIG_DIRS="$scratch/none" RVS_PREFS_MANAGED_DIRECTORY="$scratch/none")
    if [[ "$setting" == files ]]; then
        environment=(XDG_CONFIG_DIRS="$scratch/xdg" RVS_PREFS_MANAGED_DIRECTORY="$scratch/managed")
    fi
    env "${environment[@]}" strace -f -qq -o "$out" \
        "$harness" bench --count-reads "$case:$count" --directory "$scratch/work-$case-$setting-$count" >/dev/null 2>"$out.log" \
        || { cat "$out.log" >&2; exit 1; }
    # The reads run on the main thread, whose id is the process's (the first line's): the watch thread's
    # and delivery threads' own calls, which vary from run to run, are not the reads'.
    local main
    main="$(head -n 1 "$out" | cut -d ' ' -f 1)"
    grep -E "^$main " "$out" | grep -cvE '^[0-9]+ +(\+\+\+|---|<\.\.\. )'
}

failed=0
for case in "${cases[@]}"; do
    for setting in none files; do
        low="$(calls "$case" "$setting" 100)"
        high="$(calls "$case" "$setting" 3100)"
        per_read="$(python3 -c "print(f'{($high - $low) / 3000:.3f}')")"
        echo "SYSCALLS case=$case administrators=$setting per_read=$per_read"
        # Set-up calls (a watch added, a file looked at) vary by a few from run to run; a second call a read
        # would add 3,000.
        if (( high - low > 3030 )); then
            echo "read-syscalls: $case with administrators' files=$setting costs $per_read system calls a read, more than one" >&2
            failed=1
        fi
    done
done
exit "$failed"
