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

# An existing file is never overwritten: the trace takes the next free name, whatever the
# pattern (a taken name never means no trace), and says so.
printf 'keep me' >"$WORK/existing.trace"
GPUSHIM_OUTPUT="$WORK/existing.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct \
	>"$WORK/e.txt" 2>"$WORK/e.err"
cmp "$WORK/plain.txt" "$WORK/e.txt" || fail "output changed with an existing trace file"
expect "existing file" "$(cat "$WORK/existing.trace")" "keep me"
grep -q "existing.trace exists (never overwritten); writing $WORK/existing-1.trace" "$WORK/e.err" ||
	fail "no warning for an existing file: $(cat "$WORK/e.err")"
"$GPUSHIM_BIN" report --format json "$WORK/existing-1.trace" >"$WORK/e.json"
expect "existing file: the trace beside it" "$(jget "$WORK/e.json" '"\(.trace.complete) \(.counts.launches)"')" "true 14"
GPUSHIM_OUTPUT="$WORK/existing.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct >/dev/null 2>&1
[ -f "$WORK/existing-2.trace" ] || fail "a second run did not take the next free name: $(ls "$WORK")"

# torchrun: the launcher has no rank but may initialize CUDA; it must never take a rank's name.
# %r without a rank expands to norank-PID; a rank's name, taken anyway, falls back as above.
(unset RANK LOCAL_RANK SLURM_PROCID OMPI_COMM_WORLD_RANK
 run_shim "$WORK/r.txt" "$WORK/run-%r.trace" direct)
set -- "$WORK"/run-norank-*.trace
[ -f "$1" ] || fail "%r without a rank: $(ls "$WORK")"
expect "%r without a rank: header" "$("$GPUSHIM_BIN" info --format json "$1" | jq -r .rank)" -1
RANK=0 run_shim "$WORK/r0.txt" "$WORK/run-%r.trace" direct
RANK=0 run_shim "$WORK/r0b.txt" "$WORK/run-%r.trace" direct 2>/dev/null
[ -f "$WORK/run-0.trace" ] && [ -f "$WORK/run-0-1.trace" ] ||
	fail "rank 0 twice: $(ls "$WORK")"

# An empty GPUSHIM_OUTPUT is not valid: one warning, the default name (it crashed once).
mkdir "$WORK/empty"
(cd "$WORK/empty" && GPUSHIM_OUTPUT= LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct \
	>"$WORK/empty.txt" 2>"$WORK/empty.err") && rc=0 || rc=$?
expect "empty GPUSHIM_OUTPUT: exit code" "$rc" 0
cmp "$WORK/plain.txt" "$WORK/empty.txt" || fail "empty GPUSHIM_OUTPUT: output changed"
grep -q "not valid, the defaults used: GPUSHIM_OUTPUT=$" "$WORK/empty.err" ||
	fail "empty GPUSHIM_OUTPUT: no warning: $(cat "$WORK/empty.err")"
set -- "$WORK"/empty/gpushim-"$host"-*.trace
[ -f "$1" ] || fail "empty GPUSHIM_OUTPUT: no default-named trace: $(ls "$WORK/empty")"
# A pattern naming a directory, with or without the slash: the default name inside it.
mkdir "$WORK/dirout" "$WORK/dirout2"
for d in "$WORK/dirout" "$WORK/dirout2/"; do
	GPUSHIM_CUPTI=0 GPUSHIM_OUTPUT="$d" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct \
		>/dev/null 2>"$WORK/dir.err"
	expect "pattern naming a directory ($d): warnings" "$(grep -c '^gpushim\[' "$WORK/dir.err")" 0
	set -- "${d%/}"/gpushim-"$host"-*.trace
	[ -f "$1" ] || fail "pattern naming a directory ($d): no trace inside it: $(ls "$WORK")"
done

# A run whose trace has no GPU timestamps says so at exit, once, with why (here: the fake
# driver has no CUPTI); asked for none (GPUSHIM_CUPTI=0), or in host mode, it does not.
# `gpushim run` also says where the trace went (GPUSHIM_SUMMARY), which a plain preload does not.
"$GPUSHIM_BIN" run -o "$WORK/sum.trace" -- "$FAKE_CLIENT" direct >/dev/null 2>"$WORK/sum.err"
expect "run: the warning without GPU timestamps" \
	"$(grep -c "^gpushim\[[0-9]*\]: no GPU timestamps in $WORK/sum.trace: ." "$WORK/sum.err")" 1
