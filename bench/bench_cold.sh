#!/usr/bin/env bash
# The cold pass side by side: each rank's first bind, the worse rank,
# old and new builds alternating (old, new, new, old, ...). A cold pass is
# one per process, so each figure is a fresh `hbg run CASE --rounds 1`;
# its control plane (host_orch + graph_upload + arena_h2d) and its
# host_orch are read back with `hbg phases --keep-first`, each the larger
# of the ranks' (the two may come from different ranks). Prints each
# arm's minimum, median and maximum over the runs, the range as a
# multiple of the minimum, and new / old of the minima and of the
# medians.
#
# Usage: bench/bench_cold.sh OLD_BUILD NEW_BUILD [RUNS] [CASE]
#   (defaults: 20 runs per arm, dsv4). OLD_BUILD may equal NEW_BUILD to
#   see the machine's own spread.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD [RUNS] [CASE]" >&2; exit 2; }
old=$1 new=$2 runs=${3:-20} case=${4:-dsv4}
for b in "$old" "$new"; do
    [ -x "$b/hbg" ] || { echo "bench_cold.sh: $b/hbg is not built" >&2; exit 2; }
done
[[ $runs =~ ^[1-9][0-9]{0,5}$ ]] ||
    { echo "bench_cold.sh: RUNS is a count from 1 to 999999, not '$runs'" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hbg-cold.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# one ARM BUILD: appends "total host_orch" (ns, the worse rank's) to $tmp/ARM
one() {
    rm -f "$tmp/run.log"
    "$2/hbg" run "$case" --mode numbers --rounds 1 -o "$tmp/run.log" >/dev/null
    "$2/hbg" phases "$tmp/run.log" --keep-first --format csv |
        awk -F, '$1 == "total" {t = $5} $1 == "host_orch" {h = $5} END {print t, h}' >>"$tmp/$1"
}
for ((i = 0; i < runs; i++)); do
    if ((i % 2 == 0)); then one old "$old"; one new "$new"; else one new "$new"; one old "$old"; fi
    printf '\r  %d / %d' $((i + 1)) "$runs" >&2
done
echo >&2

# stats FILE COLUMN: "min median max"
stats() { awk -v c="$2" '{print $c}' "$1" | sort -n | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m, v[NR]}'; }
echo "$case cold pass, the worse rank; $runs runs per arm, alternating; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "  old: $("$old/hbg" version)   new: $("$new/hbg" version)"
printf '  %-14s %-4s %10s %10s %10s %8s\n' figure arm min_us median_us max_us max/min
for col in 1 2; do
    name=$([ $col = 1 ] && echo "control plane" || echo host_orch)
    read -r omin omed omax < <(stats "$tmp/old" $col)
    read -r nmin nmed nmax < <(stats "$tmp/new" $col)
    for arm in old new; do
        if [ $arm = old ]; then set -- "$omin" "$omed" "$omax"; else set -- "$nmin" "$nmed" "$nmax"; fi
        awk -v n="$name" -v a=$arm -v lo="$1" -v md="$2" -v hi="$3" \
            'BEGIN {printf "  %-14s %-4s %10.1f %10.1f %10.1f %8.2f\n", n, a, lo / 1e3, md / 1e3, hi / 1e3, hi / lo}'
    done
    awk -v n="$name" -v a="$omin" -v b="$nmin" -v c="$omed" -v d="$nmed" \
        'BEGIN {printf "  %-14s new / old: min %.2f, median %.2f\n", n, b / a, d / c}'
done
