#!/usr/bin/env bash
# Throughput of `hbg phases`, `hbg spans` and `hbg timeline` on a ~200 MB log in each
# runtime's grammar. Each command runs RUNS times after one warm-up run (the
# log is in the page cache); reported: MB/s of the fastest run, and the
# range of all runs. The timeline goes to stdout, discarded, so the figure is
# the tool's, not the disk's.
# Usage: bench/bench_tools.sh [BUILD_DIR] [MB] [RUNS]   (defaults: build 200 7)
set -euo pipefail
build=${1:-build}
mb=${2:-200}
runs=${3:-7}
[[ $mb =~ ^[1-9][0-9]*$ ]] || { echo "bench_tools.sh: MB is a whole number of megabytes from 1, not '$mb'" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]{0,5}$ ]] ||
    { echo "bench_tools.sh: RUNS is a count from 1 to 999999, not '$runs'" >&2; exit 2; }
hbg=$build/hbg
gen=$build/bench/bench_gen_log
for x in "$hbg" "$gen"; do
    [ -x "$x" ] || { echo "bench_tools.sh: $x is not built (cmake --build $build)" >&2; exit 2; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/hbg-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

now() { date +%s%N; }

# measure NAME BYTES CMD...: prints one result line
measure() {
    local name=$1 bytes=$2
    shift 2
    "$@" >/dev/null 2>&1 || true   # warm-up (and page cache)
    local best=0 worst=0 t0 t1 dt
    for ((i = 0; i < runs; i++)); do
        t0=$(now)
        "$@" >/dev/null 2>&1 || { echo "bench_tools.sh: '$*' failed" >&2; exit 1; }
        t1=$(now)
        dt=$((t1 - t0))
        if ((best == 0 || dt < best)); then best=$dt; fi
        if ((dt > worst)); then worst=$dt; fi
    done
    awk -v n="$name" -v b="$bytes" -v lo="$best" -v hi="$worst" -v r="$runs" 'BEGIN {
        mb = b / 1048576;
        printf "%-28s %8.1f MB  best %8.1f MB/s  (runs: %d, %.1f..%.1f ms, %.0f..%.0f MB/s)\n",
               n, mb, mb / (lo / 1e9), r, lo / 1e6, hi / 1e6, mb / (hi / 1e9), mb / (lo / 1e9) }'
}

for fmt in ours original; do
    log=$dir/bench-$fmt.log
    "$gen" "$fmt" "$mb" "$log"
    bytes=$(stat -c %s "$log")
    measure "phases   ($fmt)" "$bytes" "$hbg" phases "$log"
    measure "phases --format json ($fmt)" "$bytes" "$hbg" phases "$log" --format json
    measure "spans    ($fmt)" "$bytes" "$hbg" spans "$log"
    measure "spans --view tree ($fmt)" "$bytes" "$hbg" spans "$log" --view tree
    measure "timeline ($fmt)" "$bytes" "$hbg" timeline "$log" -o -
done
echo "targets: phases >= 1450 MB/s (5x 290 MB/s), timeline >= 760 MB/s (20x 38 MB/s), spans >= timeline"
