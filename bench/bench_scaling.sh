#!/usr/bin/env bash
# How bind grows with the graph: sweeps the parametric case `synth` over
# about three decades of each count the cost model has (outer tasks,
# recorded nodes, replays, boundary slots), one parameter at a time from
# a common base, fits the warm control plane with `hbg fit`, and reports
# for each sweep the log-log slope of the cheapest warm pass's control
# plane against the swept size (over the whole sweep and over its top
# decade; a cost linear in the size with little fixed part gives 1.00).
# Both fits weigh residuals relative to each pass's cost (--relative); the
# first leaves out each run's first warm pass, which writes the journal
# (--skip-warm 1), the second keeps each run's cheapest warm pass only
# (--min-per-log). Before the fits, the tasks sweep split: each point's
# host_orch and arena_h2d, and bench_floor's memset + memcpy of the bytes
# it ships, each with its own slope, so that a copy slowed by the caches
# is told apart from orchestration that grows faster than the graph.
#
# Usage: bench/bench_scaling.sh [BUILD]          (default BUILD: build)
# Knobs (environment):
#   SCALE=full|small  full: tasks 10^3..10^6, replays 10..10^4 (about 3
#                     minutes on 2 cores); small: tasks 10^2..10^5,
#                     replays 1..10^3 (some 20 s). Default full.
#   ROUNDS=N          bind passes per run, the first cold (default 4, at least 3)
#   OUT=DIR           where the logs, fit.txt and fit.svg go (default
#                     outputs/scaling_<UTC time>; must not exist)
#   BOUND=0|1         1: every run passes synth --bound 1, each outer
#                     task's arguments and each replay's tensors held in
#                     a bound (hbg_bound) instead of passed as views and
#                     a boundary (default 0)
# Every run is `hbg run synth --mode numbers` (breakdown on, device run
# skipped, Definitions re-recorded every pass so recorded nodes count).
# Nodes sweep 4..4000 (a Definition holds at most 4096); boundary sweeps
# 1..128 tensors (the cap) at 1000 replays, so slots span 10^3..1.3x10^5.
set -euo pipefail
build=${1:-build}
hbg=$build/hbg
[ -x "$hbg" ] || { echo "bench_scaling.sh: $hbg is not built" >&2; exit 2; }
scale=${SCALE:-full}
rounds=${ROUNDS:-4}
# a cold pass, the journal pass --skip-warm 1 leaves out, and one to fit
[[ $rounds =~ ^[1-9][0-9]{0,5}$ ]] && [ "$rounds" -ge 3 ] && [ "$rounds" -le 100000 ] ||
    { echo "bench_scaling.sh: ROUNDS is a count from 3 (a cold pass, the journal pass, one to fit) to 100000," \
        "not '$rounds'" >&2; exit 2; }
bound=${BOUND:-0}
case $bound in 0 | 1) ;; *) echo "bench_scaling.sh: BOUND is 0 or 1, not '$bound'" >&2; exit 2 ;; esac
out=${OUT:-outputs/scaling_$(date -u +%Y%m%d-%H%M%S)}
case $scale in
    full) tasks="1000 3000 10000 30000 100000 300000 1000000"; replays="10 30 100 300 1000 3000 10000" ;;
    small) tasks="100 300 1000 3000 10000 30000 100000"; replays="1 3 10 30 100 300 1000" ;;
    *) echo "bench_scaling.sh: SCALE is full or small, not '$scale'" >&2; exit 2 ;;
esac
nodes="4 12 40 120 400 1200 4000"
bounds="1 2 4 8 16 32 64 128"
[ -e "$out" ] && { echo "bench_scaling.sh: $out exists; name another OUT" >&2; exit 2; }
mkdir -p "$out"

# run NAME SIZE ARGS...: one run's log, and "NAME SIZE MIN_NS" appended to
# $out/points (MIN_NS: the cheapest warm pass's control plane); for the
# tasks sweep also "SIZE HOST_ORCH_MIN ARENA_H2D_MIN SHIPPED_BYTES" to
# $out/tasks_parts.
run() {
    local name=$1 size=$2
    shift 2
    local log="$out/${name}_$size.log"
    "$hbg" run synth "$@" --bound "$bound" --mode numbers --rounds "$rounds" -o "$log" >/dev/null
    local min
    min=$("$hbg" phases "$log" --format csv | awk -F, '$1 == "total" {print $3}')
    echo "$name $size $min" >>"$out/points"
    printf '  %-8s %-9s %12s ns\n' "$name" "$size" "$min"
    if [ "$name" = tasks ]; then
        "$hbg" phases "$log" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["phases"]
print(sys.argv[1], p["host_orch"]["min_ns"], p["arena_h2d"]["min_ns"], d["exact"]["bytes"]["arena_h2d"])
' "$size" >>"$out/tasks_parts"
    fi
}

