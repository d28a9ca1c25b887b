#!/bin/bash
# SPDX-License-Identifier: MIT
#
# compare_outputs.sh - the analyzer's outputs of this tree against those of an older commit,
# byte for byte: report (text, JSON, and loaded whole with GPUSHIM_STREAM=0), info, dump,
# export and diff of every committed trace (tests/traces/**, and the pairs the golden cases
# use), plus the traces of any directory given. For a change that must not change behaviour
# (a restructuring): exit 0 when every output, standard error and exit code is the same.
#
#   scripts/compare_outputs.sh [-b BUILD] [-k] COMMIT [TRACE_DIR...]
#
# COMMIT is built in a scratch directory (git archive into /tmp); BUILD is this tree's build
# directory (default: build). -k keeps the scratch directory. Needs meson, ninja and a C
# compiler; no GPU.
set -u

build=build
keep=0
while getopts b:k opt; do
	case $opt in
	b) build=$OPTARG ;;
	k) keep=1 ;;
	*) echo "usage: $0 [-b BUILD] [-k] COMMIT [TRACE_DIR...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-b BUILD] [-k] COMMIT [TRACE_DIR...]" >&2; exit 2; }
commit=$1
shift

root=$(cd "$(dirname "$0")/.." && pwd)
cur=$(cd "$root" && cd "$build" && pwd)/analyzer/gpushim
[ -x "$cur" ] || { echo "compare_outputs: no $cur (build this tree first)" >&2; exit 2; }
rev=$(git -C "$root" rev-parse --verify "$commit^{commit}") || exit 2

scratch=$(mktemp -d /tmp/gpushim-compare.XXXXXX)
[ $keep = 1 ] || trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/old" "$scratch/new"
git -C "$root" archive "$rev" | tar -x -C "$scratch/src" || exit 2
if ! (meson setup "$scratch/build" "$scratch/src" -Dtest_apps=disabled >"$scratch/build.log" 2>&1 &&
      ninja -C "$scratch/build" analyzer/gpushim >>"$scratch/build.log" 2>&1); then
	echo "compare_outputs: $commit does not build (log: $scratch/build.log)" >&2
	keep=1
	exit 2
fi
old=$scratch/build/analyzer/gpushim

traces=$(cd "$root" && find tests/traces -name '*.trace' | sort)
for d in "$@"; do
	traces+=$'\n'$(find "$d" -name '*.trace' | sort)
done
# Diff pairs: the golden cases' and a few of the same program in two runs or formats.
pairs="tests/traces/h200/diff_host_sync_a.trace tests/traces/h200/diff_host_sync_b.trace
tests/traces/h200/diff_host_sync_a.trace tests/traces/h200/diff_host_sync_end.trace
tests/traces/h200/diff_launch_bound_10k.trace tests/traces/h200/diff_launch_bound_20k.trace
tests/traces/h200/torch_items_10.trace tests/traces/h200/torch_items_30.trace
tests/traces/h200/torch_train.trace tests/traces/h200_1.2/torch_train.trace
tests/traces/h200/launch_bound.trace tests/traces/h200/torch_launch_bound.trace
tests/traces/h200/healthy.trace tests/traces/h200/healthy.trace"

# run NAME -- ARGS: both binaries, outputs kept under old/ and new/ by NAME.
nr=0
bad=0
run() {
	local name=$1 env=$2 f
	shift 2
	for side in old new; do
		local bin=$old
		[ $side = new ] && bin=$cur
		(cd "$root" && env $env "$bin" "$@" >"$scratch/$side/$name.out" 2>"$scratch/$side/$name.err"
		 echo $? >"$scratch/$side/$name.rc")
	done
	nr=$((nr + 1))
	for f in out err rc; do
		if ! cmp -s "$scratch/old/$name.$f" "$scratch/new/$name.$f"; then
			echo "DIFFERS: $name.$f: $*${env:+ ($env)}"
			bad=$((bad + 1))
			keep=1
		fi
	done
}

i=0
while read -r t; do
	[ -n "$t" ] || continue
	i=$((i + 1))
	n=$i.$(basename "$t" .trace)
	run "$n.report" "" report "$t"
	run "$n.report_json" "" report --format json "$t"
	run "$n.report_whole" GPUSHIM_STREAM=0 report "$t"
	run "$n.report_json_whole" GPUSHIM_STREAM=0 report --format json "$t"
	run "$n.report_nohdr" "" report --no-header "$t"
	run "$n.info" "" info "$t"
	run "$n.info_json" "" info --format json "$t"
	run "$n.dump" "" dump "$t"
	run "$n.dump_jsonl" "" dump --format jsonl "$t"
	run "$n.export" "" export --format chrome "$t"
done <<<"$traces"
i=0
while read -r a b; do
	i=$((i + 1))
	run "diff$i" "" diff "$a" "$b"
	run "diff${i}_json" "" diff --format json "$a" "$b"
	run "diff${i}_whole" GPUSHIM_STREAM=0 diff --format json "$a" "$b"
done <<<"$pairs"
# Several traces at once (a section each and a combined summary; a job's ranks in diff).
run multi_report "" report tests/traces/h200/torch_items_10.trace tests/traces/h200/torch_train.trace
run multi_json "" report --format json tests/traces/h200/driver_api.trace tests/traces/h200/spin.trace
run multi_export "" export --format chrome tests/traces/h200/driver_api.trace tests/traces/h200/spin.trace
run multi_diff "" diff tests/traces/h200/diff_host_sync_a.trace,tests/traces/h200/diff_host_sync_b.trace tests/traces/h200/diff_host_sync_end.trace,tests/traces/h200/diff_host_sync_a.trace

if [ $bad -ne 0 ]; then
	echo "compare_outputs: $bad of $((nr * 3)) outputs differ from $commit's (kept: $scratch)"
	exit 1
fi
echo "compare_outputs: $nr runs, outputs, errors and exit codes identical to $commit's"
