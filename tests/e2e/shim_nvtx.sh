#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim as NVTX's injection library (shim/nvtx.c), with a program annotated through NVTX v3's
# headers (tests/fake_cuda/nvtx_client.c): every range, mark, domain and registered string in
# the trace as `gpushim dump` shows it, nesting balanced, start/end ranges across threads, a
# start-up annotated before CUDA; then bad input - unbalanced pops, deep nesting, long and
# broken names, foreign handles, a million ranges, 100,000 names, 8 threads at once, a signal
# handler, no CUDA at all, calls after the trace ended (fork: `shim_nvtx.sh fork`) - and the
# variable's handling (another tool's, GPUSHIM_NVTX=0, gpushim run, a process that did not
# preload the shim). The program's output and exit code never change.
. "$(dirname "$0")/lib.sh"
cd "$WORK"

# run_nvtx NAME MODE [ARGS]: the client alone and under the shim (trace NAME-PID.trace);
# outputs and exit codes must match. Extra environment for both runs comes from the caller.
run_nvtx() {
	name=$1
	shift
	rc_plain=0 rc=0
	"$NVTX_CLIENT" "$@" >"$name.plain" 2>"$name.plain_err" || rc_plain=$?
	LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/$name-%p.trace" "$NVTX_CLIENT" "$@" \
		>"$name.out" 2>"$name.err" || rc=$?
	expect "$name: exit code" "$rc" "$rc_plain"
	cmp "$name.plain" "$name.out" || fail "$name: output changed by the shim: $(cat "$name.out")"
}

# dump_of TRACE OUT: the trace as JSON lines.
dump_of() {
	"$GPUSHIM_BIN" dump --format jsonl "$1" >"$2" || fail "dump of $1 failed"
}

# q DUMP FILTER: a jq filter over all the dump's records at once (-s). The dump writes strings
# as UTF-8, each byte that is not UTF-8 as U+FFFD; `shown` spells each character past ASCII as
# its UTF-8 bytes, \xNN.
q() {
	jq -rs 'def shown: explode | map(if . >= 128 then [.] | implode | @uri | gsub("%"; "\\x") |
		ascii_downcase else [.] | implode end) | join("");
		'"$2" "$1"
}