# slopes FILE: for each key (column 1, in order of first appearance) the
# least-squares log-log slope of column 3 against column 2 over all its
# points, and over its top decade (the last point against the first one
# at least 10x below it).
slopes() {
    awk '
    { x = log($2); y = log($3); k = $1
      if (!(k in n)) order[++nk] = k
      n[k]++; sx[k] += x; sy[k] += y; sxx[k] += x * x; sxy[k] += x * y
      px[k, n[k]] = x; py[k, n[k]] = y }
    END {
        for (i = 1; i <= nk; i++) {
            k = order[i]
            s = (sxy[k] - sx[k] * sy[k] / n[k]) / (sxx[k] - sx[k] * sx[k] / n[k])
            for (j = n[k] - 1; j > 1 && px[k, n[k]] - px[k, j] < log(10) - 1e-9; j--) ;
            t = (py[k, n[k]] - py[k, j]) / (px[k, n[k]] - px[k, j])
            printf "  %-26s whole sweep %.3f   top decade %.3f\n", k, s, t
        }
    }' "$1"
}

start=$(date +%s)
echo "synth sweeps ($scale, $rounds rounds each; base: --tasks 1000 --graph-nodes 100 --replays 10 --boundary 8 --fanin 2 --bound $bound)"
echo "  sweep    size        cheapest warm control plane"
for n in $tasks; do run tasks "$n" --tasks "$n"; done
for m in $nodes; do run nodes "$m" --graph-nodes "$m"; done
for r in $replays; do run replays "$r" --replays "$r"; done
for b in $bounds; do run slots $((1000 * b)) --replays 1000 --boundary "$b"; done

echo
echo "log-log slope of the cheapest warm control plane against the swept size"
slopes "$out/points"

# The tasks sweep's control plane split, and the floor of the bytes each
# point ships (bench_floor: a memset and a memcpy of them, in a warm
# cache). A memcpy slows down once the image outgrows the caches, and the
# one H2D copy is in the control plane: a floor whose slope is above 1.00
# says how much of the control plane's is the memory system's, not bind's.
floor=$build/bench/bench_floor
if [ -x "$floor" ] && [ -s "$out/tasks_parts" ]; then
    echo
    echo "tasks sweep, the control plane's parts and the floor of the shipped bytes (cheapest warm pass)"
    printf '  %-9s %14s %14s %14s %14s %8s\n' tasks host_orch_ns arena_h2d_ns shipped_bytes floor_ns x_floor
    while read -r size ho h2d bytes; do
        # a few runs of the largest images (hundreds of MB each)
        runs=$(( 2000000000 / bytes )); (( runs > 200 )) && runs=200; (( runs < 5 )) && runs=5
        fl=$("$floor" "$bytes" "$runs" | awk '{print $6}')
        total=$(awk -v n="$size" '$1 == "tasks" && $2 == n {print $3}' "$out/points")
        echo "host_orch $size $ho" >>"$out/tasks_split"
        echo "arena_h2d $size $h2d" >>"$out/tasks_split"
        echo "floor $size $fl" >>"$out/tasks_split"
        echo "x_floor $size $(awk -v a="$total" -v b="$fl" 'BEGIN {printf "%.6f", a / b}')" \
            >>"$out/tasks_split"
        printf '  %-9s %14s %14s %14s %14s %8.2f\n' "$size" "$ho" "$h2d" "$bytes" "$fl" \
            "$(awk -v a="$total" -v b="$fl" 'BEGIN {print a / b}')"
    done <"$out/tasks_parts"
    echo "log-log slope against the number of tasks (x_floor: 0.00 grows as its floor grows)"
    slopes "$out/tasks_split"
fi

echo
# Relative residuals: the sweeps span decades, and so does the noise.
echo "hbg fit --relative --skip-warm 1, every warm pass but each run's first:"
"$hbg" fit --relative --skip-warm 1 "$out"/*.log --plot "$out/fit.svg" | tee "$out/fit.txt"
echo
echo "hbg fit --relative --min-per-log, each run's cheapest warm pass:"
"$hbg" fit --relative --min-per-log "$out"/*.log --plot "$out/fit_min.svg" | tee "$out/fit_min.txt"
echo
echo "logs, fits and plots in $out ($(($(date +%s) - start)) s)"
