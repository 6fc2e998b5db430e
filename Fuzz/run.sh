#!/usr/bin/env bash
# Builds and runs the libFuzzer target for "domain file bytes → property-list value" (Fuzz/DomainFileFuzzer.swift),
# over the codec alone (Sources/PrefsPropertyList).
#
#   Fuzz/run.sh [SECONDS] [LIBFUZZER_OPTION…]   fuzz for SECONDS (default 60); e.g. `Fuzz/run.sh 600`
#   Fuzz/run.sh --build                          only build the fuzzer
#   Fuzz/run.sh --seeds                          regenerate the committed seed corpus Fuzz/corpus/
#   Fuzz/run.sh --replay FILE_OR_DIR…            run the target once on each input (to reproduce a crash)
#   Fuzz/run.sh --leak-check [DIR…]              run every input of the seeds and the grown corpus (or DIRs)
#                                                once with LeakSanitizer on; fails on any leak that does not
#                                                come from Foundation's property-list parser
#
# The target is not part of Package.swift: the codec's sources (Sources/PrefsPropertyList, which depend on
# Foundation only) and the fuzzer file are compiled into one module with `swiftc -sanitize=fuzzer,address`.
# The fuzzer runtime (libclang_rt.fuzzer) ships with the Swift toolchain for Linux. Everything it writes goes to $FUZZ_WORK (default
# /tmp/rvs-prefs-fuzz), never into the repository: the binary, the corpus it grows ($FUZZ_WORK/corpus, which
# persists between runs), crashing inputs ($FUZZ_WORK/crashes/) and the log ($FUZZ_WORK/fuzz.log).
# Leak detection is off while fuzzing: Foundation's XML parser leaks on malformed input (a CFError inside
# CFPropertyListCreateWithData), on average some 150-200 bytes per input over a mixed corpus, so the fuzzer's
# RSS climbs by about 300 MB per 10 minutes at ~3-5k inputs/s. Memory is guarded instead by -malloc_limit_mb
# ($FUZZ_MALLOC_MB, default 512: no single allocation may be larger) and -rss_limit_mb ($FUZZ_RSS_MB, default
# 1024 MB plus 1 MB per second of the run, at least 2048), and `--leak-check` attributes every leak.
# The Swift runtime's backtracer is turned off (SWIFT_BACKTRACE=enable=no): under ASan it hangs on a crash
# and keeps the run from ending; libFuzzer and ASan print the stack instead.
# Be kind to a shared machine: `nice -n 19 Fuzz/run.sh 600`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="${FUZZ_WORK:-/tmp/rvs-prefs-fuzz}"
swiftc="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
toolbin="$(dirname "$(readlink -f "$swiftc")")"
binary="$work/domain-file-fuzzer"
mkdir -p "$work/corpus" "$work/crashes"

build() {
    local sources
    mapfile -t sources < <(find "$root/Sources/PrefsPropertyList" -name '*.swift' | sort)
    # Rebuild only when a source is newer than the binary.
    if [[ -x "$binary" ]] && [[ -z "$(find "${sources[@]}" "$here/DomainFileFuzzer.swift" -newer "$binary" | head -1)" ]]; then
        return
    fi
    echo "building $binary" >&2
    local linker=()
    [[ -x "$toolbin/ld.lld" ]] && linker=(-use-ld=lld)  # gold prints hundreds of warnings for ASan symbols
    # From $work: swiftc leaves module files in its working directory, which must not be the repository.
    (cd "$work" && "$swiftc" -parse-as-library -sanitize=fuzzer,address -O -g -wmo -swift-version 6 -warnings-as-errors \
        "${linker[@]}" -module-name PrefsPropertyList -package-name RVS_PersistentPrefs \
        "${sources[@]}" "$here/DomainFileFuzzer.swift" -o "$binary.tmp")
    mv "$binary.tmp" "$binary"
}

export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
export SWIFT_BACKTRACE=enable=no
[[ -x "$toolbin/llvm-symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$toolbin/llvm-symbolizer"

case "${1:-}" in
--build)
    build
    exit 0
    ;;
--seeds)
    build
    rm -f "$here"/corpus/*
    mkdir -p "$here/corpus"
    python3 "$here/make_seeds.py" "$here/corpus"
    FUZZ_WRITE_SEEDS="$here/corpus" "$binary"
    echo "$(ls "$here/corpus" | wc -l) seeds in $here/corpus" >&2
    exit 0
    ;;
--replay)
    shift
    build
    exec "$binary" -detect_leaks=0 -artifact_prefix="$work/replay-" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" "$@"
    ;;
--leak-check)
    shift
    build
    dirs=("$@")
    [[ ${#dirs[@]} -gt 0 ]] || dirs=("$here/corpus" "$work/corpus")
    log="$work/leaks.log"
    echo "leak check over ${dirs[*]}; log: $log" >&2
    # libFuzzer's own per-input leak check stops at the first leak; LeakSanitizer at exit reports them all.
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1" "$binary" -detect_leaks=0 -runs=0 \
        -artifact_prefix="$work/leak-check-" "${dirs[@]}" >"$log" 2>&1 || true
    exec python3 - "$log" <<'PY'
import re
import sys

log = open(sys.argv[1], errors="replace").read()
if "ERROR: libFuzzer" in log or "ERROR: AddressSanitizer" in log or not re.search(r"^Done \d+ runs", log, re.M):
    sys.exit(f"FAIL: the leak check did not run every input to the end; see {sys.argv[1]}")
leaks = re.findall(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\) allocated from:\n((?:    #.*\n?)+)", log, re.M)
foundation = [leak for leak in leaks if "CFPropertyList" in leak[3]]
ours = [leak for leak in leaks if "CFPropertyList" not in leak[3]]
print(f"leaks: {len(leaks)} reports, {sum(int(l[1]) for l in leaks)} bytes; in Foundation's property-list parser: "
      f"{len(foundation)} reports, {sum(int(l[1]) for l in foundation)} bytes; elsewhere: {len(ours)}")
for kind, size, count, stack in ours[:5]:
    print(f"{kind} leak of {size} bytes in {count} objects:\n{stack}", file=sys.stderr)
sys.exit(1 if ours else 0)
PY
    ;;
esac

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: Fuzz/run.sh [SECONDS] [LIBFUZZER_OPTION…] | --build | --seeds | --replay FILE…" >&2; exit 64; }
shift || true
build

echo "fuzzing for $seconds s; log: $work/fuzz.log; crashes: $work/crashes/" >&2
status=0
touch "$work/started"
# The first corpus directory receives new inputs; the committed seeds are only read.
"$binary" \
    -max_total_time="$seconds" \
    -detect_leaks=0 \
    -rss_limit_mb="${FUZZ_RSS_MB:-$(( seconds + 1024 > 2048 ? seconds + 1024 : 2048 ))}" \
    -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" \
    -timeout=10 \
    -max_len=16384 \
    -dict="$here/plist.dict" \
    -artifact_prefix="$work/crashes/" \
    -print_final_stats=1 \
    "$@" \
    "$work/corpus" "$here/corpus" 2>&1 | tee "$work/fuzz.log" || status=$?

crashes=$(find "$work/crashes" -type f -newer "$work/started" | wc -l)
echo "corpus: $(find "$work/corpus" -type f | wc -l) files; new crashing inputs: $crashes (in $work/crashes)" >&2
if [[ $status -ne 0 ]]; then
    echo "FAIL: the fuzzer stopped with status $status; reproduce with: Fuzz/run.sh --replay <input>" >&2
fi
exit "$status"
