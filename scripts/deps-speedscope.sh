#!/bin/sh
# Installs what the speedscope consumer test (test_tools_speedscope) needs:
# node and npm (the Debian packages nodejs and npm, through deps.sh, when
# either command is missing) and the node modules pinned in
# scripts/speedscope/package-lock.json (`npm ci`; nothing to do when the
# installed tree was made from the same lockfile).
# Without them the test is skipped. With HBG_REQUIRE_SPEEDSCOPE=1 (CI sets
# it) a failure here is an error; otherwise it is a warning.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=$here/speedscope
stamp=$dir/node_modules/.hbg-package-lock.json

fail() {
    echo "hbg: speedscope check: $*" >&2
    [ "${HBG_REQUIRE_SPEEDSCOPE:-0}" = 1 ] && exit 1
    echo "hbg: speedscope check: test_tools_speedscope will be skipped" >&2
    exit 0
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    "$here/deps.sh" nodejs npm || fail "node and npm are missing and were not installed"
fi
if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
    exit 0
fi
echo "hbg: installing the speedscope check's node modules (npm ci in scripts/speedscope)" >&2
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) ||
    fail "'npm ci' in $dir failed (is registry.npmjs.org reachable?)"
cp "$dir/package-lock.json" "$stamp" || fail "cannot write $stamp"
