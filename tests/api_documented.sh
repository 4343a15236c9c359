#!/bin/sh
# Every public name is documented: each hbg_* function and type, and each
# HBG_* macro and enum constant, that include/hbg/*.h declares or uses in
# its code must appear in docs/*.md as a whole word. Comments and string
# literals are left out (a comment may name what is not declared; the
# strings are environment variables' names), and so are the include
# guards. Prints each name no page mentions and exits 1; exits 0 when
# every name is found.
#   tests/api_documented.sh [SOURCE_DIR]
# POSIX sh, sed, tr, grep, sort and comm only.
set -eu
top=${1:-$(dirname "$0")/..}
cd "$top"
LC_ALL=C
export LC_ALL
work=$(mktemp -d "${TMPDIR:-/tmp}/hbg-api-documented.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The code of each header: comments removed (one that spans lines is
# joined up to its end first), then string literals and include guards.
# What is left is split into words, and the public names kept.
for h in include/hbg/*.h; do
    sed -e ':c' \
        -e 's#/\*[^*]*\*\{1,\}\([^/*][^*]*\*\{1,\}\)*/# #g' \
        -e '/\/\*/{' -e 'N' -e 'bc' -e '}' \
        -e 's#//.*##' "$h" |
        sed -e 's/"[^"]*"/ /g' \
            -e '/^#[[:space:]]*ifndef[[:space:]]\{1,\}HBG_[A-Z0-9_]*_H[[:space:]]*$/d' \
            -e '/^#[[:space:]]*define[[:space:]]\{1,\}HBG_[A-Z0-9_]*_H[[:space:]]*$/d' \
            -e '/^#[[:space:]]*endif/d'
done | tr -cs 'A-Za-z0-9_' '\n' | grep -E '^(hbg|HBG)_[A-Za-z0-9_]+$' | sort -u >"$work/names"

if [ ! -s "$work/names" ]; then
    echo "api_documented: no public names found in include/hbg/*.h" >&2
    exit 1
fi

# The words of the documentation, split the same way.
cat docs/*.md | tr -cs 'A-Za-z0-9_' '\n' | sort -u >"$work/words"

comm -23 "$work/names" "$work/words" >"$work/missing"
if [ -s "$work/missing" ]; then
    n=$(wc -l <"$work/missing")
    sed 's/^/undocumented: /' "$work/missing" >&2
    echo "api_documented: $((n)) of the $(wc -l <"$work/names" | tr -d " ") public names of include/hbg/ appear nowhere in docs/*.md" >&2
    exit 1
fi
echo "api_documented: all $(wc -l <"$work/names" | tr -d ' ') public names of include/hbg/ appear in docs/*.md"