# tally TRACE: one pass over a big trace's text dump (jq takes seconds a million records),
# "COUNT KEY" a line: KEY is TYPE/NAME/FLAGS for NVTX records (NAME the text of name=ID(TEXT)),
# end/NR_LOST for END, the type for others. got TALLY KEY: its count (0 if none).
tally() {
	"$GPUSHIM_BIN" dump "$1" | awk '
	/^nvtx_/ {
		name = ""; flags = ""
		if (match($0, / name=[0-9]+\(/)) {
			rest = substr($0, RSTART + RLENGTH)
			name = substr(rest, 1, index(rest, ") category=") - 1)
		}
		if (match($0, / flags=0x[0-9a-f]+$/))
			flags = substr($0, RSTART + 7)
		print $1 "/" name "/" flags
		next
	}
	/^end / { match($0, /nr_lost=[0-9]+/); print "end/" substr($0, RSTART + 8, RLENGTH - 8); next }
	{ print $1 }' | sort | uniq -c
}
got() {
	awk -v k="$2" '{ c = $1; sub(/^ *[0-9]+ /, ""); if ($0 == k) n += c } END { print n + 0 }' "$1"
}

# nvtx_count DUMP TYPE [SELECT]: records of TYPE (nvtx_push, ...) that satisfy SELECT.
nvtx_count() {
	q "$1" "[.[] | select(.type == \"$2\") | select(${3:-true})] | length"
}

# fork (`shim_nvtx.sh fork`, its own test in suite 'fork', which the sanitizer builds leave
# out): the child's trace defines the parent's domain again and names its registered string.
if [ "${1:-}" = fork ]; then
	run_nvtx fork fork
	set -- "$WORK"/fork-*.trace
	[ $# -eq 2 ] || fail "fork: expected two traces, found $*"
	for f in "$@"; do
		dump_of "$f" f.jsonl
		if [ "$(nvtx_count f.jsonl nvtx_mark)" = 1 ]; then
			expect "fork child: domain" "$(q f.jsonl '[.[] | select(.type == "nvtx_domain") | "\(.id)=\(.name_str)"] | join(" ")')" "1=forked"
			expect "fork child: range" "$(q f.jsonl '[.[] | select(.type == "nvtx_push") | "\(.domain)/\(.name_str)/\(.category)"] | join(" ")')" "1/child work/3"
			expect "fork child: pops (its own, then the parent's range)" "$(q f.jsonl '[.[] | select(.type == "nvtx_pop") | .id] | join(" ")')" "1 0"
		else
			expect "fork parent: range" "$(q f.jsonl '[.[] | select(.type == "nvtx_push" or .type == "nvtx_pop") | .type] | join(" ")')" "nvtx_push nvtx_pop"
		fi
	done
	echo "ok: NVTX across fork"
	exit 0
fi

# ---- The annotated program ----
run_nvtx main main
expect "main: output" "$(cat main.out)" "main: 20 steps, 120 launches"
t=$(only_trace "$WORK/main-*.trace")
dump_of "$t" main.jsonl
"$GPUSHIM_BIN" report --format json "$t" >main.json
expect "main: trace" "$(jget main.json '"\(.trace.complete) \(.counts.launches) \(.trace.lost_records)"')" "true 120 0"
expect "main: domains" "$(q main.jsonl '[.[] | select(.type == "nvtx_domain") | "\(.id)=\(.name_str)"] | join(" ")')" "1=trainer"
expect "main: step ranges" "$(nvtx_count main.jsonl nvtx_push '.domain == 0 and .name_str == "step"')" 20
expect "main: startup range" "$(nvtx_count main.jsonl nvtx_push '.domain == 0 and .name_str == "startup"')" 1
expect "main: forward" "$(nvtx_count main.jsonl nvtx_push '.domain == 1 and .name_str == "forward" and .category == 1 and .color == "0xff00ff00"')" 20
expect "main: backward" "$(nvtx_count main.jsonl nvtx_push '.domain == 1 and .name_str == "backward" and .category == 2')" 20
expect "main: pushes" "$(nvtx_count main.jsonl nvtx_push)" 61
expect "main: pops of domain 0" "$(nvtx_count main.jsonl nvtx_pop '.id == 0')" 21
expect "main: pops of domain 1" "$(nvtx_count main.jsonl nvtx_pop '.id == 1')" 40
expect "main: marks" "$(q main.jsonl '[.[] | select(.type == "nvtx_mark") | "\(.name_str | shown)/\(.category)/\(.color)/\(.flags)"] | sort | join(",")')" \
	'before cuda/0/0x0/0x0,colored mark/7/0xffff0000/0x0,marked/0/0x0/0x0,wide \xc3\xa9/0/0x0/0x2'
# The domain is defined before its first use, in file order.
expect "main: domain before use" "$(q main.jsonl '(map(.type == "nvtx_domain") | index(true)) < (map(.type == "nvtx_push" and .domain == 1) | index(true))')" true
# Nesting: per thread and domain, never below zero and back to zero at the end.
expect "main: nesting balanced" "$(q main.jsonl '
	[.[] | select(.type == "nvtx_push" or .type == "nvtx_pop")
	 | {k: "\(.tid)/\(if .type == "nvtx_push" then .domain else .id end)", d: (if .type == "nvtx_push" then 1 else -1 end)}]
	| group_by(.k) | map(reduce .[].d as $d ({n: 0, min: 0}; .n += $d | .min = ([.min, .n] | min)))
	| all(.n == 0 and .min == 0)')" true
# Steps nest the domain's ranges: each "step" push is followed by forward, pop, backward, pop, pop.
expect "main: step shape" "$(q main.jsonl '[.[] | select(.type == "nvtx_push" or .type == "nvtx_pop")
	| if .type == "nvtx_push" then .name_str else "pop\(.id)" end] | join(" ")' | grep -o 'step forward pop1 backward pop1 pop0' | wc -l)" 20
# Start/end: 3 ranges, each ended once; two ended on another thread than the one that began it.
expect "main: start/end" "$(q main.jsonl '
	([.[] | select(.type == "nvtx_start")] | map({key: (.id | tostring), value: .tid}) | from_entries) as $s
	| [.[] | select(.type == "nvtx_end")] | "\(length) \(map(select($s[.id | tostring] != null)) | length) \(map(select($s[.id | tostring] != .tid)) | length)"')" "3 3 2"
expect "main: start names" "$(q main.jsonl '[.[] | select(.type == "nvtx_start") | "\(.domain):\(.name_str)"] | sort | join(",")')" \
	"0:from thread,0:handoff,1:domain start"
# The start-up was annotated before CUDA existed: its range precedes cuInit.
expect "main: startup before cuInit" "$(q main.jsonl '
	([.[] | select(.type == "nvtx_push" and .name_str == "startup")][0].ts_ns) <
	([.[] | select(.type == "call" and .api == "cuInit")][0].ts_ns)')" true
expect "main: startup lasts the busy 150 ms" "$(q main.jsonl '
	([.[] | select(.type == "nvtx_pop" and .id == 0)][0].ts_ns - ([.[] | select(.type == "nvtx_push")][0].ts_ns)) >= 150000000')" true
# The analyzer: the 20 "step" ranges are the steps, after the 150 ms start-up; the range table
# of the steady state has each step's 6 launches, forward's 2 and backward's 1; the whole run's
# has the start-up range and the 3 start/end ranges, one ended on another thread (read back
# before its start: the threads' records come in blocks), each followed.
expect "main: steps" "$(jget main.json '"\(.steps.source) \(.steps.name) \(.steps.count) \(.steps.startup_ns >= 150000000)"')" "nvtx step 20 true"
expect "main: ranges of the steady state" "$(jget main.json '[.ranges[] | "\(.domain // "-")/\(.name):\(.launches / .count)"] | join(" ")')" "-/step:6 trainer/forward:2 trainer/backward:1"
expect "main: steady steps in the table" "$(jget main.json '(.ranges[] | select(.name == "step") | .count) == (.steps.count - .steps.warmup_steps)')" true
"$GPUSHIM_BIN" report --format json --whole "$t" >main_whole.json
expect "main: whole run's ranges" "$(jget main_whole.json '[.ranges[] | "\(.name)/\(.kind)/\(.count)"] | sort | join(" ")')" \
	"backward/push_pop/20 domain start/start_end/1 forward/push_pop/20 from thread/start_end/1 handoff/start_end/1 startup/push_pop/1 step/push_pop/20"
expect "main: all followed" "$(jget main_whole.json '.ranges_info | "\(.unmatched) \(.open_at_end) \(.unbalanced_pops) \(.not_kept)"')" "0 0 0 0"
"$GPUSHIM_BIN" report --by-range "$t" >main_ranges.txt
# The text table's step row: count, host time (a number and a unit), launches = 6 x count.
awk '$NF == "step" && $1 > 0 && $4 == 6 * $1 { ok = 1 } END { exit !ok }' main_ranges.txt ||
	fail "main: --by-range: $(cat main_ranges.txt)"

# ---- NVTX's return values: a tool's with the shim, NVTX's own without a tool ----
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/ret-%p.trace" "$NVTX_CLIENT" returns >ret.out
expect "returns under the shim" "$(cat ret.out)" "push 0 1 2
pop 2 1 0
unbalanced pop -1
domain push 0, default push 1, pops 1 0
start ids nonzero and distinct: yes
handles: domain set, string set"
"$NVTX_CLIENT" returns >ret.plain
expect "returns without a tool" "$(head -1 ret.plain)" "push -2 -2 -2"
# The variable inherited by a process that did not preload the shim: NVTX loads it, the shim
# declines (no trace could be written there), and NVTX stays a no-op.
NVTX_INJECTION64_PATH="$GPUSHIM_SHIM" "$NVTX_CLIENT" returns >ret.nopreload
cmp ret.plain ret.nopreload || fail "not preloaded: NVTX answered as a tool: $(cat ret.nopreload)"

# ---- Bad input ----
run_nvtx bad bad
expect "bad: output" "$(cat bad.out)" "bad: levels consistent"
t=$(only_trace "$WORK/bad-*.trace")
dump_of "$t" bad.jsonl
"$GPUSHIM_BIN" report --format json "$t" >bad.json
# The three calls with a handle NVTX never gave are the only records lost.
expect "bad: trace" "$(jget bad.json '"\(.trace.complete) \(.trace.lost_records)"')" "true 3"
expect "bad: pops (3 + 5000 + 2, and 2 of domain 1)" "$(nvtx_count bad.jsonl nvtx_pop '.id == 0') $(nvtx_count bad.jsonl nvtx_pop '.id == 1')" "5005 2"
expect "bad: pushes" "$(nvtx_count bad.jsonl nvtx_push)" 5002
expect "bad: deep" "$(nvtx_count bad.jsonl nvtx_push '.name_str == "deep"')" 5000
# The analyzer follows what it can and counts the rest: 5 pops with nothing pushed, the 64
# outer levels of the 5,000 kept and 4,936 past the depth followed, every push matched.
"$GPUSHIM_BIN" report --format json --whole "$t" >bad_whole.json
expect "bad: ranges followed" "$(jget bad_whole.json '.ranges_info | "\(.ranges) \(.unbalanced_pops) \(.too_deep) \(.not_kept) \(.open_at_end) \(.unmatched)"')" "5002 5 4936 4936 0 0"
expect "bad: deep kept" "$(jget bad_whole.json '.ranges[] | select(.name == "deep") | .count')" 64
# strlen of a STRING's text: its len field.
slen() {
	q bad.jsonl "([.[] | select(.type == \"string\") | {key: (.id | tostring), value: .len}] | from_entries) as \$l | [.[] | select($1) | \$l[.name | tostring]] | join(\",\")"
}
expect "bad: long name cut before the split character" "$(q bad.jsonl '[.[] | select(.type == "nvtx_push" and (.name_str // "" | startswith("aaa"))) | "\(.name_str | length)/\(.name_str | test("^a+$"))/\(.flags)"] | join(",")')" "255/true/0x1"
# JSON cannot hold them: U+FFFD each, and the string's length says that the 3 bytes were kept.
expect "bad: bytes that are not UTF-8 kept" "$(q bad.jsonl '[.[] | select(.type == "nvtx_mark" and (.name_str // "" | startswith("bad"))) | "\(.name_str | shown)/\(.flags)"] | join(",")')" 'bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(/0x0'
expect "bad: bytes that are not UTF-8 kept: the length" \
	"$(slen '.type == "nvtx_mark" and (.name_str // "" | startswith("bad"))')" 7
expect "bad: long wide name" "$(slen '.type == "nvtx_mark" and .flags == "0x3"')" 256
expect "bad: wide characters that are none" "$(q bad.jsonl '[.[] | select(.type == "nvtx_mark" and .flags == "0x2") | .name_str | shown] | join(",")')" '\xef\xbf\xbd\xef\xbf\xbdok'
expect "bad: no message (NULL, NULL attributes, size 0)" "$(nvtx_count bad.jsonl nvtx_mark '.name == 0 and .flags == "0x0" and .category == 0') $(nvtx_count bad.jsonl nvtx_push '.name == 0')" "3 1"
expect "bad: empty message" "$(slen '.type == "nvtx_mark" and .name != 0 and .name_str == ""')" 0
expect "bad: NULL registered string" "$(nvtx_count bad.jsonl nvtx_mark '.name == 0 and .flags == "0x4"')" 1
expect "bad: long domain name" "$(q bad.jsonl '[.[] | select(.type == "nvtx_domain") | "\(.id)/\(.name_str | length)"] | join(",")')" "1/3,2/256"

# A million ranges on one thread: what the ring could not hold is counted, nothing vanishes
# (the thread has exited, and its ring is freed, before the trace ends).
run_nvtx many many 1000000
"$GPUSHIM_BIN" info --format json "$(only_trace "$WORK/many-*.trace")" >many.json
expect "many: recorded + lost" "$(jget many.json '.record_types.nvtx_push + .record_types.nvtx_pop + .lost_records')" 2000000

# 100,000 different names: the first 4 MiB of them (75 bytes each: 55,924) named, the rest
# recorded without a name, and a note says so. A ring big enough to lose nothing.
GPUSHIM_BUFFER_KB=65536 run_nvtx names names 100000
t=$(only_trace "$WORK/names-*.trace")
tally "$t" >names.tally
expect "names: without a name" "$(got names.tally nvtx_push//0x4)" 44076
expect "names: named, each its own" "$(grep -c ' nvtx_push/name-[0-9]*/0x0$' names.tally)" 55924
expect "names: lost" "$(sed -n 's|^ *1 end/||p' names.tally)" 0
"$GPUSHIM_BIN" info --format json "$t" >names_info.json
jget names_info.json '.notes[] | select(.kind == "warning") | .text' | grep -q "^NVTX: more distinct range names" ||
	fail "names: no note"

# Eight threads at once, CUDA starting meanwhile: one domain for all of them (created by each),
# one registered string, every range recorded and balanced, nothing lost.
run_nvtx threads threads
dump_of "$(only_trace "$WORK/threads-*.trace")" threads.jsonl
expect "threads: domains" "$(q threads.jsonl '[.[] | select(.type == "nvtx_domain") | "\(.id)=\(.name_str)"] | join(" ")')" "1=shared"
expect "threads: ranges of the domain" "$(nvtx_count threads.jsonl nvtx_push '.domain == 1 and .name_str == "work"') $(nvtx_count threads.jsonl nvtx_pop '.id == 1')" "8000 8000"
expect "threads: own ranges" "$(q threads.jsonl '[.[] | select(.type == "nvtx_push" and .domain == 0) | "\(.tid) \(.name_str)"] | unique | length') $(nvtx_count threads.jsonl nvtx_push '.domain == 0') $(nvtx_count threads.jsonl nvtx_pop '.id == 0')" "8 8000 8000"
expect "threads: start/end" "$(q threads.jsonl '([.[] | select(.type == "nvtx_start") | .id] | unique | length) == ([.[] | select(.type == "nvtx_end") | .id] | unique | length)') $(nvtx_count threads.jsonl nvtx_start)" "true 80"
expect "threads: lost" "$(q threads.jsonl '[.[] | select(.type == "end")][0].nr_lost')" 0

# A timer's signal handler calling NVTX, often inside the shim's own NVTX code: those calls
# are counted lost (three a handler), the rest recorded; every range still balanced.
GPUSHIM_BUFFER_KB=65536 run_nvtx signal signal
tally "$(only_trace "$WORK/signal-*.trace")" >signal.tally
n=$(sed -n 's/^signal: \([0-9]*\) handlers$/\1/p' signal.err)
lost=$(sed -n 's|^ *1 end/||p' signal.tally)
sig=$(got signal.tally nvtx_push/sig/0x0)
expect "signal: loop ranges" "$(got signal.tally nvtx_push/loop/0x0) $(got signal.tally "nvtx_mark/loop mark/0x0")" "200000 200000"
expect "signal: handlers recorded whole" "$(got signal.tally "nvtx_mark/sig mark/0x0") $(got signal.tally nvtx_pop//)" "$sig $((200000 + sig))"
expect "signal: handlers lost whole ($n handlers)" "$lost" $((3 * (n - sig)))

# No CUDA at all: nothing written, and the process ends as it would.
run_nvtx nocuda nocuda
[ -z "$(ls "$WORK"/nocuda-*.trace 2>/dev/null)" ] || fail "nocuda: a trace was written"

# Calls after the trace ended (a library destructor after the shim's): counted lost, noted.
run_nvtx late late
grep -q "nvtx_late: 20 ranges" late.err || fail "late: the destructor did not run: $(cat late.err)"
t=$(only_trace "$WORK/late-*.trace")
"$GPUSHIM_BIN" info --format json "$t" >late.json
expect "late: lost" "$(jget late.json .lost_records)" 40
jget late.json '.notes[] | select(.kind == "warning") | .text' | grep -q "^40 calls after the trace ended" ||
	fail "late: no note: $(jget late.json .notes)"

# ---- The variable ----
expect "env: set to the shim" "$(LD_PRELOAD="$GPUSHIM_SHIM" "$NVTX_CLIENT" env)" "$(realpath "$GPUSHIM_SHIM")"
expect "env: another tool's kept" "$(NVTX_INJECTION64_PATH=/opt/tool/libinject.so LD_PRELOAD="$GPUSHIM_SHIM" "$NVTX_CLIENT" env)" /opt/tool/libinject.so
expect "env: GPUSHIM_NVTX=0" "$(GPUSHIM_NVTX=0 LD_PRELOAD="$GPUSHIM_SHIM" "$NVTX_CLIENT" env)" "(unset)"
expect "env: gpushim run" "$(GPUSHIM_DISABLE=1 "$GPUSHIM_BIN" run --shim "$GPUSHIM_SHIM" -- "$NVTX_CLIENT" env)" "$(realpath "$GPUSHIM_SHIM")"
expect "env: gpushim run, another tool's" "$(NVTX_INJECTION64_PATH=/opt/tool/libinject.so GPUSHIM_DISABLE=1 "$GPUSHIM_BIN" run --shim "$GPUSHIM_SHIM" -- "$NVTX_CLIENT" env)" /opt/tool/libinject.so
expect "env: gpushim run, GPUSHIM_NVTX=0" "$(GPUSHIM_NVTX=0 GPUSHIM_DISABLE=1 "$GPUSHIM_BIN" run --shim "$GPUSHIM_SHIM" -- "$NVTX_CLIENT" env)" "(unset)"

# Another tool named (it cannot be loaded here, so NVTX is a no-op): no range recorded, a
# note in the trace and one warning.
NVTX_INJECTION64_PATH=/opt/tool/libinject.so run_nvtx other main
t=$(only_trace "$WORK/other-*.trace")
dump_of "$t" other.jsonl
expect "other tool: records" "$(q other.jsonl '[.[] | select(.type | startswith("nvtx"))] | length')" 0
"$GPUSHIM_BIN" info --format json "$t" >other.json
jget other.json '.notes[] | select(.kind == "warning") | .text' | grep -q "names another tool (/opt/tool/libinject.so)" ||
	fail "other tool: no note: $(jget other.json .notes)"
expect "other tool: warnings" "$(grep -c 'names another tool' other.err)" 1

# GPUSHIM_NVTX=0: the program runs as without the shim's NVTX.
GPUSHIM_NVTX=0 run_nvtx off main
dump_of "$(only_trace "$WORK/off-*.trace")" off.jsonl
expect "GPUSHIM_NVTX=0: records" "$(q off.jsonl '[.[] | select(.type | startswith("nvtx"))] | length')" 0

echo "ok: NVTX ranges, marks, domains and registered strings recorded; bad input bounded and counted"
