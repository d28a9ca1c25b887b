#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Golden tests: the exact output of report, diff and export on committed H200 traces
# (tests/golden/cases lists them), so any change of output is seen and reviewed. The exit code
# is part of the output. scripts/update_golden.sh rewrites the files after an intended change.
. "$(dirname "$0")/lib.sh"
cd "$SOURCE_ROOT"
n=0
while IFS=$'\t' read -r name args; do
	case $name in
	""|\#*) continue ;;
	esac
	set +e
	# shellcheck disable=SC2086 # the arguments are words
	"$GPUSHIM_BIN" $args >"$WORK/out" 2>&1
	echo "exit $?" >>"$WORK/out"
	set -e
	diff -u "tests/golden/$name" "$WORK/out" >"$WORK/diff" ||
		fail "$name differs from tests/golden/$name:
$(head -40 "$WORK/diff")"
	n=$((n + 1))
done <tests/golden/cases
[ "$n" -gt 0 ] || fail "no golden cases"
echo "golden: $n outputs identical"
