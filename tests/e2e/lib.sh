# SPDX-License-Identifier: MIT
# Shared by the end-to-end tests: a scratch directory, running the fake client with and without
# the shim, and assertions that say what was expected. Sourced, never run.
set -eu
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpushim-e2e.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export LD_LIBRARY_PATH="$FAKE_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# run_plain OUT MODE: the client alone.
run_plain() {
	out=$1
	shift
	"$FAKE_CLIENT" "$@" >"$out"
}

# run_shim OUT PATTERN MODE: the client under the shim, trace to PATTERN.
run_shim() {
	out=$1
	pattern=$2
	shift 2
	LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$pattern" "$FAKE_CLIENT" "$@" >"$out"
}

# use_fake_cupti: from here on, the fake driver that carries a fake CUPTI
# (tests/fake_cuda/fake_cupti.c), loaded by the shim as its CUPTI.
use_fake_cupti() {
	export LD_LIBRARY_PATH="$(dirname "$FAKE_CUPTI_LIB"):$LD_LIBRARY_PATH"
	export GPUSHIM_CUPTI="$FAKE_CUPTI_LIB"
}

# run_shim_cupti OUT PATTERN MODE: run_shim with the fake CUPTI, for this run only.
run_shim_cupti() (
	use_fake_cupti
	run_shim "$@"
)

# clock_note TRACE: the texts of the trace's CLOCK notes (the hooks' clock, shim/clock.c).
clock_note() {
	"$GPUSHIM_BIN" info --format json "$1" |
		jq -r '[.notes[] | select(.kind == "clock") | .text] | join("; ")'
}

# expect NAME GOT WANT
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# jget FILE FILTER: one value from a JSON file.
jget() {
	jq -r "$2" "$1"
}

# only_trace PATTERN: the single file matching a glob, or fail.
only_trace() {
	set -- $1
	[ $# -eq 1 ] && [ -f "$1" ] || fail "expected exactly one trace, found: $*"
	echo "$1"
}
