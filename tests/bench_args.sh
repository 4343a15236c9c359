#!/usr/bin/env bash
# The bench scripts refuse a bad argument as the commands do: one line on
# stderr naming what was expected, nothing on stdout, exit 2, before any
# measurement starts (each call has 30 s: a count that is taken runs a bench).
#   tests/bench_args.sh SOURCE_DIR BINARY_DIR
set -u
src=$1 bin=$2
bench=$src/bench
work=$(mktemp -d "${TMPDIR:-/tmp}/hbg-bench-args.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0

# refused WHAT ENV... -- SCRIPT ARGS...
refused() {
    local what=$1
    shift
    local -a env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    local rc=0
    env ${env[@]+"${env[@]}"} timeout 30 bash "$@" </dev/null >"$work/out" 2>"$work/err" || rc=$?
    local lines
    lines=$(wc -l <"$work/err")
    if [ "$rc" -ne 2 ] || [ -s "$work/out" ] || [ "$lines" -ne 1 ]; then
        echo "FAIL: $what: exit $rc, $lines lines on stderr, $(wc -c <"$work/out") bytes on stdout:" >&2
        sed 's/^/    /' "$work/err" | head -5 >&2
        fails=$((fails + 1))
    fi
}

refused "bench_cases.sh ROUNDS not a number" -- "$bench/bench_cases.sh" "$bin" x
refused "bench_cases.sh ROUNDS 6x" -- "$bench/bench_cases.sh" "$bin" 6x
refused "bench_cases.sh ROUNDS past 64 bits" -- "$bench/bench_cases.sh" "$bin" 99999999999999999999
refused "bench_cases.sh ROUNDS below 6" -- "$bench/bench_cases.sh" "$bin" 5
refused "bench_scaling.sh ROUNDS past 64 bits" ROUNDS=99999999999999999999 -- "$bench/bench_scaling.sh" "$bin"
refused "bench_scaling.sh ROUNDS below 3" ROUNDS=2 -- "$bench/bench_scaling.sh" "$bin"
refused "bench_scaling.sh SCALE" SCALE=huge -- "$bench/bench_scaling.sh" "$bin"
refused "bench_scaling.sh BOUND" BOUND=2 -- "$bench/bench_scaling.sh" "$bin"
refused "bench_scaling.sh BUILD" -- "$bench/bench_scaling.sh" "$work/nothing"
refused "bench_cold.sh one build" -- "$bench/bench_cold.sh" "$bin"
refused "bench_cold.sh RUNS 0" -- "$bench/bench_cold.sh" "$bin" "$bin" 0
refused "bench_cold.sh RUNS past 64 bits" -- "$bench/bench_cold.sh" "$bin" "$bin" 99999999999999999999
refused "bench_sidebyside.sh one build" -- "$bench/bench_sidebyside.sh" "$bin"
refused "bench_sidebyside.sh REPS past 64 bits" -- "$bench/bench_sidebyside.sh" "$bin" "$bin" 99999999999999999999
refused "bench_tools.sh MB 0" -- "$bench/bench_tools.sh" "$bin" 0
refused "bench_tools.sh RUNS past 64 bits" -- "$bench/bench_tools.sh" "$bin" 1 99999999999999999999
refused "bench_spans_original.sh no ORIGINAL" -- "$bench/bench_spans_original.sh"
refused "bench_spans_original.sh RUNS past 64 bits" -- "$bench/bench_spans_original.sh" "$work" "$bin" 1 \
    99999999999999999999
refused "bench_spans_original.sh ORIGINAL without the tool" -- "$bench/bench_spans_original.sh" "$work" "$bin"

[ "$fails" -eq 0 ] || { echo "$fails bench argument checks failed" >&2; exit 1; }
echo "bench scripts: every bad argument refused in one line, exit 2"
