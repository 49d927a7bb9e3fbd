#!/bin/sh
# Build tbench three times and run the whole test suite in each build:
#   build-test  release-like, warnings are errors
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer, at -O1
#               (the sanitizers' recommended level: test_attn took 539 s
#               at -O0 and 97 s at -O1 on the 2-CPU machine under one
#               load; every check of the sanitizers still runs)
#   build-fuzz  clang, libFuzzer harnesses (tests/fuzz) under both
# Every build carries line tables only (-g1: what a backtrace, ASan and
# UBSan reports, perf and valgrind name a function and line with; no
# variable locations).  With meson's full -g each statically linked test
# program held ~60 MB of DWARF, the three builds 7.4 GB, and CI's disk
# filled during build-asan (2026-11-30); with -g1 the same code (.text
# byte for byte) in about a third of the space.
# Ends with the line "N passed, N failed" (every test case of every
# suite, counted from the TAP output) and exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."

status=0
builds=""

# setup_build DIR MESON-ARGS...: configure (once) and build DIR.
setup_build() {
    dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" --werror "$@" || return 1
    fi
    ninja -C "$dir"
}

run_suite() {
    dir=$1
    shift
    builds="$builds $dir"
    if ! setup_build "$dir" "$@"; then
        echo "test.sh: build of $dir failed" >&2
        status=1
        rm -f "$dir/meson-logs/testlog.json"
        return
    fi
    meson test -C "$dir" --print-errorlogs --num-processes 2 || status=1
}

run_suite build-test -Dbuildtype=debugoptimized -Db_ndebug=false \
    -Dtests=enabled -Dc_args=-g1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite build-asan -Dbuildtype=debug -Doptimization=1 -Dtests=enabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dc_args=-g1 -fno-sanitize-recover=all"

# libFuzzer harnesses of tests/fuzz (Debian's clang, ASan+UBSan): the
# config parser, the result loader with every command that reads result
# files, the .npy reader and the CLI parsers, each run from its committed
# seed corpus for TB_FUZZ_SECONDS (default 60; two at a time, so about
# 2.5 minutes in all).  A crash fails its test and its input is copied
# into tests/fuzz/corpus/NAME to be committed.
CC=clang \
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite build-fuzz -Dbuildtype=debug -Dtests=disabled -Dfuzz=enabled \
    -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dc_args=-g1 -fsanitize=fuzzer-no-link -fno-sanitize-recover=all"

# shellcheck disable=SC2086
python3 scripts/count_tests.py $builds || status=1
exit $status
