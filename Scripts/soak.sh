#!/usr/bin/env bash
# Soak test (not run by `swift test`): several processes read and write one domain for minutes, then the
# script checks that no acknowledged write was lost and that each process's memory stayed flat.
#
#   Scripts/soak.sh [SECONDS]        default 180
#
# Environment:
#   SOAK_WORKERS        number of processes (default 4)
#   SOAK_CONFIGURATION  build configuration of the TestWorker: release (default) or debug
#   SOAK_SCRATCH_PATH   passed to `swift build --scratch-path` (default: the package's .build)
#   SOAK_RSS_SLACK_KB   allowed growth of VmRSS and of VmHWM between warm-up and the end (default 4096)
#   SOAK_KEEP=1         keep the temporary directory with the domain file and the workers' output
#   SOAK_WATCH_CYCLES   watch start/stop cycles checked for leaked descriptors and threads first (default
#                       10000; 0 skips them; `swift test` runs 200)
#
# Each process runs `TestWorker soak` (Tests/TestWorker/main.swift): subscript writes of its own 16 entries of
# one shared collection, reads of the whole collection and of single entries (checked in the worker: its own
# entries read back exactly, nobody's entry ever goes backwards), and whole-collection assignments of a
# collection of its own. At the end the domain file is read with Python's plistlib, independently of the
# library: every entry must hold the last value its worker wrote and was acknowledged, and every worker's own
# collection its last round. Exits non-zero with a message on any failure.
#
#   Scripts/soak.sh --check [SECONDS]   checked histories instead (SPEC §11, `harness check`): one run after
#                                       another, each of SOAK_CHECK_RUN seconds (default 120) with a new seed
#                                       (from SOAK_CHECK_SEED, default random, then +1 each run), for SECONDS
#                                       in all (default 3600); SOAK_WORKERS processes (default 3). Every run's
#                                       output goes to SOAK_CHECK_LOG (default a temporary directory); the
#                                       summary lists each seed with its figures and totals them, with the
#                                       faults made of each kind over all runs; the script exits 1 if
#                                       any run found an anomaly (its files are kept, their path printed).
#                                       SOAK_CHECK_ETCD=1 checks etcd domains instead (`harness check --etcd`);
#                                       SOAK_HARNESS=PATH runs that harness instead of building one.
set -euo pipefail

