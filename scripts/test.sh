#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is missing, build, and run the whole test suite in four builds:
#   build/       the suite (unit, end-to-end with the fake driver, H200 traces, golden; the
#                GPU suite skips itself where there is no GPU), warnings as errors
#   build-asan/  the same suites under AddressSanitizer + UndefinedBehaviorSanitizer
#   build-tsan/  the shim's multithreaded tests under ThreadSanitizer
#   build-fuzz/  a bounded libFuzzer run on the trace reader and everything after it (clang)
# Each build's results are in BUILD/meson-logs/testlog.json; the builds run are listed in
# build/test-stages. GPUSHIM_TEST_QUICK=1, or extra arguments (passed to `meson test`, e.g.
# --suite unit), run the first build only.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install || exit 1
BUILD=${BUILD_DIR:-build}
deps_build "$BUILD" -Dwerror_ci=true || exit 1
echo "$BUILD" >"$BUILD/test-stages"
meson test -C "$BUILD" --print-errorlogs "$@"
rc=$?
if [ -n "${GPUSHIM_TEST_QUICK:-}" ] || [ $# -gt 0 ]; then
	exit $rc
fi

stage() {
	local dir=$1
	shift
	echo "== $dir" >&2
	echo "$dir" >>"$BUILD/test-stages"
	rm -f "$dir/meson-logs/testlog.json"
	"$@" || rc=1
}

# AddressSanitizer + UBSan: analyzer, unit tests and the fake client instrumented; the shim
# keeps UBSan (see shim/meson.build). Not shim_fork: this libasan does not release its
# allocator lock across fork (the child's first allocation can hang).
asan() {
	deps_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
		-Dtest_apps=disabled || return 1
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C build-asan --print-errorlogs --suite unit --suite e2e --suite h200 \
		--no-suite fork
}

# ThreadSanitizer: the ring buffers and the end-to-end tests of the shim's threads (not
# shim_fork: TSan does not support a thread started after a multithreaded fork). shim_races
# runs its rounds (the workloads where the shim's threads meet) 20 times here: a race that
# shows in one run of five, as CUPTI's set-up against the writer's first poll did, is missed
# by 20 runs about once in a hundred stages. Its 20 rounds take 40-90 s: thrice the timeout.
tsan() {
	deps_build build-tsan -Db_sanitize=thread -Db_lundef=false -Dtest_apps=disabled ||
		return 1
	GPUSHIM_TEST_REPEAT=20 \
	TSAN_OPTIONS=halt_on_error=1:die_after_fork=0:second_deadlock_stack=1 \
		meson test -C build-tsan --print-errorlogs --timeout-multiplier=3 tbuf clock \
		shim_doors shim_threads shim_capture shim_killed shim_output shim_passthrough \
		shim_exports shim_exit shim_reload shim_cupti shim_races shim_cupti_clients shim_clock \
		shim_sampled shim_detach stacks unwind shim_stacks
}

fuzz() {
	deps_install_fuzz || return 1
	CC=clang deps_build build-fuzz -Dfuzz=true -Dfuzz_seconds="${GPUSHIM_FUZZ_SECONDS:-60}" \
		-Db_sanitize=address,undefined -Db_lundef=false -Dtest_apps=disabled || return 1
	meson test -C build-fuzz --print-errorlogs --suite fuzz
}

stage build-asan asan
stage build-tsan tsan
stage build-fuzz fuzz
exit $rc
