#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile input: truncated copies of a real trace give partial results (exit 0, complete
# false) or a clear error; bit-flipped copies and garbage give results or an error naming the
# byte offset - never a crash or a hang, in report, info and dump alike.
. "$(dirname "$0")/lib.sh"

run_shim "$WORK/out.txt" "$WORK/good.trace" direct
size=$(stat -c %s "$WORK/good.trace")

# check_exit CMD...: exit code 0 or 1 within 10 s; on 1, stderr names an offset or the file.
check_exit() {
	timeout 10 "$@" >/dev/null 2>"$WORK/err" && rc=0 || rc=$?
	case $rc in
	0) ;;
	1) grep -q 'gpushim:' "$WORK/err" || fail "$* exited 1 silently" ;;
	*) fail "$* exited $rc: $(cat "$WORK/err")" ;;
	esac
}

cut=0
while [ $cut -lt "$size" ]; do
	head -c $cut "$WORK/good.trace" >"$WORK/cut.trace"
	for c in report info dump; do
		check_exit "$GPUSHIM_BIN" $c "$WORK/cut.trace"
	done
	cut=$((cut + 97))
done
head -c $((size - 5)) "$WORK/good.trace" >"$WORK/cut.trace"
"$GPUSHIM_BIN" report --format json "$WORK/cut.trace" >"$WORK/cut.json" 2>/dev/null
expect "truncated report" "$(jget "$WORK/cut.json" .trace.complete)" false

n=0
while [ $n -lt 200 ]; do
	cp "$WORK/good.trace" "$WORK/flip.trace"
	pos=$(( ($(od -An -N4 -tu4 /dev/urandom) % size) ))
	printf "\\$(printf %o $(( $(od -An -N1 -tu1 /dev/urandom) | 1 )))" |
		dd of="$WORK/flip.trace" bs=1 seek=$pos conv=notrunc 2>/dev/null
	for c in report info dump; do
		check_exit "$GPUSHIM_BIN" $c "$WORK/flip.trace"
	done
	n=$((n + 1))
done

head -c 4096 /dev/urandom >"$WORK/garbage.trace"
check_exit "$GPUSHIM_BIN" report "$WORK/garbage.trace"
grep -q "not a gpushim trace" "$WORK/err" || fail "garbage: $(cat "$WORK/err")"
: >"$WORK/empty.trace"
check_exit "$GPUSHIM_BIN" report "$WORK/empty.trace"
echo "ok: truncated, flipped and garbage traces handled"
