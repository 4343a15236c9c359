#!/bin/sh
# make, with its own set-up: on a fresh Debian machine even `make` may be
# missing, so this installs it (and the project's packages) first, then runs
# `make TARGET...`. As root it uses apt-get; otherwise it prints the exact
# command and stops.
#   ./make.sh run     the main job      ./make.sh test    the whole suite
set -eu
cd "$(dirname "$0")"
./scripts/deps.sh
exec make "$@"
