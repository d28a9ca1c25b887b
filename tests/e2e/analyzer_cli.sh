#!/bin/sh
# SPDX-License-Identifier: MIT
# The command line: exit codes (0 ok, 1 error, 2 usage; run: 127 and 126 as a shell's; output
# that cannot be written is an error), messages (the gpushim: prefix, a missing file or a
# directory in the system's words), --version, --help, `gpushim run`, and that dump/info/report
# work on a real trace (dump's JSON lines are each valid JSON).
. "$(dirname "$0")/lib.sh"

code() {
	"$@" >/dev/null 2>&1 && echo 0 || echo $?
}
expect "no command" "$(code "$GPUSHIM_BIN")" 2
expect "unknown command" "$(code "$GPUSHIM_BIN" frobnicate)" 2
expect "report without trace" "$(code "$GPUSHIM_BIN" report)" 2
expect "bad format" "$(code "$GPUSHIM_BIN" report --format xml x)" 2
expect "missing trace" "$(code "$GPUSHIM_BIN" report "$WORK/none.trace")" 1
# A file that cannot be read has no offset to name: the system's words, as cat(1) prints them.
for c in report info dump whatif export diff; do
	set -- "$WORK/none.trace"
	[ "$c" = diff ] && set -- "$1" "$1"
	expect "$c missing file: message" "$("$GPUSHIM_BIN" $c "$@" 2>&1 >/dev/null)" \
		"gpushim: $WORK/none.trace: No such file or directory"
	[ "$c" = diff ] && set -- "$WORK" "$WORK" || set -- "$WORK"
	expect "$c directory: message" "$("$GPUSHIM_BIN" $c "$@" 2>&1 >/dev/null)" \
		"gpushim: $WORK: Is a directory"
done
# getopt's own messages carry the prefix, as the commands' do.
for c in run report diff whatif export dump info; do
	expect "$c --bogus: message" "$("$GPUSHIM_BIN" $c --bogus 2>&1 >/dev/null | head -1)" \
		"gpushim: $c: unrecognized option '--bogus'"
done
expect "unknown command: message" "$("$GPUSHIM_BIN" frobnicate 2>&1 >/dev/null | head -1)" \
	"gpushim: unknown command 'frobnicate'"
"$GPUSHIM_BIN" --version | grep -Eq '^gpushim [0-9.]+ \(trace format [0-9]+\.[0-9]+\)$' ||
	fail "--version"
# Every command's --help describes each of its options: each long option of the command's
# getopt table (read from its source) begins a line of the help text.
for c in run report diff whatif export dump info; do
	"$GPUSHIM_BIN" "$c" --help >"$WORK/help.txt" || fail "$c --help: exit $?"
	grep -q "^usage: gpushim $c" "$WORK/help.txt" || fail "$c --help: no usage line"
	opts=$(sed -n '/static const struct option opts\[\]/,/};/s/^[[:space:]]*{ "\([a-z-]*\)".*/\1/p' \
		"$SOURCE_ROOT/analyzer/cmd/cmd_$c.c")
	[ "$(echo "$opts" | wc -w)" -ge 2 ] || fail "$c: no option table in cmd_$c.c"
	for o in $opts; do
		grep -Eq -- "^ +(-[a-zA-Z], )?--$o([ =[]|\$)" "$WORK/help.txt" ||
			fail "$c --help does not describe --$o: $(cat "$WORK/help.txt")"
	done
done
# run's help points at the settings it has no flag for.
"$GPUSHIM_BIN" run --help | tr '\n' ' ' | grep -q "GPUSHIM_PM=0: no hardware counters.*README.md" ||
	fail "run --help does not name the GPUSHIM_* settings"
# ... and says that sampled mode detaches CUPTI between its windows.
"$GPUSHIM_BIN" run --help | tr -s '\n ' '  ' | grep -q "sampled (in windows: GPUSHIM_WINDOW_MS every GPUSHIM_WINDOW_EVERY_MS, CUPTI detached between them)" ||
	fail "run --help does not say that sampled mode detaches CUPTI: $("$GPUSHIM_BIN" run --help)"

