#!/bin/sh
# Installs the Debian packages named on the command line (default: those in
# scripts/packages) when any is missing. As root it runs apt-get; otherwise
# it prints the exact command and fails.
[ $# -gt 0 ] || set -- $(cat "$(dirname "$0")/packages")
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
cmd="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "hbg: missing packages:$missing" >&2
    echo "hbg: install them as root with:  $cmd" >&2
    exit 1
fi
echo "hbg: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
    echo "hbg: '$cmd' failed" >&2; exit 1; }
