#!/bin/sh
# SPDX-License-Identifier: MIT
# Where in the program each cause's sites are (analysis/where.c, from the shim's call stacks):
# on the fake driver with its fake CUPTI.
#   Python (tests/python/stack_causes.py, the GIL held in each call): a blocking copy at one
#   line, CPU work, a launch at another. memcpy's sites must name the copy's file and line with
#   its source text, cpu_bound's top site the launch's line and, as where the CPU work began,
#   the copy's (also when the calls are made without the GIL, as PyTorch makes them: frames
#   read from the interpreter's structures); the text, HTML, chrome and CSV exports say the same; the report streamed and loaded
#   whole agree.
#   Native (tests/fake_cuda/stack_client.c): launch_overhead's top site in stack_launcher, named
#   from the program's symbols; 20000 launches, each followed by a sync from one of 16
#   functions, make model_stream let go of calls while call stacks are numbered: the same
#   sites, each sync's in its own function, streamed and loaded whole (small CUPTI buffers:
#   its records come as the run goes, so calls are let go of before the end).
#   GPUSHIM_STACKS=0: no site has a place. diff matches two runs' causes by place.
. "$(dirname "$0")/lib.sh"
# The first CUDA call waits for the call stacks' thread until it is ready (on a loaded machine
# it took longer than the default 50 ms, and the first captures this test checks were not made)
export GPUSHIM_STACK_READY_MS=60000
cd "$WORK"
use_fake_cupti

# ---- native ----
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/n.trace" GPUSHIM_STACK_SAMPLE=100 \
	GPUSHIM_CUPTI_BUFFER_KB=256 \
	"$STACK_CLIENT" sites 20000 >n.out 2>n.err || fail "stack_client failed: $(cat n.err)"
"$GPUSHIM_BIN" report --format json n.trace >n.json || fail "report failed"
GPUSHIM_STREAM=0 "$GPUSHIM_BIN" report --format json n.trace >n.whole.json ||
	fail "report (whole) failed"
site='[.attribution[] | select(.cause == "launch_overhead")][0].evidence.sites[0]'
expect "native: launch_overhead's top site, function" \
	"$(jq -r "$site.where.symbol" n.json)" stack_launcher
expect "native: its module" "$(jq -r "$site.where.module | split(\"/\") | last" n.json)" \
	stack_client
expect "native: the program's own" "$(jq -r "$site.where.user" n.json)" true
expect "native: innermost frames" \
	"$(jq -r "$site.native[0:2] | map(.symbol) | join(\" \")" n.json)" "stack_launcher main"
# the syncs' sites: each of the functions it was called from, named as the site's place
syncs=$(jq -r '[.attribution[].evidence.sites[] | select(.what == "cuStreamSynchronize") |
	.where.symbol] | unique | join(" ")' n.json)
case $syncs in
stack_site*) ;;
*) fail "native: sync sites placed in $syncs" ;;
esac
[ "$(jq -r '[.attribution[].evidence.sites[] | select(.what == "cuStreamSynchronize") |
	select(.where.symbol | startswith("stack_site") | not)] | length' n.json)" = 0 ] ||
	fail "native: a sync site outside stack_siteN"
# each launch's stack: its own when sampled, else the last captured one of its kernel
expect "native: every launch_overhead site placed" \
	"$(jq -r '[.attribution[] | select(.cause == "launch_overhead") | .evidence.sites[] |
		select(.where == null)] | length' n.json)" 0
# numbered alike through model_stream's trims and a whole load
sites='[.attribution[] | {cause, sites: [.evidence.sites[] | {what, count, time_ns,
	w: .where.text}]}]'
expect "native: streamed = whole" "$(jq -c "$sites" n.json)" "$(jq -c "$sites" n.whole.json)"

# ---- off ----
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/off.trace" GPUSHIM_STACKS=0 \
	"$STACK_CLIENT" launch 300 >off.out 2>&1 || fail "stack_client failed (off)"
"$GPUSHIM_BIN" report --format json off.trace >off.json || fail "report failed (off)"
expect "off: no site placed" "$(jq -r '[.attribution[].evidence.sites[]? |
	select(.where != null)] | length' off.json)" 0
expect "off: the sites are there" "$(jq -r '[.attribution[].evidence.sites[]?] | length > 0' \
	off.json)" true

# ---- Python ----
command -v python3 >/dev/null 2>&1 || {
	echo "ok: native (no python3: Python part skipped)"
	exit 0
}
script="$SOURCE_ROOT/tests/python/stack_causes.py"
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/py.trace" \
	python3 "$script" "$FAKE_CUPTI_LIB" 30 10 >py.out 2>py.err ||
	fail "stack_causes.py failed: $(cat py.err)"
