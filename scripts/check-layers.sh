#!/bin/sh
# Checks that includes between the folders of src/ (and cases/) point one
# way, down the layer table below, and so can never form a cycle:
#
#   cli -> cases -> bind -> graph -> orch -> image -> util
#                   bind -> device -> util      (device beside the stack)
#                   trace, tools: their own, on util at most
#
# A folder may include its own headers, the public headers (hbg/...) and
# those of any folder of a lower rank. Prints each offending include as
# FILE:LINE: FROM -> TO and exits 1; exits 0 when the graph is clean.
#   scripts/check-layers.sh [SOURCE_DIR]
set -eu
top=${1:-$(dirname "$0")/..}
cd "$top"
rank() {
    case $1 in
        util) echo 0 ;;
        image | device | trace | tools) echo 1 ;;
        orch) echo 2 ;;
        graph) echo 3 ;;
        bind) echo 4 ;;
        cases | qwen | dsv4 | vector | synth) echo 5 ;;
        cli) echo 6 ;;
        *) echo -1 ;;
    esac
}
bad=0
for f in $(find src cases -name '*.[ch]' | sort); do
    from=$(echo "$f" | cut -d/ -f2)
    [ "${f#cases/}" != "$f" ] && from=cases
    rf=$(rank "$from")
    # Each quoted include naming a folder: "folder/file.h".
    out=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z0-9_]*/' "$f" || true)
    [ -n "$out" ] || continue
    echo "$out" | while IFS= read -r line; do
        n=${line%%:*}
        to=$(echo "$line" | sed 's/.*include[[:space:]]*"\([a-z0-9_]*\)\/.*/\1/')
        [ "$to" = hbg ] && continue
        [ "$to" = "$from" ] && continue
        rt=$(rank "$to")
        if [ "$from" = cases ] && [ "$rt" -eq 5 ]; then continue; fi
        if [ "$rf" -lt 0 ] || [ "$rt" -lt 0 ] || [ "$rt" -ge "$rf" ]; then
            echo "$f:$n: $from -> $to (not a lower layer)"
            echo x >> "${TMPDIR:-/tmp}/hbg-layers.$$"
        fi
    done
done
if [ -e "${TMPDIR:-/tmp}/hbg-layers.$$" ]; then
    rm -f "${TMPDIR:-/tmp}/hbg-layers.$$"
    echo "check-layers: includes that point up or sideways between folders (see the table in scripts/check-layers.sh)" >&2
    exit 1
fi
echo "check-layers: the include graph between folders has no cycle"
