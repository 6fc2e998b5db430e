#!/usr/bin/env bash
# User-space instructions per read of an unchanged 10-entry collection, counted by callgrind (deterministic:
# whatever else the machine does, the count is the same).
#
#   Scripts/read-instructions.sh [CASE...]     default: read read-watched read-typed read-typed-watched
#
# Each case runs `harness bench --count-reads CASE:N` (a release build) twice under
# `valgrind --tool=callgrind`, with N = 1000 and N = 11000; the difference of the two totals over 10,000 is
# the cost of one read, set-up and tear-down cancelling out. Prints one line per case:
#   INSTRUCTIONS case=<name> per_read=<n>
# Environment: READ_INSTRUCTIONS_SKIP_BUILD=1 uses the release harness already built.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
command -v valgrind >/dev/null || { echo "read-instructions: valgrind is needed (apt-get install -y valgrind)" >&2; exit 69; }
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(read read-watched read-typed read-typed-watched)

if [[ "${READ_INSTRUCTIONS_SKIP_BUILD:-}" != 1 ]]; then
    swift build -c release --product harness >&2
fi
harness="$(swift build -c release --show-bin-path)/harness"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The total of user-space instructions of one run of `count` reads.
instructions() {
    local case="$1" count="$2" out="$scratch/callgrind.$1.$2"
    # Deterministic hashing: the same dictionary probes in both runs.
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$harness" bench --count-reads "$case:$count" --directory "$scratch/work-$case-$count" >/dev/null 2>"$out.log" \
        || { cat "$out.log" >&2; exit 1; }
    sed -n 's/^summary: *//p' "$out"
}

for case in "${cases[@]}"; do
    low="$(instructions "$case" 1000)"
    high="$(instructions "$case" 11000)"
    echo "INSTRUCTIONS case=$case per_read=$(( (high - low) / 10000 ))"
done