# gpushim run: the shim next to the binary, the pattern from -o, the program's exit code.
run_plain "$WORK/plain.txt" direct
"$GPUSHIM_BIN" run -o "$WORK/run-%p.trace" -- "$FAKE_CLIENT" direct >"$WORK/run.txt"
cmp "$WORK/plain.txt" "$WORK/run.txt" || fail "gpushim run changed the output"
trace=$(only_trace "$WORK/run-*.trace")
expect "run exit code" "$(code "$GPUSHIM_BIN" run -o "$WORK/x-%p.trace" -- "$FAKE_CLIENT" bogus)" 2
# A program that cannot be run: a shell's codes, 127 not found (by path or in PATH), 126 found
# but not executable (a plain file, a directory), with the reason.
printf 'echo hi\n' >"$WORK/not-exec"
for pair in "$WORK/missing-command:127" gpushim-no-such-command:127 "$WORK/not-exec:126" \
	"$WORK:126"; do
	cmd=${pair%:*} want=${pair##*:}
	set +e
	"$GPUSHIM_BIN" run -- "$cmd" arg >/dev/null 2>"$WORK/run.err"
	rc=$?
	set -e
	expect "run -- $cmd: exit" "$rc" "$want"
	grep -q "^gpushim: run: $cmd: " "$WORK/run.err" || fail "run -- $cmd: $(cat "$WORK/run.err")"
done

# Output that cannot be written (a full disk): exit 1 and the reason, never a cut report and 0.
for c in "report $trace" "report --format json $trace" "info $trace" "info --format json $trace" \
	"dump $trace" "dump --format jsonl $trace" "export $trace" "whatif $SOURCE_ROOT/tests/traces/h200/host_sync.trace" \
	"--version" "report --help"; do
	set +e
	# shellcheck disable=SC2086 # the command's words
	"$GPUSHIM_BIN" $c >/dev/full 2>"$WORK/full.err"
	rc=$?
	set -e
	expect "$c >/dev/full: exit" "$rc" 1
	expect "$c >/dev/full: message" "$(cat "$WORK/full.err")" \
		"gpushim: write error on standard output: No space left on device"
done
"$GPUSHIM_BIN" info "$trace" | grep -q '^state       complete, ended by exit$' || fail "info state"
"$GPUSHIM_BIN" dump "$trace" | grep -q '^launch ' || fail "dump text has no launch"
# cuInit starts before the header is written: its time prints as negative ms, not wrapped.
"$GPUSHIM_BIN" dump "$trace" | grep -Eq ' t=-?[0-9]{7,}\.' &&
	fail "dump: a time before the header's start wrapped around"
"$GPUSHIM_BIN" dump --format jsonl "$trace" >"$WORK/d.jsonl"
lines=$(wc -l <"$WORK/d.jsonl")
valid=$(jq -c . "$WORK/d.jsonl" | wc -l)
expect "jsonl lines valid" "$valid" "$lines"
expect "jsonl launches" "$(jq -r 'select(.type=="launch") | .api' "$WORK/d.jsonl" | grep -c cuLaunchKernel)" 13
"$GPUSHIM_BIN" report "$trace" >"$WORK/r.txt"
grep -q "^verdict: " "$WORK/r.txt" || fail "text report has no verdict"
grep -q "^run " "$WORK/r.txt" || fail "text report has no run summary"
"$GPUSHIM_BIN" report "$trace" "$trace" | grep -q "^# combined: 2 processes" || fail "combined report"
expect "combined JSON" "$("$GPUSHIM_BIN" report --format json "$trace" "$trace" | jq -r ".combined.processes, (.reports | length)" | tr "\n" " ")" "2 2 "
# Several processes, each replayed: the combined verdict is ranked like each one's, by saving
# (torch_twins_sync: host_sync, not the compute_bound time that is larger).
t=$SOURCE_ROOT/tests/traces/h200/torch_twins_sync.trace
expect "combined by saving" "$("$GPUSHIM_BIN" report --format json "$t" "$t" | jq -r '[.combined.verdict.primary, .combined.verdict.ranked_by, .combined.attribution[0].cause, .reports[0].verdict.primary] | join(" ")')" "host_sync saving host_sync host_sync"
"$GPUSHIM_BIN" report --format json "$trace" | jq -e . >/dev/null || fail "report JSON invalid"
# GPUSHIM_STREAM=0 loads the trace whole: the same report, text and JSON, and diff.
for f in text json; do
	"$GPUSHIM_BIN" report --format "$f" "$trace" >"$WORK/streamed.$f"
	GPUSHIM_STREAM=0 "$GPUSHIM_BIN" report --format "$f" "$trace" >"$WORK/whole.$f"
	cmp "$WORK/streamed.$f" "$WORK/whole.$f" || fail "GPUSHIM_STREAM=0 changed the $f report"
done
"$GPUSHIM_BIN" diff --format json "$trace" "$trace" >"$WORK/streamed.diff"
GPUSHIM_STREAM=0 "$GPUSHIM_BIN" diff --format json "$trace" "$trace" >"$WORK/whole.diff"
cmp "$WORK/streamed.diff" "$WORK/whole.diff" || fail "GPUSHIM_STREAM=0 changed diff"
# The step options on an H200 trace with 200 NVTX steps "train_step".
st=$SOURCE_ROOT/tests/traces/h200/steps_nvtx.trace
expect "steps found" "$("$GPUSHIM_BIN" report --format json "$st" | jq -r '.steps | "\(.source) \(.name) \(.count)"')" "nvtx train_step 200"
expect "--whole" "$("$GPUSHIM_BIN" report --format json --whole "$st" | jq -r '"\(.steps.source) \(.phases | length)"')" "none 0"
expect "--steps 5:10" "$("$GPUSHIM_BIN" report --format json --steps 5:10 "$st" | jq -r '"\(.steps.warmup_steps) \(.steps.steady_steps)"')" "4 6"
expect "--step-range" "$("$GPUSHIM_BIN" report --format json --step-range nothing "$st" | jq -r .steps.source)" "none"
w=$("$GPUSHIM_BIN" report --format json --window 6:7 "$st" | jq -r '"\(.steps.source) \(.phases[2].ns)"')
expect "--window 6:7" "$w" "window 1000000000"
for bad in "--steps 5" "--steps 9:3" "--window 2:1" "--whole --window 1:2"; do
	set +e
	# shellcheck disable=SC2086 # the options are words
	"$GPUSHIM_BIN" report $bad "$st" >/dev/null 2>"$WORK/bad.err"
	rc=$?
	set -e
	expect "report $bad: exit" "$rc" 2
	grep -q "gpushim: report: " "$WORK/bad.err" || fail "report $bad: no message: $(cat "$WORK/bad.err")"
done
"$GPUSHIM_BIN" report --help | grep -q -- "--step-range NAME" || fail "report --help: no --step-range"
# The text tables: 15 kernels, 15 API calls and 8 allocations live at the peak, and a line that
# counts the rest (torch_train: 18 kernels, 12 entry points, 18 allocations at the peak); --top
# N shows N of each, --all every row (as many kernels as JSON lists).
t=$SOURCE_ROOT/tests/traces/h200/torch_train.trace
more() {
	"$GPUSHIM_BIN" report "$@" "$t" | grep -E '^  \.\.\. [0-9]+ more$' | tr -s ' \n' ' '
}
# kernel_rows ARGS...: the rows of the kernel table.
kernel_rows() {
	"$GPUSHIM_BIN" report "$@" "$t" | sed -n '/^kernels (by GPU time)$/,/^$/p' | grep -Ec '^ +[0-9]'
}
expect "report: the tables' rows left out" "$(more)" " ... 3 more ... 10 more "
expect "report: kernel rows" "$(kernel_rows)" 15
expect "report --top 3: rows left out" "$(more --top 3)" " ... 15 more ... 9 more ... 15 more "
expect "report --top 3: kernel rows" "$(kernel_rows --top 3)" 3
expect "report --all: no row left out" "$(more --all)" ""
expect "report --all: every kernel" "$(kernel_rows --all)" \
	"$("$GPUSHIM_BIN" report --format json "$t" | jq '.kernels | length')"
expect "report --top 1000 is --all" "$("$GPUSHIM_BIN" report --top 1000 "$t" | cksum)" \
	"$("$GPUSHIM_BIN" report --all "$t" | cksum)"
for bad in 0 -1 " -1" +3 x 3x ""; do
	expect "report --top '$bad': usage" "$(code "$GPUSHIM_BIN" report --top "$bad" "$t")" 2
done

# whatif: the replay of H200 traces whose cause is known. Replayed as recorded, the span comes
# back; the cause whose change saves the most is the one each program was built around.
h=$SOURCE_ROOT/tests/traces/h200
expect "whatif usage" "$(code "$GPUSHIM_BIN" whatif)" 2
expect "whatif bad speedup" "$(code "$GPUSHIM_BIN" whatif --cpu-speedup 0.5 "$h/launch_bound.trace")" 2
expect "whatif missing trace" "$(code "$GPUSHIM_BIN" whatif "$WORK/none.trace")" 1
for pair in launch_bound:launch_overhead pageable_copy:memcpy low_parallelism:low_parallelism \
	torch_host_sync:host_sync torch_memcpy:memcpy cpu_bound:cpu_bound; do
	name=${pair%%:*} want=${pair#*:}
	"$GPUSHIM_BIN" whatif --format json "$h/$name.trace" >"$WORK/whatif.json"
	expect "whatif $name: replay error" "$(jq '.replay_error_pct | fabs < 0.1' "$WORK/whatif.json")" true
	expect "whatif $name: saves most" "$(jq -r '.causes[0].cause' "$WORK/whatif.json")" "$want"
done
# Against a measured fix: torch_twins.py sync's fixed twin saved 25.4 % of a step under the
# shim on the H200 (+34.1 %); the replay's host_sync change must predict it within 10 points.
"$GPUSHIM_BIN" whatif --format json "$h/torch_twins_sync.trace" >"$WORK/whatif.json"
expect "whatif torch_twins_sync: host_sync first" "$(jq -r '.causes[0].cause' "$WORK/whatif.json")" host_sync
expect "whatif torch_twins_sync: within 10 points of the measured 25.4 %" \
	"$(jq '.causes[] | select(.cause == "host_sync") | (.saving_pct - 25.4) | fabs <= 10' "$WORK/whatif.json")" true
# Changes together save at least what the largest alone does (here: launches and CPU time).
"$GPUSHIM_BIN" whatif --format json --graph --cpu-speedup 2 "$h/launch_bound.trace" >"$WORK/whatif.json"
# The bounds: launches at no cost, no CPU time at all, save at least what the changes do, and
# --cpu-speedup inf is the second.
"$GPUSHIM_BIN" whatif --format json "$h/torch_twins_cpu.trace" >"$WORK/bound.json"
expect "whatif bounds above the changes" "$(jq '[.causes[] | select(.bound_saving_pct != null) | .bound_saving_pct >= .saving_pct] | (length == 2 and all)' "$WORK/bound.json")" true
"$GPUSHIM_BIN" whatif --format json --cpu-speedup inf "$h/torch_twins_cpu.trace" >"$WORK/inf.json"
expect "whatif --cpu-speedup inf is the CPU bound" "$(jq -n --slurpfile a "$WORK/bound.json" --slurpfile b "$WORK/inf.json" '($a[0].causes[] | select(.cause == "cpu_bound") | .bound_saving_pct) == $b[0].changes.saving_pct')" true
# With steps, the mean steady step as recorded and with the changes (torch_twins_sync: 399
# steady steps; its program measured 4.786 ms a step under the shim).
"$GPUSHIM_BIN" whatif --format json --no-sync "$h/torch_twins_sync.trace" >"$WORK/step.json"
expect "whatif step time" "$(jq '.steps == 399 and ((.step_ns / 4786000 - 1) | fabs < 0.01) and .changes.step_ns < .step_ns' "$WORK/step.json")" true
expect "whatif together" "$(jq '.changes.saving_pct >= ([.causes[] | select(.cause == "launch_overhead" or .cause == "cpu_bound") | .saving_pct] | max)' "$WORK/whatif.json")" true
"$GPUSHIM_BIN" whatif "$h/launch_bound.trace" | grep -q "^  launch_overhead .*launches at a CUDA graph" ||
	fail "whatif text"

# host_sync sites: the site that saves the most is the report's top host_sync site, named the
# same; with one site (these programs have one read-back) it alone saves what not blocking at
# all does; "ENTRY" alone names every site of that entry point.
for pair in host_sync:"cuMemcpyDtoH_v2 after memcpy DtoH" \
	torch_twins_sync:"cuStreamSynchronize after memcpy DtoH"; do
	name=${pair%%:*} want=${pair#*:}
	"$GPUSHIM_BIN" whatif --format json "$h/$name.trace" >"$WORK/whatif.json"
	site=$(jq -r '.host_sync_sites.sites[0].site' "$WORK/whatif.json")
	expect "whatif $name: top site" "$site" "$want"
	expect "whatif $name: the report's top host_sync site" "$site" \
		"$("$GPUSHIM_BIN" report --format json "$h/$name.trace" |
			jq -r '[.. | objects | select(.cause? == "host_sync")][0].evidence.sites[0] | "\(.what) after \(.after)"')"
	all=$(jq '.causes[] | select(.cause == "host_sync") | .saving_pct' "$WORK/whatif.json")
	expect "whatif $name: the top site's own saving is all sites'" \
		"$(jq --argjson all "$all" '.host_sync_sites.sites[0].saving_pct - $all | fabs <= 0.5' "$WORK/whatif.json")" true
	for spec in "$site" "${site%% after *}"; do
		"$GPUSHIM_BIN" whatif --format json --no-sync="$spec" "$h/$name.trace" >"$WORK/site.json"
		expect "whatif $name --no-sync='$spec': the site's saving is all sites'" \
			"$(jq --argjson all "$all" '.changes.saving_pct - $all | fabs <= 0.5' "$WORK/site.json")" true
		expect "whatif $name --no-sync='$spec': the site among those asked" \
			"$(jq --arg s "$site" '.changes.no_sync_sites | index($s) != null' "$WORK/site.json")" true
	done
	expect "whatif $name --no-sync='$site': that site only" \
		"$("$GPUSHIM_BIN" whatif --format json --no-sync="$site" "$h/$name.trace" | jq -r '.changes.no_sync_sites | join("; ")')" "$site"
done
# A C++ kernel's site (torch_cpu_bound, the whole run: one sync after tanh's kernel) named as
# recorded, as JSON names it (demangled whole) and as the site table prints it (short): the
# same site each time.
t=$h/torch_cpu_bound.trace
"$GPUSHIM_BIN" whatif --whole --format json "$t" >"$WORK/cxx.json"
whole=$(jq -r '.host_sync_sites.sites[0].site' "$WORK/cxx.json")
mangled=$(jq -r '.host_sync_sites.sites[0] | "\(.entry) after \(.after_mangled)"' "$WORK/cxx.json")
short=$("$GPUSHIM_BIN" whatif --whole "$t" | sed -n '/^ *calls *waited/{n;s/^.*%   //p}')
case $whole in *" after void at::native::vectorized_elementwise_kernel<4, "*) ;;
*) fail "whatif JSON site not demangled: $whole" ;; esac
case $mangled in *" after _ZN2at6native29vectorized_elementwise_kernel"*) ;;
*) fail "whatif JSON after_mangled: $mangled" ;; esac
expect "whatif site table: short" "$short" \
	"cuCtxSynchronize_v2 after at::native::vectorized_elementwise_kernel<4, ...>"
