#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Traces no shim writes (tests/unit/hostile_trace.c). A decompression bomb - 40 chunks of 16 MiB
# of launch runs in 65 KB, 335 M launches - is refused at its first chunk header by every
# command: exit 1 (diff: 3) and an error naming the file, the offset and the ratio, within a
# 256 MiB address space. A trace whose every string holds terminal controls (window title,
# color, CSI as C1) reaches no terminal raw: text output cleans them, JSON escapes them (bytes
# that are not UTF-8 as U+FFFD), UTF-8 text stays; a file name with controls is cleaned on
# stdout and stderr alike. whatif --export replays
# damaged copies of an H200 trace into a timeline whose slices nest, or refuses them (exit 1).
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
	"export --format chrome" "export --format perfetto" "export --format csv -o $WORK/bomb.csv" \
	"whatif" "whatif --no-sync=cuStreamSynchronize --export $WORK/bomb.json"; do
	# shellcheck disable=SC2086 # the command's words
	run "$WORK/out" "$WORK/err" "$G" $c "$WORK/bomb.trace" && rc=0 || rc=$?
	expect "$c bomb: exit" "$rc" 1
	grep -q "^gpushim: $WORK/bomb.trace: offset 0x60: chunk 0: 16775304 record bytes from [0-9]* compressed, [0-9]*:1 (the limit is 1024:1): a decompression bomb$" "$WORK/err" ||
		fail "$c bomb: $(head -c 400 "$WORK/err")"
done
run "$WORK/out" "$WORK/err" "$G" diff "$WORK/bomb.trace" "$WORK/bomb.trace" && rc=0 || rc=$?
# diff could not compare: 3, not the 1 of a regression.
[ "$rc" = 3 ] && grep -q "decompression bomb" "$WORK/err" || fail "diff bomb: exit $rc: $(cat "$WORK/err")"
[ ! -e "$WORK/bomb.json" ] || fail "whatif --export wrote a timeline of the bomb"

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
# whatif replays only traces with GPU timestamps: it says why not, cleaned like the rest. Its
# timeline escapes the trace's strings (valid JSON); a site asked with controls in it is no
# site (exit 2), cleaned in the message.
for t in "$WORK/esc.trace" "$ctl" "$ctl.cut"; do
	rm -f "$WORK/esc.json"
	run "$WORK/out" "$WORK/err" "$G" whatif --export "$WORK/esc.json" "$t" && rc=0 || rc=$?
	[ "$rc" -le 1 ] || fail "whatif: exit $rc: $(cat -v "$WORK/err")"
	only_printable "whatif" "$WORK/out"
	only_printable "whatif (stderr)" "$WORK/err"
	[ "$rc" = 1 ] || jq -e '.traceEvents | map(select(.ph == "X")) | length > 0' "$WORK/esc.json" >/dev/null ||
		fail "whatif --export: $(head -c 400 "$WORK/esc.json")"
	run "$WORK/out" "$WORK/err" "$G" whatif --no-sync="cuSync$(printf '\033]0;SITE\007') after x" "$t" &&
		rc=0 || rc=$?
	[ "$rc" = 1 ] || { expect "whatif --no-sync=CONTROLS: exit" "$rc" 2 &&
		grep -q "^gpushim: whatif: --no-sync=cuSync?]0;SITE? after x: no such host_sync site" "$WORK/err"; } ||
		fail "whatif --no-sync=CONTROLS: $(cat -v "$WORK/err")"
	only_printable "whatif --no-sync=CONTROLS (stderr)" "$WORK/err"
done
"$G" whatif --export "$WORK/esc.json" "$WORK/esc.trace" >/dev/null
expect "whatif --export: the kernel's name escaped" \
	"$(jq -r '[.traceEvents[] | select(.cat == "kernel")][0].name' "$WORK/esc.json")" \
	"$(printf '_Z6kernelv\033]0;KERNEL\007\033[31m\302\2332J\357\277\2752J')"

