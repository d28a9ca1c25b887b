#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every input in tests/fuzz/regressions (inputs that once crashed or hung something) and every
# seed, through report (text, JSON and HTML), info, dump and export (every format): exit 0 or 1
# within 10 s, and on
# 1 a message - never a crash, a hang or a silent failure. Runs in every build, the sanitizer
# builds included.
. "$(dirname "$0")/../e2e/lib.sh"
n=0
tables="export --format csv -o $WORK/csv"
"$GPUSHIM_BIN" export --help | grep -q 'not in this build' || tables="$tables|export --format sqlite -o $WORK/db"
for f in "$SOURCE_ROOT"/tests/fuzz/regressions/* "$SOURCE_ROOT"/tests/fuzz/seeds/*; do
	[ -f "$f" ] || continue
	IFS='|' read -ra more <<<"$tables"
	for c in "report" "report --format json" "report --format html" "info" "dump --format jsonl" \
		"export --format chrome" "export --format perfetto" "${more[@]}"; do
		# shellcheck disable=SC2086 # the command's words
		timeout 10 "$GPUSHIM_BIN" $c "$f" >/dev/null 2>"$WORK/err" && rc=0 || rc=$?
		case $rc in
		0) ;;
		1) grep -q 'gpushim:' "$WORK/err" || fail "$c $(basename "$f") exited 1 silently" ;;
		*) fail "$c $(basename "$f") exited $rc: $(head -c 400 "$WORK/err")" ;;
		esac
	done
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no inputs"
echo "fuzz regressions: $n inputs"