for spec in "$mangled" "$whole" "$short"; do
	expect "whatif --no-sync='$(printf %.80s "$spec")': the site" \
		"$("$GPUSHIM_BIN" whatif --whole --format json --no-sync="$spec" "$t" | jq -r '.changes.no_sync_sites | join("; ")')" \
		"$whole"
done

# Where sites add up to more than each alone: driver_api.cu's three syncs; the three named
# together are --no-sync.
d=$h/driver_api.trace
"$GPUSHIM_BIN" whatif --format json --no-sync "$d" >"$WORK/all.json"
"$GPUSHIM_BIN" whatif --format json --no-sync=cuStreamSynchronize --no-sync=cuEventSynchronize \
	--no-sync="cuMemcpyDtoH_v2 after memcpy DtoH" "$d" >"$WORK/three.json"
expect "whatif driver_api: three sites" "$(jq '.host_sync_sites.count' "$WORK/three.json")" 3
expect "whatif driver_api: the three sites together are --no-sync" \
	"$(jq .changes.span_ns "$WORK/three.json")" "$(jq .changes.span_ns "$WORK/all.json")"
expect "whatif driver_api: each site alone saves less than all" \
	"$(jq '([.host_sync_sites.sites[].saving_pct] | max) < (.causes[] | select(.cause == "host_sync") | .saving_pct) - 1' "$WORK/three.json")" true
