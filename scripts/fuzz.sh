#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS on top of its seed corpus.
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS
# Exit status: 0 when no target found anything; 1 when any target reported a
# crash, a leak, a timeout or a sanitizer error (its reproducer is left in
# fuzz/corpus-work/<corpus>/); 2 on a usage error or a missing target.
set -uo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR SECONDS" >&2
    exit 2
fi
build=$1
secs=$2
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for pair in log:fuzz_log_reader records:fuzz_records_reader; do
    corpus=${pair%%:*}
    target=${pair#*:}
    bin=$build/fuzz/$target
    if [ ! -x "$bin" ]; then
        echo "fuzz.sh: $bin is not built (configure with -DHBG_FUZZ=ON and CC=clang)" >&2
        exit 2
    fi
    work=$root/fuzz/corpus-work/$corpus
    mkdir -p "$work"
    echo "fuzz.sh: $target for ${secs}s on fuzz/corpus/$corpus" >&2
    # New inputs go to the work directory; the seed corpus is only read.
    if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$work/" "$work" "$root/fuzz/corpus/$corpus"; then
        echo "fuzz.sh: $target FAILED: see the report above; reproducer in $work/" >&2
        status=1
    fi
done
exit $status