# whatif on damaged copies of an H200 trace (cut short, a byte changed) and on the fuzz
# regressions and seeds: it replays what it reads (exit 0, and its timeline is JSON whose
# slices nest or follow on each track) or says why not (exit 1) - never a crash, a hang, a
# usage error or a silent failure.
good=$SOURCE_ROOT/tests/traces/h200/host_sync.trace
size=$(stat -c %s "$good")
replayed=0 refused=0 i=0
for f in $(seq 1 40) "$SOURCE_ROOT"/tests/fuzz/regressions/* "$SOURCE_ROOT"/tests/fuzz/seeds/*; do
	i=$((i + 1))
	if [ "$i" -le 16 ]; then
		head -c $((size * i / 17)) "$good" >"$WORK/damaged.trace"
	elif [ "$i" -le 40 ]; then
		cp "$good" "$WORK/damaged.trace"
		printf '\132' | dd of="$WORK/damaged.trace" bs=1 seek=$((size * (i - 16) / 25)) conv=notrunc 2>/dev/null
	else
		cp "$f" "$WORK/damaged.trace"
	fi
	rm -f "$WORK/damaged.json"
	run "$WORK/out" "$WORK/err" "$G" whatif --no-sync --export "$WORK/damaged.json" "$WORK/damaged.trace" &&
		rc=0 || rc=$?
	case $rc in
	0)
		expect "whatif damaged $i: nested" "$(jq -f "$SOURCE_ROOT/tests/e2e/nest.jq" "$WORK/damaged.json")" 0
		replayed=$((replayed + 1)) ;;
	1)
		grep -q '^gpushim: ' "$WORK/err" || fail "whatif damaged $i: exit 1 silently"
		refused=$((refused + 1)) ;;
	*) fail "whatif damaged $i: exit $rc: $(head -c 400 "$WORK/err")" ;;
	esac
done
[ "$replayed" -gt 0 ] && [ "$refused" -gt 0 ] || fail "whatif damaged: $replayed replayed, $refused refused"
echo "whatif on 40 damaged copies of host_sync.trace and $((i - 40)) fuzz inputs: $replayed replayed, $refused refused"
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
# JSON: "é" as UTF-8, controls escaped (CSI as UTF-8 is the character U+009B), the lone 0x9b
# that is no UTF-8 replaced by U+FFFD.
"$G" report --format json "$ctl" >"$WORK/report.json"
jq -e '.trace.host == "h\u00e9\u001b]0;HOST\u0007\u001b[31m\u009b2J\ufffd2J"' "$WORK/report.json" >/dev/null ||
	fail "JSON host: $(jq .trace.host "$WORK/report.json")"
grep -qF '"host": "hé\u001b]0;HOST\u0007\u001b[31m\u009b2J\ufffd2J"' "$WORK/report.json" ||
	fail "JSON host, as written: $(grep '"host"' "$WORK/report.json")"
# ---- Call stacks no shim writes ----
# Frames in a FIFO (the source line and symbol readers must not open it for reading: they
# would block), in /dev/zero at offset 2^64 - 1, at line INT32_MAX; stacks without frames, out
# of order, undefined; CALL_STACKs of no call: every command finishes, the frames as recorded.
mkfifo "$WORK/fifo.py"
"$HOSTILE_TRACE" stacks "$WORK/stacks.trace" "$WORK/fifo.py"
for c in "report" "report --format json" "report --format html" "dump --format jsonl" \
	"export --format chrome" "export --format perfetto" "export --format csv -o $WORK/st.csv" \
	"whatif"; do
	# shellcheck disable=SC2086 # the command's words
	run "$WORK/out" "$WORK/err" "$G" $c "$WORK/stacks.trace" && rc=0 || rc=$?
	expect "$c stacks: exit" "$rc" 0
done
run "$WORK/out" "$WORK/err" "$G" diff "$WORK/stacks.trace" "$WORK/stacks.trace" && rc=0 || rc=$?
expect "diff stacks: exit" "$rc" 0
run "$WORK/st.json" "$WORK/err" "$G" report --format json "$WORK/stacks.trace" || fail "report"
expect "stacks: the Python place, its source not read" \
	"$(jq -r '[.attribution[].evidence.sites[] | select(.where.language == "python") |
		"\(.where.line) \(.where.source) \(.python | map(.line) | join(","))"] | unique |
		join(";")' "$WORK/st.json")" "1 null 1,2147483647"
# taken: stacks 1-3 and the CALL_STACKs of the allocation and three launches; not: stack 7,
# the CALL_STACK without a stack and the one of no call (the one naming stack 999 is taken)
run "$WORK/st.info" "$WORK/err" "$G" info --format json "$WORK/stacks.trace" || fail "info"
expect "stacks: info" "$(jq -c .stacks "$WORK/st.info")" '{"defined":3,"calls":5,"not_taken":3}'
expect "stacks: sites without a stack or with an undefined one: no place" \
	"$(jq -r '[.attribution[].evidence.sites[] | select(.where == null)] | length > 0' \
		"$WORK/st.json")" true

echo "ok: a bomb refused by every command; $n outputs and diff free of terminal controls; hostile stacks read"
