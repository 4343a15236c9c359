#!/usr/bin/env bash
# The figures the README quotes: each reference case's warm control plane
# (host_orch + graph_upload + arena_h2d summed within each pass; minimum,
# median and range over warm passes, every rank's first pass dropped), its
# exact heap_used and the bytes its one H2D ships per bind — re-recording
# Definitions every pass (the default) and keeping them — and the minimum
# as a multiple of its floor: bench_floor's memset + memcpy of the bytes
# the pass ships (what building and sending the image would cost with no
# work per task).
# Usage: bench/bench_cases.sh [BUILD_DIR] [ROUNDS]   (defaults: build 12)
set -euo pipefail
build=${1:-build}
rounds=${2:-12}
hbg=$build/hbg
[ -x "$hbg" ] || { echo "bench_cases.sh: $hbg is not built (make build)" >&2; exit 2; }
floor=$build/bench/bench_floor
[ -x "$floor" ] || { echo "bench_cases.sh: $floor is not built (make build)" >&2; exit 2; }
# digits first: [ -ge ] on anything else is an error of its own, and a count
# past 64 bits wraps
[[ $rounds =~ ^[1-9][0-9]{0,5}$ ]] && [ "$rounds" -ge 6 ] && [ "$rounds" -le 100000 ] ||
    { echo "bench_cases.sh: ROUNDS is a count from 6 to 100000, not '$rounds'" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-5s %-10s %5s %12s %12s %24s %12s %12s %6s %8s\n' case definitions n "min_us" "median_us" "range_us" \
    heap_used shipped tasks "x_floor"
for case in qwen dsv4; do
    for keep in "" --keep-definitions; do
        variant=${keep:+kept}; variant=${variant:-re-record}
        log=$tmp/${case}${keep:+_keep}.log
        "$hbg" run "$case" --mode numbers --rounds "$rounds" $keep -o "$log" >/dev/null
        "$hbg" phases "$log" --format json >"$tmp/phases.json"
        shipped=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exact"]["bytes"]["arena_h2d"])' \
            "$tmp/phases.json")
        floor_ns=$("$floor" "$shipped" | awk '{print $6}')
        python3 -c '
import json, sys
d = json.load(sys.stdin)
t, e = d["total"], d["exact"]
us = lambda ns: "%.1f" % (ns / 1000.0)
print("%-5s %-10s %5d %12s %12s %24s %12s %12s %6s %8.1f" % (sys.argv[1], sys.argv[2], t["n"], us(t["min_ns"]),
      us(t["median_ns"]), "[%s .. %s]" % (us(t["min_ns"]), us(t["max_ns"])), e.get("heap_used", "?"),
      e.get("bytes", {}).get("arena_h2d", "?"), e.get("tasks", "?"), t["min_ns"] / float(sys.argv[3])))
for w in d["warnings"]:
    print("  warning:", w, file=sys.stderr)
' "$case" "$variant" "$floor_ns" <"$tmp/phases.json"
    done
done
echo "stamp: $("$hbg" version) on $(nproc) cores; every rank of a case is one row's passes;" \
    "x_floor: min over bench_floor's memset + memcpy of the shipped bytes"
