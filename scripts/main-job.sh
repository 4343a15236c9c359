#!/bin/sh
# The main job: the qwen case in numbers mode, N rounds, into a log named so
# that no run overwrites another (case, mode, build commit, repetition),
# then its phase table.
set -eu
hbg=$1 rounds=$2 out=$3
commit=$("$hbg" version | awk '{print $2}')
mkdir -p "$out"
n=1
while [ -e "$out/bind_qwen_numbers_${commit}_r$n.log" ]; do n=$((n + 1)); done
log="$out/bind_qwen_numbers_${commit}_r$n.log"
"$hbg" run qwen --mode numbers --rounds "$rounds" -o "$log"
echo
"$hbg" phases "$log"
