#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Traces no shim writes (tests/unit/hostile_trace.c). A decompression bomb - 40 chunks of 16 MiB
# of launch runs in 65 KB, 335 M launches - is refused at its first chunk header by every
# command: exit 1 and an error naming the file, the offset and the ratio, within a 256 MiB
# address space. A trace whose every string holds terminal controls (window title, color, CSI
# as C1) reaches no terminal raw: text output cleans them, JSON escapes them, UTF-8 text stays;
# a file name with controls is cleaned on stdout and stderr alike.
. "$(dirname "$0")/lib.sh"
G=$GPUSHIM_BIN

# The sanitizers' runtimes reserve more address space at start than the cap allows.
capped=1
if ldd "$G" | grep -q 'lib[at]san' || nm "$G" 2>/dev/null | grep -q __asan_init; then
	capped=0
fi

# run OUT ERR CMD...: the command's exit code, under the cap and a 10 s guard (never hang).
run() {
	out=$1 err=$2
	shift 2
	(
		[ "$capped" = 0 ] || ulimit -v 262144
		exec timeout 10 "$@"
	) >"$out" 2>"$err" && return 0 || return $?
}

# ---- Decompression bombs ----

"$HOSTILE_TRACE" bomb "$WORK/bomb.trace" 40
size=$(stat -c %s "$WORK/bomb.trace")
[ "$size" -lt 80000 ] || fail "the bomb is $size bytes"
for c in "report" "report --format json" "info" "info --format json" "dump" "dump --format jsonl" \
	"export --format chrome" "whatif"; do
	# shellcheck disable=SC2086 # the command's words
	run "$WORK/out" "$WORK/err" "$G" $c "$WORK/bomb.trace" && rc=0 || rc=$?
	expect "$c bomb: exit" "$rc" 1
	grep -q "^gpushim: $WORK/bomb.trace: offset 0x60: chunk 0: 16775304 record bytes from [0-9]* compressed, [0-9]*:1 (the limit is 1024:1): a decompression bomb$" "$WORK/err" ||
		fail "$c bomb: $(head -c 400 "$WORK/err")"
done
run "$WORK/out" "$WORK/err" "$G" diff "$WORK/bomb.trace" "$WORK/bomb.trace" && rc=0 || rc=$?
[ "$rc" = 1 ] && grep -q "decompression bomb" "$WORK/err" || fail "diff bomb: exit $rc: $(cat "$WORK/err")"

# ---- Terminal controls in every string ----

"$HOSTILE_TRACE" escapes "$WORK/esc.trace"
# The escapes' file name, with a window title of its own (a glob may hand any name to gpushim).
ctl="$WORK/x$(printf '\033]0;PATH\007')y.trace"
cp "$WORK/esc.trace" "$ctl"
head -c $(($(stat -c %s "$WORK/esc.trace") - 5)) "$WORK/esc.trace" >"$WORK/cut.trace"
cp "$WORK/cut.trace" "$ctl.cut"

# only_printable NAME FILE: nothing but printable ASCII, newlines and the bytes of "é".
only_printable() {
	left=$(LC_ALL=C tr -d '\n\040-\176\303\251' <"$2" | od -An -c | head -3)
	[ -z "$left" ] || fail "$1 lets through: $left"
}

n=0
for c in "info" "report" "report --no-header" "dump" "info --format json" "report --format json" \
	"dump --format jsonl" "export --format chrome"; do
	for t in "$WORK/esc.trace" "$ctl" "$ctl.cut"; do
		# shellcheck disable=SC2086 # the command's words
		run "$WORK/out" "$WORK/err" "$G" $c "$t" || fail "$c: exit $?: $(cat -v "$WORK/err")"
		only_printable "$c" "$WORK/out"
		only_printable "$c (stderr)" "$WORK/err"
		n=$((n + 1))
	done
done
# whatif replays only traces with GPU timestamps: it says why not, cleaned like the rest.
for t in "$WORK/esc.trace" "$ctl" "$ctl.cut"; do
	run "$WORK/out" "$WORK/err" "$G" whatif "$t" && rc=0 || rc=$?
	[ "$rc" -le 1 ] || fail "whatif: exit $rc: $(cat -v "$WORK/err")"
	only_printable "whatif" "$WORK/out"
	only_printable "whatif (stderr)" "$WORK/err"
done
run "$WORK/out" "$WORK/err" "$G" report "$ctl" "$WORK/esc.trace" || fail "two traces: exit $?"
only_printable "report of two traces" "$WORK/out"
for f in text json; do
	run "$WORK/out" "$WORK/err" "$G" diff --format $f "$ctl" "$WORK/esc.trace" ||
		fail "diff: exit $?: $(cat -v "$WORK/err")"
	only_printable "diff --format $f" "$WORK/out"
done
run "$WORK/out" "$WORK/err" "$G" dump "$WORK/bomb.trace" || true
only_printable "dump (stderr)" "$WORK/err"

# Cleaned, not dropped: every string is there with '?' for each control, "é" kept as UTF-8.
"$G" info "$ctl" >"$WORK/info.txt"
"$G" report "$ctl" >"$WORK/report.txt"
"$G" dump "$ctl" >"$WORK/dump.txt"
for tag in SHIM HOST CMD DEVICE NOTE SIGNAL; do
	grep -qF "?]0;$tag??[31m?2J?2J" "$WORK/info.txt" || fail "info lacks $tag: $(cat "$WORK/info.txt")"
done
for tag in SHIM HOST CMD DEVICE SIGNAL API ALLOC KERNEL; do
	grep -qF "?]0;$tag??[31m?2J?2J" "$WORK/report.txt" ||
		fail "report lacks $tag: $(cat "$WORK/report.txt")"
done
for tag in SHIM HOST CMD API; do
	grep -qF "?]0;$tag??[31m?2J?2J" "$WORK/dump.txt" || fail "dump lacks $tag: $(head -5 "$WORK/dump.txt")"
done
grep -qF "x?]0;PATH?y.trace" "$WORK/info.txt" || fail "info lacks the path: $(head -1 "$WORK/info.txt")"
grep -q "host hé?]0;HOST?" "$WORK/info.txt" || fail "info: $(grep host "$WORK/info.txt")"
"$G" report --format json "$ctl" | jq -e '.trace.host == "h\u00c3\u00a9\u001b]0;HOST\u0007\u001b[31m\u00c2\u009b2J\u009b2J"' >/dev/null ||
	fail "JSON host: $("$G" report --format json "$ctl" | jq .trace.host)"
echo "ok: a bomb refused by every command; $n outputs and diff free of terminal controls"
