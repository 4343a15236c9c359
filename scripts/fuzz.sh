#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS on top of its seed corpus.
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS
#        scripts/fuzz.sh BUILD_DIR merge
# The second form grows each committed corpus (fuzz/corpus/<corpus>/) with
# the inputs earlier runs found (fuzz/corpus-work/<corpus>/) that reach code
# the corpus does not (libFuzzer's -merge=1); commit what it adds.
# Exit status: 0 when no target found anything; 1 when any target reported a
# crash, a leak, a timeout or a sanitizer error (its reproducer is left in
# fuzz/corpus-work/<corpus>/); 2 on a usage error or a missing target.
set -uo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR SECONDS|merge" >&2
    exit 2
fi
build=$1
secs=$2
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for pair in log:fuzz_log_reader records:fuzz_records_reader run:fuzz_run_options stamp:fuzz_stamp_diff image:fuzz_image sim:fuzz_sim; do
    corpus=${pair%%:*}
    target=${pair#*:}
    bin=$build/fuzz/$target
    if [ ! -x "$bin" ]; then
        echo "fuzz.sh: $bin is not built (configure with -DHBG_FUZZ=ON and CC=clang)" >&2
        exit 2
    fi
    work=$root/fuzz/corpus-work/$corpus
    mkdir -p "$work"
    if [ "$secs" = merge ]; then
        before=$(ls "$root/fuzz/corpus/$corpus" | wc -l)
        "$bin" -merge=1 -close_fd_mask=3 "$root/fuzz/corpus/$corpus" "$work" >/dev/null 2>&1 || {
            echo "fuzz.sh: merging into fuzz/corpus/$corpus failed" >&2
            status=1
        }
        after=$(ls "$root/fuzz/corpus/$corpus" | wc -l)
        echo "fuzz.sh: fuzz/corpus/$corpus: $before -> $after inputs" >&2
        continue
    fi
    echo "fuzz.sh: $target for ${secs}s on fuzz/corpus/$corpus" >&2
    # The option parser explains each refusal on stderr: keep the target's
    # own output out of the report (libFuzzer's stays).
    quiet=
    [ "$target" = fuzz_run_options ] && quiet=-close_fd_mask=3
    # New inputs go to the work directory; the seed corpus is only read.
    if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" $quiet -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$work/" "$work" "$root/fuzz/corpus/$corpus"; then
        echo "fuzz.sh: $target FAILED: see the report above; reproducer in $work/" >&2
        status=1
    fi
done
exit $status
