#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A bounded fuzzing run: every regression input once, then FUZZ_SECONDS (default 60) of
# libFuzzer from the seed traces. A crash, a hang (10 s per input) or a sanitizer report fails
# the test and leaves the input as fuzz-crash-* in the working directory: copy it into
# tests/fuzz/regressions/ with the fix, so it stays tested.
# Usage: run.sh FUZZ_BINARY TESTS_FUZZ_DIR
set -eu
bin=$1
dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/gpushim-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# libFuzzer exits 77 on a crash by default: meson's "skipped". A crash must fail the test.
exits="-error_exitcode=1 -timeout_exitcode=1"
set -- "$dir"/regressions/*
if [ -e "$1" ]; then
	# shellcheck disable=SC2086 # the options' words
	"$bin" $exits -timeout=10 "$@"
fi
mkdir "$work/corpus"
cp "$dir"/seeds/* "$work/corpus/"
# shellcheck disable=SC2086 # the options' words
"$bin" $exits -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-print_final_stats=1 -artifact_prefix="$PWD/fuzz-crash-" "$work/corpus" 2>&1 | tail -25
exit "${PIPESTATUS[0]}"