expect "run: where the trace went" \
	"$(grep -c "^gpushim\[[0-9]*\]: trace $WORK/sum.trace: [0-9.]* kB, 0 GPU records$" "$WORK/sum.err")" 1
GPUSHIM_OUTPUT="$WORK/nosum.trace" LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct >/dev/null \
	2>"$WORK/nosum.err"
expect "preload: no summary line" "$(grep -c ": trace $WORK/nosum.trace" "$WORK/nosum.err")" 0
"$GPUSHIM_BIN" run --no-cupti -o "$WORK/nc.trace" -- "$FAKE_CLIENT" direct >/dev/null 2>"$WORK/nc.err"
"$GPUSHIM_BIN" run --mode host -o "$WORK/host.trace" -- "$FAKE_CLIENT" direct >/dev/null \
	2>>"$WORK/nc.err"
expect "run --no-cupti, --mode host: no warning" "$(grep -c "no GPU timestamps" "$WORK/nc.err")" 0
expect "run --no-cupti, --mode host: their summaries" "$(grep -c ": trace $WORK/" "$WORK/nc.err")" 2
(use_fake_cupti
"$GPUSHIM_BIN" run -o "$WORK/gpu.trace" -- "$FAKE_CLIENT" paced 10 10 >/dev/null 2>"$WORK/gpu.err")
expect "run with CUPTI: no warning" "$(grep -c "no GPU timestamps" "$WORK/gpu.err")" 0
grep -q ": trace $WORK/gpu.trace: [0-9.]* kB, [1-9][0-9]* GPU records$" "$WORK/gpu.err" ||
	fail "run with CUPTI: summary: $(cat "$WORK/gpu.err")"

# Every invalid setting is named (not only the first four), in one message, so that the log's
# budget of warnings is left for the run: here the output that cannot be created.
GPUSHIM_BUFFER_KB=x GPUSHIM_FLUSH_MS=x GPUSHIM_ZSTD_LEVEL=x GPUSHIM_LOG_LEVEL=x \
GPUSHIM_SIGNALS=x GPUSHIM_PM=x GPUSHIM_TSC=x GPUSHIM_CUPTI_BUFFER_KB=x GPUSHIM_DISABLE=x \
GPUSHIM_PM_INTERVAL_US=x GPUSHIM_OUTPUT="$WORK/missing/inv.trace" \
	LD_PRELOAD="$GPUSHIM_SHIM" "$FAKE_CLIENT" direct >/dev/null 2>"$WORK/inv.err"
for v in BUFFER_KB FLUSH_MS ZSTD_LEVEL LOG_LEVEL SIGNALS PM TSC CUPTI_BUFFER_KB DISABLE PM_INTERVAL_US; do
	grep -q "not valid, the defaults used: .*GPUSHIM_$v=x" "$WORK/inv.err" ||
		fail "invalid settings: GPUSHIM_$v not named: $(cat "$WORK/inv.err")"
done
expect "invalid settings: warnings" "$(grep -c '^gpushim\[' "$WORK/inv.err")" 2
grep -q "cannot create trace" "$WORK/inv.err" || fail "invalid settings: the run's warning lost"

# GPUSHIM_LOG is never followed through a symlink: the messages go to stderr instead.
ln -s "$WORK/log-target" "$WORK/log-link"
GPUSHIM_LOG="$WORK/log-link" GPUSHIM_BUFFER_KB=x run_shim "$WORK/ll.txt" "$WORK/ll.trace" direct \
	2>"$WORK/ll.err"
[ -e "$WORK/log-target" ] && fail "GPUSHIM_LOG followed a symlink"
grep -q "GPUSHIM_BUFFER_KB=x" "$WORK/ll.err" || fail "GPUSHIM_LOG symlink: message lost"
GPUSHIM_LOG="$WORK/shim.log" GPUSHIM_BUFFER_KB=x run_shim "$WORK/lg.txt" "$WORK/lg.trace" direct
grep -q "GPUSHIM_BUFFER_KB=x" "$WORK/shim.log" || fail "GPUSHIM_LOG: no message"

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