"$GPUSHIM_BIN" whatif --no-sync="cuEventSynchronize after memset" "$d" >"$WORK/site.txt"
grep -q "^  syncs that do not wait: those of cuEventSynchronize after memset$" "$WORK/site.txt" ||
	fail "whatif text: the sites asked: $(cat "$WORK/site.txt")"
grep -Eq "^ +1 +[0-9.]+ us +[0-9.]+ us +1\.[0-9]%   cuEventSynchronize after memset$" "$WORK/site.txt" ||
	fail "whatif text: the site table: $(cat "$WORK/site.txt")"
# A site that is none: exit 2, and the sites there are.
set +e
"$GPUSHIM_BIN" whatif --no-sync="cuStreamSynchronize after nothing" "$h/torch_twins_sync.trace" \
	>/dev/null 2>"$WORK/err"
rc=$?
set -e
expect "whatif unknown site: exit" "$rc" 2
grep -q "^gpushim: whatif: --no-sync=cuStreamSynchronize after nothing: no such host_sync site" "$WORK/err" &&
	grep -q "^  cuStreamSynchronize after memcpy DtoH$" "$WORK/err" ||
	fail "whatif unknown site: $(cat "$WORK/err")"
expect "whatif: an entry point's start is no site" \
	"$(code "$GPUSHIM_BIN" whatif --no-sync=cuStream "$h/torch_twins_sync.trace")" 2

