#!/usr/bin/env bash
# The install and embedding checks, one CTest test per step (tests/CMakeLists.txt):
#
#   run.sh install   BUILD WORK   cmake --install BUILD into WORK/prefix, and check what is there
#   run.sh exports   BUILD WORK   libhbg.so exports the public API and nothing else
#   run.sh headers   BUILD WORK   each installed header compiles alone (gcc and clang; also as C++
#                                 and gnu89)
#   run.sh pkgconfig BUILD WORK   main.c built with pkg-config (gcc and clang), and run
#   run.sh cmake     BUILD WORK   main.c built with find_package(hbg) (gcc and clang), and run
#   run.sh subdir    BUILD WORK   main.c built with add_subdirectory(hbg), and run
#   run.sh docs      BUILD WORK   docs/embedding.md shows main.c as it is
#
# All but `install` and `subdir` use WORK/prefix. Exit status 0 when every
# check holds; 1 with a line naming the first that did not.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 install|exports|headers|pkgconfig|cmake|subdir|docs BUILD WORK" >&2; exit 2; }
step=$1 build=$2 work=$3
prefix=$work/prefix
cflags=(-std=c11 -Wall -Wextra -Werror)

fail() { echo "run.sh $step: $*" >&2; exit 1; }

# The versions CMakeLists.txt sets: what the install must carry.
version=$(sed -n 's/^project(hbg VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
soversion=$(sed -n 's/^set(HBG_SOVERSION \([0-9]*\)).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] && [ -n "$soversion" ] || fail "no project VERSION or HBG_SOVERSION in $src/CMakeLists.txt"

# The library directory GNUInstallDirs chose (lib, lib64 or lib/<triplet>).
libdir() { dirname "$(find "$prefix" -name hbg.pc -path '*/pkgconfig/*' | head -1)" | sed 's|/pkgconfig$||'; }

step_install() {
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix" >/dev/null
    local lib
    lib=$(libdir)
    [ -n "$lib" ] || fail "no hbg.pc installed under $prefix"
    for f in include/hbg/{device,graph,image,kernel,orch,runtime,status,tensor,trace,xrank}.h bin/hbg; do
        [ -f "$prefix/$f" ] || fail "$prefix/$f is not installed"
    done
    for f in libhbg.a libhbg.so "libhbg.so.$soversion" "libhbg.so.$version" cmake/hbg/hbgConfig.cmake \
             cmake/hbg/hbgConfigVersion.cmake cmake/hbg/hbgTargets.cmake; do
        [ -e "$lib/$f" ] || fail "$lib/$f is not installed"
    done
    local n want
    n=$(find "$prefix/include/hbg" -name '*.h' | wc -l)
    want=$(find "$src/include/hbg" -name '*.h' | wc -l)
    [ "$n" -eq "$want" ] || fail "$n headers in $prefix/include/hbg, expected the $want of include/hbg"
    readelf -d "$lib/libhbg.so" | grep -qF "Library soname: [libhbg.so.$soversion]" ||
        fail "libhbg.so has no SONAME libhbg.so.$soversion"
    grep -qx 'License: MIT' "$lib/pkgconfig/hbg.pc" || fail "hbg.pc has no 'License: MIT'"
    "$prefix/bin/hbg" version >/dev/null || fail "the installed hbg does not run"
}

step_exports() {
    local so=$build/libhbg.so syms
    syms=$(nm -D --defined-only "$so" | awk '{print $3}')
    local bad
    bad=$(grep -v '^hbg_' <<<"$syms" || true)
    [ -z "$bad" ] || fail "libhbg.so exports names without hbg_: $(echo $bad)"
    grep -qx hbg_runtime_create <<<"$syms" || fail "libhbg.so does not export hbg_runtime_create"
    # Internal functions, hbg_-named or not, stay inside the library.
    for s in hbg_orch_create hbg_tmap_write hbg_exec_open sim_mem_alloc; do
        ! grep -qx "$s" <<<"$syms" || fail "libhbg.so exports the internal $s"
    done
    # Every export is a name a public header declares, and every function
    # of the library that a public header declares is exported.
    local s
    for s in $syms; do
        grep -qw "$s" "$src"/include/hbg/*.h || fail "libhbg.so exports $s, which no public header declares"
    done
    for s in $(nm --defined-only "$build/libhbg.a" 2>/dev/null | awk '$2 == "T" {print $3}'); do
        if grep -qw "$s" "$src"/include/hbg/*.h; then
            grep -qx "$s" <<<"$syms" || fail "libhbg.so does not export $s, which a public header declares"
        fi
    done
}

step_headers() {
    # C11 by gcc and clang, and as embedders may build it: C++, and C as gnu89.
    local mode h
    for mode in "gcc -x c -std=c11" "clang -x c -std=c11" "clang++ -x c++ -std=c++11" "gcc -x c -std=gnu89"; do
        for h in "$prefix"/include/hbg/*.h; do
            # shellcheck disable=SC2086
            printf '#include "hbg/%s"\n' "$(basename "$h")" |
                $mode -Wall -Wextra -Werror -I"$prefix/include" -c -o /dev/null - ||
                fail "$mode: hbg/$(basename "$h") does not compile alone"
        done
    done
}

step_pkgconfig() {
    local cc out lib
    lib=$(libdir)
    export PKG_CONFIG_PATH=$lib/pkgconfig
    [ "$(pkg-config --modversion hbg)" = "$version" ] || fail "pkg-config --modversion hbg is not $version"
    for cc in gcc clang; do
        out=$work/pkgconfig-$cc
        # shellcheck disable=SC2046
        "$cc" "${cflags[@]}" "$here/main.c" -o "$out" $(pkg-config --cflags --libs hbg) \
            -Wl,-rpath,"$(pkg-config --variable=libdir hbg)" || fail "$cc: build with pkg-config failed"
        readelf -d "$out" | grep -qF "Shared library: [libhbg.so.$soversion]" ||
            fail "$cc: $out does not use libhbg.so.$soversion"
        "$out" || fail "$cc: $out failed"
    done
}

# Configures and builds tests/consumer in WORK/NAME with CC, then runs both
# programs; the static one must not need libhbg.so.
build_consumer() {
    local name=$1 cc=$2
    shift 2
    local b=$work/$name
    rm -rf "$b"
    CC=$cc cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=Debug "$@" >"$b.log" 2>&1 ||
        fail "$cc: configuring tests/consumer failed; see $b.log"
    cmake --build "$b" -j 2 >>"$b.log" 2>&1 || fail "$cc: building tests/consumer failed; see $b.log"
    ! readelf -d "$b/consumer_static" | grep -q 'libhbg\.so' || fail "$cc: consumer_static needs libhbg.so"
    "$b/consumer" || fail "$cc: $b/consumer failed"
    "$b/consumer_static" || fail "$cc: $b/consumer_static failed"
}

step_cmake() {
    local cc
    for cc in gcc clang; do
        build_consumer "find-package-$cc" "$cc" -DCMAKE_PREFIX_PATH="$prefix"
    done
}

step_subdir() {
    build_consumer subdir gcc -DHBG_SOURCE="$src"
    [ ! -e "$work/subdir/hbg/tests" ] || fail "add_subdirectory(hbg) configured hbg's own tests"
}

# The page's one C block is the program, byte for byte.
step_docs() {
    awk '/^```c$/{on=1; next} /^```$/{on=0} on' "$src/docs/embedding.md" | cmp -s - "$here/main.c" ||
        fail "the C block of docs/embedding.md is not tests/consumer/main.c"
}

case $step in
    install|exports|headers|pkgconfig|cmake|subdir|docs) mkdir -p "$work"; "step_$step" ;;
    *) echo "run.sh: unknown step '$step'" >&2; exit 2 ;;
esac