if [[ "${1:-}" == "--check" ]]; then
    total="${2:-3600}"
    [[ "$total" =~ ^[0-9]+$ && "$total" -gt 0 ]] || { echo "usage: Scripts/soak.sh --check [SECONDS]" >&2; exit 64; }
    run_seconds="${SOAK_CHECK_RUN:-120}"
    seed="${SOAK_CHECK_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000000 ))}"
    cd "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    if [[ -n "${SOAK_HARNESS:-}" ]]; then
        harness="$SOAK_HARNESS"
    else
        build=(swift build -c "${SOAK_CONFIGURATION:-release}" --product harness)
        [[ -n "${SOAK_SCRATCH_PATH:-}" ]] && build+=(--scratch-path "$SOAK_SCRATCH_PATH")
        echo "soak: building: ${build[*]}" >&2
        "${build[@]}" >&2
        harness="$("${build[@]}" --show-bin-path)/harness"
    fi
    log_dir="${SOAK_CHECK_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/rvs-prefs-check-soak-XXXXXX")}"
    mkdir -p "$log_dir"
    etcd_flag=""
    [[ "${SOAK_CHECK_ETCD:-0}" == 1 ]] && etcd_flag="--etcd"
    started=$SECONDS
    failed=0
    logs=()
    while (( SECONDS - started + run_seconds <= total )); do
        status=0
        run_started=$SECONDS
        "$harness" check --seed "$seed" --duration "$run_seconds" --processes "${SOAK_WORKERS:-3}" ${etcd_flag} >"$log_dir/seed-$seed.log" 2>&1 || status=$?
        echo "soak: $(tail -n 1 "$log_dir/seed-$seed.log") (exit $status, $((SECONDS - run_started)) s)"
        logs+=("$log_dir/seed-$seed.log")
        if [[ $status -ne 0 ]]; then failed=1; grep -m 5 '^anomaly\|kept in' "$log_dir/seed-$seed.log" || true; fi
        seed=$((seed + 1))
    done
    # The summary: every run's figures totalled, and the faults made of each kind over all runs (each run's
    # `check: faults:` line, kinds separated by `; `, each `NAME COUNT` with `(K skipped)` when some were).
    if (( ${#logs[@]} > 0 )); then
        python3 - "$((SECONDS - started))" "${logs[@]}" <<'PY'
import re, sys
seconds, paths = int(sys.argv[1]), sys.argv[2:]
made, skipped, totals = {}, {}, [0, 0, 0]
methods = set()
for path in paths:
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("check: faults: "):
            for item in line[len("check: faults: "):].split("; "):
                match = re.fullmatch(r"(.+) (\d+)(?: \((\d+) skipped\))?", item)
                if match:
                    made[match[1]] = made.get(match[1], 0) + int(match[2])
                    skipped[match[1]] = skipped.get(match[1], 0) + int(match[3] or 0)
        elif line.startswith("check: partition method: ") or line.startswith("check: bind mounts: "):
            methods.add(line[len("check: "):])
        match = re.fullmatch(r"check: seed \d+, (\d+) operations, (\d+) faults, (\d+) anomalies", line)
        if match:
            totals = [t + int(v) for t, v in zip(totals, match.groups())]
print(f"soak: {len(paths)} runs in {seconds} s: {totals[0]} operations, {totals[1]} faults, {totals[2]} anomalies")
for kind in made:
    print(f"soak: faults: {kind}: {made[kind]}" + (f" ({skipped[kind]} skipped)" if skipped[kind] else ""))
for method in sorted(methods):
    print(f"soak: {method}")
PY
    fi
    echo "soak: outputs in $log_dir"
    exit $failed
fi

seconds="${1:-180}"
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "usage: Scripts/soak.sh [SECONDS]" >&2; exit 64; }
workers="${SOAK_WORKERS:-4}"
configuration="${SOAK_CONFIGURATION:-release}"
slack="${SOAK_RSS_SLACK_KB:-4096}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

build=(swift build -c "$configuration" --product TestWorker)
[[ -n "${SOAK_SCRATCH_PATH:-}" ]] && build+=(--scratch-path "$SOAK_SCRATCH_PATH")
echo "soak: building: ${build[*]}" >&2
"${build[@]}" >&2
bin="$("${build[@]}" --show-bin-path)"
worker="$bin/TestWorker"

dir="$(mktemp -d "${TMPDIR:-/tmp}/rvs-prefs-soak-XXXXXX")"
cleanup() { if [[ "${SOAK_KEEP:-0}" == 1 ]]; then echo "soak: kept $dir" >&2; else rm -rf "$dir"; fi; }
trap cleanup EXIT

# Watch start/stop cycles: the descriptor and thread counts must end where they began (TestWorker watch-cycles).
cycles="${SOAK_WATCH_CYCLES:-10000}"
if [[ "$cycles" -gt 0 ]]; then
    echo "soak: $cycles watch start/stop cycles" >&2
    line="$("$worker" watch-cycles "$dir" cycles settings "$cycles")"
    echo "soak: $line" >&2
    python3 - "$line" "$cycles" <<'PY'
import sys
fields = dict(f.split("=") for f in sys.argv[1].split())
f = {k: int(v) for k, v in fields.items()}
problems = []
if f["cycles"] != int(sys.argv[2]): problems.append(f"ran {f['cycles']} cycles")
if f["fds_after"] != f["fds_before"]: problems.append(f"descriptors {f['fds_before']} -> {f['fds_after']}")
if f["threads_after"] != f["threads_before"]: problems.append(f"threads {f['threads_before']} -> {f['threads_after']}")
if problems: sys.exit("FAIL: watch cycles leaked: " + "; ".join(problems))
print(f"PASS: {f['cycles']} watch cycles leaked no descriptor and no thread")
PY
    rm -f "$dir"/cycles.plist*
fi

echo "soak: $workers processes for $seconds s on $dir/soak.plist" >&2
pids=()
for ((w = 0; w < workers; w++)); do
    "$worker" soak "$dir" soak shared "$seconds" "$w" "$workers" >"$dir/worker-$w.out" 2>"$dir/worker-$w.err" &
    pids+=($!)
done
failed=0
for ((w = 0; w < workers; w++)); do
    if ! wait "${pids[$w]}"; then
        echo "FAIL: worker $w exited with an error: $(cat "$dir/worker-$w.err")" >&2
        failed=1
    fi
done
[[ $failed -eq 0 ]] || exit 1

python3 - "$dir" "$workers" "$slack" <<'PY'
import plistlib
import re
import sys

directory, workers, slack = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
problems = []
reports = []
for w in range(workers):
    text = open(f"{directory}/worker-{w}.out").read()
    match = re.search(r"^soak (.*)$", text, re.M)
    if not match:
        sys.exit(f"FAIL: worker {w} printed no report: {text!r}")
    report = {k: (int(v) if v.lstrip("-").isdigit() else v) for k, v in (f.split("=") for f in match.group(1).split())}
    reports.append(report)

with open(f"{directory}/soak.plist", "rb") as f:
    domain = plistlib.load(f)
shared = domain.get("shared", {})
expected_names = set()
for w, r in enumerate(reports):
    writes, slots = r["writes"], r["slots"]
    # Worker w wrote entry w<w>-<i % slots> = i for i in 0 ..< writes, each acknowledged; the last one per slot wins.
    for s in range(min(slots, writes)):
        name = f"w{w}-{s}"
        expected_names.add(name)
        last = s + slots * ((writes - 1 - s) // slots)
        if shared.get(name) != last:
            problems.append(f"entry {name} holds {shared.get(name)!r}, but the last acknowledged write was {last}")
    own = domain.get(f"shared-w{w}")
    if r["rounds"] > 0 and own != {"round": r["rounds"] - 1}:
        problems.append(f"collection shared-w{w} holds {own!r}, but the last acknowledged round was {r['rounds'] - 1}")
extra = set(shared) - expected_names
if extra:
    problems.append(f"unexpected entries in the shared collection: {sorted(extra)}")

print(f"{'worker':>6} {'writes':>8} {'reads':>8} {'rounds':>7} {'HWM start':>10} {'RSS warm':>9} {'RSS end':>8} {'HWM warm':>9} {'HWM end':>8}  (kB)")
for w, r in enumerate(reports):
    print(f"{w:>6} {r['writes']:>8} {r['reads']:>8} {r['rounds']:>7} {r['hwm_start_kb']:>10} {r['rss_warm_kb']:>9} "
          f"{r['rss_end_kb']:>8} {r['hwm_warm_kb']:>9} {r['hwm_end_kb']:>8}")
    for label, warm, end in (("RSS", r["rss_warm_kb"], r["rss_end_kb"]), ("peak RSS (VmHWM)", r["hwm_warm_kb"], r["hwm_end_kb"])):
        if warm < 0 or end < 0:
            problems.append(f"worker {w}: {label} could not be read from /proc/self/status")
        elif end - warm > slack:
            problems.append(f"worker {w}: {label} grew by {end - warm} kB after warm-up ({warm} → {end} kB; allowed {slack} kB)")
total = sum(r["writes"] for r in reports)
print(f"total: {total} acknowledged entry writes, {sum(r['rounds'] for r in reports)} collection rounds, "
      f"{sum(r['reads'] for r in reports)} checked reads; {len(shared)} entries in the shared collection; "
      f"file size {len(open(f'{directory}/soak.plist', 'rb').read())} bytes")
if problems:
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    sys.exit(1)
print("PASS: every acknowledged write is present, and memory stayed flat")
PY