# --export: the window recorded and replayed, one process each, from 0 us. Valid JSON; on a
# track slices nest or follow (nest.jq counts those that overlap partly: it finds the one
# made here); the replayed span is the replay's.
echo '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":10},{"ph":"X","pid":1,"tid":1,"ts":2,"dur":3},{"ph":"X","pid":1,"tid":1,"ts":9,"dur":2},{"ph":"X","pid":1,"tid":2,"ts":9,"dur":2}]}' >"$WORK/bad.json"
expect "nest.jq finds a partial overlap" "$(jq -f "$SOURCE_ROOT/tests/e2e/nest.jq" "$WORK/bad.json")" 1
# span PID FILE: the process's slices from the first start to the last end, in us.
span() {
	jq --argjson p "$1" '[.traceEvents[] | select(.ph == "X" and .pid == $p)] | (map(.ts + .dur) | max) - (map(.ts) | min)' "$2"
}
t=$h/torch_twins_sync.trace
site="cuStreamSynchronize after memcpy DtoH"
"$GPUSHIM_BIN" whatif --format json --no-sync="$site" --export "$WORK/tl.json" "$t" >"$WORK/site.json"
jq -e . "$WORK/tl.json" >/dev/null || fail "whatif --export: not JSON"
expect "whatif --export: processes" \
	"$(jq -r '[.traceEvents[] | select(.name == "process_name") | .args.name] | join("|")' "$WORK/tl.json")" \
	"recorded|replayed (--no-sync=$site)"
