#!/usr/bin/env bash
# `hbg spans` beside the original runtime's span tool (strace_timing), side by
# side on the same generated log in the original runtime's grammar (the one
# bench_tools.sh reads: bench_gen_log original MB).
#
# Each view is timed against the original's equivalent, the two interleaved
# (the order alternating each run) so drift on a shared machine hits both
# alike:
#   hbg spans LOG                    python3 strace_timing.py LOG                (per-callable table)
#   hbg spans LOG --view rounds      python3 strace_timing.py LOG --rounds-table
#   hbg spans LOG --view tree        python3 strace_timing.py LOG --tree
# Each command runs once to warm up (the log is then in the page cache), then
# RUNS times; output goes to /dev/null. Reported: each one's best wall time,
# the range of its runs, and the ratio of the bests (original / hbg).
#
# The original tool is run as a script, not `python -m
# simpler_setup.tools.strace_timing`: importing the package would first run
# simpler_setup/__init__.py, which loads the whole toolchain (torch among it);
# that start-up is not the span tool's work, and is left out in its favour.
#
# Usage: bench/bench_spans_original.sh ORIGINAL [BUILD_DIR] [MB] [RUNS]
#   ORIGINAL   a checkout of the original runtime's repository, or any
#              directory holding simpler_setup/tools/strace_timing.py
#   defaults:  build 200 5;  PYTHON=python3
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 ORIGINAL [BUILD_DIR] [MB] [RUNS]" >&2; exit 2; }
orig=$1
build=${2:-build}
mb=${3:-200}
runs=${4:-5}
[[ $mb =~ ^[1-9][0-9]*$ ]] || { echo "bench_spans_original.sh: MB is a whole number of megabytes from 1, not '$mb'" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]{0,5}$ ]] ||
    { echo "bench_spans_original.sh: RUNS is a count from 1 to 999999, not '$runs'" >&2; exit 2; }
py=${PYTHON:-python3}
tool=$orig/simpler_setup/tools/strace_timing.py
hbg=$build/hbg
gen=$build/bench/bench_gen_log
[ -f "$tool" ] || { echo "bench_spans_original.sh: $tool: no such file (ORIGINAL is the original runtime's checkout)" >&2; exit 2; }
for x in "$hbg" "$gen"; do
    [ -x "$x" ] || { echo "bench_spans_original.sh: $x is not built (cmake --build $build)" >&2; exit 2; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/hbg-bench-spans.XXXXXX")
trap 'rm -rf "$dir"' EXIT
log=$dir/bench-original.log
"$gen" original "$mb" "$log"
bytes=$(stat -c %s "$log")

now() { date +%s%N; }

# time_ns CMD...: the wall time of one run, in ns; a failed run stops the bench
time_ns() {
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1 || { echo "bench_spans_original.sh: '$*' failed" >&2; exit 1; }
    t1=$(now)
    echo $((t1 - t0))
}

# summary LABEL TIMES...: best and range, in ms
summary() {
    local label=$1
    shift
    printf '%s\n' "$@" | sort -n | awk -v l="$label" '
        NR == 1 { lo = $1 } { hi = $1; n++ }
        END { printf "  %-36s best %9.1f ms  (runs: %d, %.1f..%.1f ms)\n", l, lo / 1e6, n, lo / 1e6, hi / 1e6 }'
}

best() { printf '%s\n' "$@" | sort -n | head -1; }

# compare VIEW HBG_ARGS -- ORIGINAL_ARGS
compare() {
    local view=$1
    shift
    local -a ha=() oa=()
    while [ "$1" != -- ]; do ha+=("$1"); shift; done
    shift
    oa=("$@")
    local -a th=() to=()
    time_ns "$hbg" spans "$log" "${ha[@]}" >/dev/null
    time_ns "$py" "$tool" "$log" "${oa[@]}" >/dev/null
    for ((i = 0; i < runs; i++)); do
        if ((i % 2 == 0)); then
            th+=("$(time_ns "$hbg" spans "$log" "${ha[@]}")")
            to+=("$(time_ns "$py" "$tool" "$log" "${oa[@]}")")
        else
            to+=("$(time_ns "$py" "$tool" "$log" "${oa[@]}")")
            th+=("$(time_ns "$hbg" spans "$log" "${ha[@]}")")
        fi
    done
    echo "$view"
    summary "hbg spans ${ha[*]}" "${th[@]}"
    summary "strace_timing.py ${oa[*]}" "${to[@]}"
    awk -v h="$(best "${th[@]}")" -v o="$(best "${to[@]}")" -v b="$bytes" 'BEGIN {
        printf "  ratio (original / hbg, best runs): %.1fx   (%.0f MB/s vs %.1f MB/s)\n",
               o / h, b / 1048576 / (h / 1e9), b / 1048576 / (o / 1e9) }'
}

printf 'log: %s, %.1f MB, original grammar; %d runs each, interleaved; %s (%s)\n' \
    "$(basename "$log")" "$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')" "$runs" "$("$py" --version 2>&1)" "$tool"
compare "per-callable table (the original's default)" -- 
compare "rounds" --view rounds -- --rounds-table
compare "tree" --view tree -- --tree
echo "target: hbg spans >= 20x the original on every view"
