#!/bin/sh
# SPDX-License-Identifier: MIT
# Where traces go: pattern expansion (%h %p %r %%), the default name in the working directory,
# mode 0600; and where they must not: an unwritable directory, an existing file, a symlink,
# a disk that fills up mid-run.
# In those cases the program's output and exit code are unchanged and the shim warns once.
. "$(dirname "$0")/lib.sh"

host=$(hostname)
run_plain "$WORK/plain.txt" direct

# Pattern expansion, rank from RANK.
RANK=3 run_shim "$WORK/p.txt" "$WORK/t-%h-%p-%r-%%.trace" direct
set -- "$WORK"/t-"$host"-*-3-%.trace
[ -f "$1" ] || fail "pattern not expanded: $(ls "$WORK")"
expect "rank in header" "$("$GPUSHIM_BIN" info --format json "$1" | jq -r .rank)" 3

# Default name, in the working directory.
(cd "$WORK" && LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct >/dev/null)
set -- "$WORK"/gpushim-"$host"-*.trace
[ -f "$1" ] || fail "no default-named trace in the working directory"
expect "mode" "$(stat -c %a "$1")" 600

# Unwritable: missing directory.
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/missing/dir/x.trace" "$FAKE_CLIENT" direct \
	>"$WORK/u.txt" 2>"$WORK/u.err" && rc=0 || rc=$?
expect "exit code, unwritable" "$rc" 0
cmp "$WORK/plain.txt" "$WORK/u.txt" || fail "output changed when the trace cannot be written"
expect "warnings, unwritable" "$(grep -c '^gpushim\[' "$WORK/u.err")" 1
grep -q "cannot create trace" "$WORK/u.err" || fail "warning does not say why: $(cat "$WORK/u.err")"

# An existing file is never overwritten.
printf 'keep me' >"$WORK/existing.trace"
GPUSHIM_OUTPUT="$WORK/existing.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct \
	>"$WORK/e.txt" 2>"$WORK/e.err"
cmp "$WORK/plain.txt" "$WORK/e.txt" || fail "output changed with an existing trace file"
expect "existing file" "$(cat "$WORK/existing.trace")" "keep me"
grep -q "File exists" "$WORK/e.err" || fail "no warning for an existing file"

# A symlink is never followed.
ln -s "$WORK/target.trace" "$WORK/link.trace"
GPUSHIM_OUTPUT="$WORK/link.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct \
	>"$WORK/l.txt" 2>"$WORK/l.err"
cmp "$WORK/plain.txt" "$WORK/l.txt" || fail "output changed with a symlink at the output path"
[ -e "$WORK/target.trace" ] && fail "the symlink was followed"
# The disk fills up mid-run (here a file-size limit: writes fail with EFBIG, and SIGXFSZ must
# not kill the program): one warning, same output and exit code, what was written readable.
(ulimit -f 2 && GPUSHIM_OUTPUT="$WORK/full.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" \
	steps 20000 0 >"$WORK/full.txt" 2>"$WORK/full.err") && rc=0 || rc=$?
expect "exit code, disk full" "$rc" 0
run_plain "$WORK/full-plain.txt" steps 20000 0
cmp "$WORK/full-plain.txt" "$WORK/full.txt" || fail "output changed when the disk is full"
expect "warnings, disk full" "$(grep -c '^gpushim\[' "$WORK/full.err")" 1
grep -q "cannot write trace" "$WORK/full.err" || fail "disk full: warning does not say why"
"$GPUSHIM_BIN" info "$WORK/full.trace" >/dev/null || fail "disk full: what was written is unreadable"
echo "ok: output paths"