expect "whatif --export: nested" "$(jq -f "$SOURCE_ROOT/tests/e2e/nest.jq" "$WORK/tl.json")" 0
expect "whatif --export: the same slices in both" \
	"$(jq '[.traceEvents[] | select(.ph == "X")] | group_by(.pid) | map(length) | .[0] == .[1] and .[0] > 20000' "$WORK/tl.json")" true
rec=$(span 1 "$WORK/tl.json") rep=$(span 2 "$WORK/tl.json")
expect "whatif --export: the replayed span shorter, by the replay's saving" \
	"$(jq -n --argjson a "$rec" --argjson b "$rep" --argjson p "$(jq .changes.saving_pct "$WORK/site.json")" \
		'$b < $a and (100 * ($a - $b) / $a - $p | fabs) <= 0.5')" true
# No change: the replay as recorded, slice for slice the recording.
"$GPUSHIM_BIN" whatif --export "$WORK/tl.json" "$t" | grep -q "^timeline: $WORK/tl.json " ||
	fail "whatif --export: no timeline line"
expect "whatif --export as recorded" \
	"$(jq '[.traceEvents[] | select(.ph == "X")] | group_by(.pid) | map(map([.tid, .ts, .dur, .name]) | sort) | .[0] == .[1]' "$WORK/tl.json")" true
expect "whatif --export as recorded: named" \
	"$(jq -r '.traceEvents[] | select(.pid == 2 and .name == "process_name") | .args.name' "$WORK/tl.json")" "replayed (as recorded)"
# JAX's copies overlap on their stream as recorded: a lane beside the stream, nothing cut.
"$GPUSHIM_BIN" whatif --export "$WORK/tl.json" --no-sync "$h/jax_basic.trace" >/dev/null
expect "whatif --export jax_basic: nested" "$(jq -f "$SOURCE_ROOT/tests/e2e/nest.jq" "$WORK/tl.json")" 0
expect "whatif --export jax_basic: an overlapping lane, nothing cut" \
	"$(jq '[.traceEvents[] | select(.name == "thread_name" and (.args.name | test("overlapping")))] | length > 0' "$WORK/tl.json") $(grep -c clipped_ns "$WORK/tl.json" || true)" "true 0"
expect "whatif --export to nowhere" "$(code "$GPUSHIM_BIN" whatif --export "$WORK/none/x.json" "$t")" 1
echo "ok: command line"