grep -q '^done$' py.out || fail "stack_causes.py did not finish: $(cat py.out)"
copy=$(sed -n 's/^copy [^ ]* \([0-9]*\) .*/\1/p' py.out)
launch=$(sed -n 's/^launch [^ ]* \([0-9]*\) .*/\1/p' py.out)
[ -n "$copy" ] && [ -n "$launch" ] || fail "no lines printed: $(cat py.out)"
"$GPUSHIM_BIN" report --format json py.trace >py.json || fail "report failed"
GPUSHIM_STREAM=0 "$GPUSHIM_BIN" report --format json py.trace >py.whole.json ||
	fail "report (whole) failed"
"$GPUSHIM_BIN" report py.trace >py.txt || fail "text report failed"
cause() {
	jq -r "[.attribution[] | select(.cause == \"$1\")][0].evidence.sites[0] | $2" py.json
}
expect "python: cpu_bound ranked first" "$(jq -r '.verdict.primary' py.json)" cpu_bound
expect "python: cpu_bound's top site: the call after the CPU work" \
	"$(cause cpu_bound '"\(.where.file):\(.where.line) \(.where.function)"')" \
	"$script:$launch step"
expect "python: ... and the call before it" \
	"$(cause cpu_bound '"\(.from.file):\(.from.line)"')" "$script:$copy"
expect "python: its source line" "$(cause cpu_bound '.where.source')" \
	"$(sed -n "${launch}p" "$script" | sed 's/^ *//')"
expect "python: innermost frames" \
	"$(cause cpu_bound '.python[0:2] | map("\(.function):\(.user)") | join(" ")')" \
	"step:true main:true"
expect "python: every memcpy site at the copy's line" \
	"$(jq -r '[.attribution[] | select(.cause == "memcpy") | .evidence.sites[] |
		.where.line] | unique | map(tostring) | join(",")' py.json)" "$copy"
expect "python: streamed = whole" "$(jq -c "$sites" py.json)" "$(jq -c "$sites" py.whole.json)"
grep -qF "and $script:$launch in step  \`lib.cuLaunchKernel(" py.txt ||
	fail "text: no cpu_bound place: $(grep -A3 'cpu_bound' py.txt)"
grep -qF "between $script:$copy in step" py.txt || fail "text: no place the CPU work began"

# the HTML report and the chrome export say it too
"$GPUSHIM_BIN" report --format html py.trace >py.html || fail "html report failed"
grep -qF "<code>$script:$launch in step</code>" py.html || fail "html: no place"
"$GPUSHIM_BIN" export --format chrome -o py.chrome.json py.trace || fail "export failed"
expect "chrome: the copies' where" \
	"$(jq -r '[.traceEvents[] | select(.name == "cuMemcpyHtoD_v2") | .args.where] |
		unique | join(";")' py.chrome.json)" "$script:$copy in step"
"$GPUSHIM_BIN" export --format csv -o csv py.trace || fail "csv export failed"
expect "csv: the copies' place" "$(tr -d '\r' <csv/calls.csv | awk -F, '$4 == "cuMemcpyHtoD_v2" { print $NF }' |
	sort -u)" "$script:$copy in step"

# The same calls made without the GIL (ctypes.CDLL, as PyTorch's operators make theirs): the
# frames read from the interpreter's structures (CPython 3.11 - 3.13) place the sites alike.
minor=$(python3 -c 'import sys; print(sys.version_info[1] if sys.version_info[0] == 3 else 0)')
if [ "$minor" -ge 11 ] && [ "$minor" -le 13 ]; then
	LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/ng.trace" \
		python3 "$script" "$FAKE_CUPTI_LIB" 30 10 nogil >ng.out 2>ng.err ||
		fail "stack_causes.py nogil failed: $(cat ng.err)"
	"$GPUSHIM_BIN" report --format json ng.trace >ng.json || fail "report (nogil) failed"
	expect "nogil: cpu_bound's place" \
		"$(jq -r '[.attribution[] | select(.cause == "cpu_bound")][0].evidence.sites[0] |
			"\(.from.line) \(.where.line) \(.where.function)"' ng.json)" "$copy $launch step"
	expect "nogil: every memcpy site at the copy's line" \
		"$(jq -r '[.attribution[] | select(.cause == "memcpy") | .evidence.sites[] |
			.where.line] | unique | map(tostring) | join(",")' ng.json)" "$copy"
fi

# diff matches the runs' causes by place: five times the CPU work at the same place
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/py5.trace" \
	python3 "$script" "$FAKE_CUPTI_LIB" 30 50 >py5.out 2>py5.err ||
	fail "stack_causes.py (50 ms) failed: $(cat py5.err)"
"$GPUSHIM_BIN" diff --format json py.trace py5.trace >diff.json
expect "diff: cpu_bound's place worse" \
	"$(jq -r --arg k "cpu_bound at $script:$launch in step" \
		'[.changes[] | select(.kind == "place" and .key == $k) | .status] |
		join(",")' diff.json)" worse
"$GPUSHIM_BIN" diff py.trace py5.trace >diff.txt
grep -q "WORSE *cpu_bound at $script:$launch in step" diff.txt ||
	fail "diff text: no place row: $(cat diff.txt)"
echo "ok: native and Python sites placed"
