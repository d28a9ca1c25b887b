#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU benchmarks with the fake driver (no GPU needed; BENCHMARKS.md holds the figures):
#   1. instructions per intercepted launch, recording and compression included: callgrind's
#      total over all threads, the marginal cost between two storm sizes, shim minus plain;
#      for a loop relaunching one kernel and for one whose grid takes 8 sizes in turn; the
#      writer's again with the main thread's clock made up (tests/bench/det_clock.c), where
#      the count repeats exactly and two builds compare, and with CUPTI's records from the
#      fake CUPTI (tests/fake_cuda/fake_cupti.c) for it to convert; and the floor, a hook that
#      only times the call and compresses the times (tests/bench/floor_hook.c);
#   2. a launch-bound loop whose fake launches cost 2 us: wall time shim/plain, best of
#      several alternating runs;
#   3. trace bytes per launch for a 1,000,000-launch storm;
#   4. the analyzer: records per second and peak memory on 1M- and 10M-record traces, and
#      the reader alone on the same traces (tests/bench/read_trace.c), its ceiling;
#   5. NVTX: a push+pop pair under the shim (its NVTX injection) against the program alone
#      (NVTX without a tool: a no-op call): instructions (callgrind, application thread,
#      marginal between two sizes) and ns of the calling thread's CPU, in alternating rounds
#      (tests/fake_cuda/nvtx_client.c bench).
# The GPU figures come from scripts/gpu-check.sh (parts bench, perf, analyzer).
# Usage: scripts/bench.sh [BUILD_DIR]   (BENCH_QUICK=1: smaller sizes; BENCH_ONLY=nvtx: part 5 alone)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build}" && pwd)
client=$B/tests/fake_client
shim=$B/shim/libgpushim.so
G=$B/analyzer/gpushim
work=$(mktemp -d "${TMPDIR:-/tmp}/gpushim-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$B/tests
command -v valgrind >/dev/null || { echo "bench: valgrind is needed" >&2; exit 1; }
small=20000 big=40000 storm=1000000 huge=10000000 loop=200000 rounds=5
if [ -n "${BENCH_QUICK:-}" ]; then
	storm=200000 huge=1000000 loop=50000 rounds=3
fi

echo "# gpushim CPU benchmarks, $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m)"
echo "# build: $B ($(git rev-parse --short HEAD 2>/dev/null || echo ?))"

# ---- 5. NVTX: a push+pop pair (defined here, run last; BENCH_ONLY=nvtx: alone) ----
# nvtx_client bench N: CUDA started (the writer runs), then N pairs of nvtxRangePushA("step") and
# nvtxRangePop() in rounds its ring holds (nothing dropped, nothing faulted in while timed).
bench_nvtx() {
	local nvtx=$B/tests/nvtx_client p1 p2 s1 s2 w c lost pw=() pc=() sw=() sc=()

	[ -x "$nvtx" ] || return 0
	p1=$(nvtx_ir "$nvtx" 16384 0) p2=$(nvtx_ir "$nvtx" 49152 0)
	s1=$(nvtx_ir "$nvtx" 16384 1) s2=$(nvtx_ir "$nvtx" 49152 1)
	echo "NVTX push+pop pair, instructions of the calling thread: plain $(( (p2 - p1) / 32768 )), shim $(( (s2 - s1) / 32768 )) (marginal between 16384 and 49152 pairs)"
	for _ in $(seq 7); do
		read -r w c <<<"$(nvtx_ns "$nvtx" 0)"
		pw+=("$w") pc+=("$c")
		read -r w c <<<"$(nvtx_ns "$nvtx" 1)"
		sw+=("$w") sc+=("$c")
		lost=$("$G" info --format json "$work/n.trace" | jq '.lost_records // 0')
		[ "$lost" = 0 ] || echo "  (a shim round lost $lost records: its figure is not a pair's full cost)"
	done
	echo "NVTX push+pop pair, ns of the calling thread's CPU, 7 alternating rounds of 163840 pairs: plain $(spread "${pc[@]}"), shim $(spread "${sc[@]}"); wall: plain $(spread "${pw[@]}"), shim $(spread "${sw[@]}")"
}
nvtx_ir() {	# nvtx_ir CLIENT N SHIM(0/1): instructions of the application thread
	local out=$work/ncg pre=
	[ "$3" = 1 ] && pre=$shim
	rm -f "$work"/n.trace "$out"-*
	LD_PRELOAD=$pre GPUSHIM_OUTPUT=$work/n.trace GPUSHIM_CUPTI=0 \
		valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
		"$1" bench "$2" >/dev/null 2>&1
	awk '/^totals:/ { print $2 }' "$out"-01
}
nvtx_ns() {	# nvtx_ns CLIENT SHIM(0/1): "wall cpu" ns a pair
	local pre=
	[ "$2" = 1 ] && pre=$shim
	rm -f "$work"/n.trace
	LD_PRELOAD=$pre GPUSHIM_OUTPUT=$work/n.trace GPUSHIM_CUPTI=0 "$1" bench 163840 |
		awk '/^bench:/ { print $2, $7 }'
}
spread() {	# spread X...: "median (min-max)"
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
if [ "${BENCH_ONLY:-}" = nvtx ]; then
	bench_nvtx
	exit 0
fi

# ---- 1. instructions per launch ----
# Per thread (--separate-threads): part 1 is the application's thread, part 2 the shim's writer.
# The writer's share depends on what zstd is given (time deltas measured under valgrind's
# slowdown), so each size runs three times and the median counts.
ir() {	# ir N SHIM(0/1) [SHAPES]: "app writer" instructions of `fake_client steps N 0 SHAPES`
	local out=$work/cg.$1.$2 pre=${det:-} flush=250 tsc=1 app writer
	[ "$2" = 1 ] && pre="$pre ${hook:-$shim}"
	[ -n "${det:-}" ] && flush=60000 tsc=0	# the hooks read the made-up clock_gettime
	rm -f "$work"/t.trace "$out"-*
	LD_LIBRARY_PATH=${cupti_dir:-$B/tests} FAKE_CUDA_LAUNCH_NS=0 LD_PRELOAD=$pre \
		GPUSHIM_OUTPUT=$work/t.trace GPUSHIM_CUPTI=${cupti:-0} GPUSHIM_FLUSH_MS=$flush \
		GPUSHIM_TSC=$tsc \
		valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$out" "$client" steps "$1" 0 "${3:-1}" >/dev/null 2>&1
	app=$(awk '/^totals:/ { print $2 }' "$out"-01)
	writer=0
	[ -f "$out"-02 ] && writer=$(awk '/^totals:/ { print $2 }' "$out"-02)
	echo "$app $writer"
}
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
read -r p1 _ <<<"$(ir $small 0)"
read -r p2 _ <<<"$(ir $big 0)"
plain_per=$(( (p2 - p1) / (big - small) ))
per_launch() {	# per_launch SHAPES: median of three marginals; sets app_per, writer_per, apps, writers
	apps=() writers=()
	for _ in 1 2 3; do
		read -r a1 w1 <<<"$(ir $small 1 "$1")"
		read -r a2 w2 <<<"$(ir $big 1 "$1")"
		apps+=($(( (a2 - a1) / (big - small) - plain_per )))
		writers+=($(( (w2 - w1) / (big - small) )))
	done
	app_per=$(median3 "${apps[@]}") writer_per=$(median3 "${writers[@]}")
}
per_launch 1
echo "instructions per launch added by the shim: $((app_per + writer_per)) (application thread $app_per, writer $writer_per; plain launch $plain_per)"
echo "  (three runs each: application thread ${apps[*]}, writer ${writers[*]}; marginal between $small and $big launches)"

# ---- 1a. the same, the grid taking 8 sizes in turn ----
# No launch repeats its predecessor: the producer writes every LAUNCH in full and the writer
# looks its shape up and writes it by reference (LAUNCH_REFS), as for a PyTorch step's kernels.
per_launch 8
echo "  with 8 launch shapes in turn: $((app_per + writer_per)) (application thread $app_per, writer $writer_per; runs ${apps[*]} / ${writers[*]})"

# ---- 1b. the same with the main thread's clock made up (tests/bench/det_clock.c) ----
# zstd's share of the writer follows the time deltas valgrind's timing gives (42-521 for one
# build in six runs) and where the 250-ms flush cuts chunks. With the same made-up timestamps
# in every run and chunks cut by size only, the counts repeat, so two builds compare on equal
# input; the application thread's figure then counts the made-up clock instead of the vDSO's,
# so only the writer's is given.
if [ -f "$B/tests/libdet_clock.so" ]; then
	det=$B/tests/libdet_clock.so
	per_launch 1
	det_one=$writer_per det_runs="${writers[*]}"
	per_launch 8
	echo "  writer with made-up timestamps: $det_one a launch (runs $det_runs), $writer_per with 8 shapes (runs ${writers[*]})"
	det=
fi

# ---- 1c. the writer with CUPTI's records, from the fake CUPTI (tests/fake_cuda/fake_cupti.c) ----
# A kernel and an API record a launch, converted and encoded by the writer as on the GPU; the
# made-up clock again, so the count repeats. The application thread's count would include the
# fake CUPTI's own work, so only the writer's is given.
if [ -f "$B/tests/libdet_clock.so" ] && [ -f "$B/tests/fake_cupti/libcuda.so.1" ]; then
	det=$B/tests/libdet_clock.so cupti=$B/tests/fake_cupti/libcuda.so.1
	cupti_dir=$B/tests/fake_cupti
	per_launch 1
	echo "  writer with CUPTI's records (fake CUPTI, made-up timestamps): $writer_per a launch (runs ${writers[*]})"
	det= cupti=0 cupti_dir=
fi

# ---- 1d. the floor (tests/bench/floor_hook.c) ----
# The least a recorder of launches can do, counted the same way in place of the shim: two TSC
# reads around the real call, the gap and the duration kept as varint columns, zstd on the
# calling thread every 4,096 launches. At level 1 and at -1 (literals left unencoded); bytes a
# launch natively over $storm launches.
if [ -f "$B/tests/libfloor_hook.so" ]; then
	hook=$B/tests/libfloor_hook.so
	for level in 1 -1; do
		export FLOOR_ZSTD_LEVEL=$level
		per_launch 1
		bytes=$(FAKE_CUDA_LAUNCH_NS=0 LD_PRELOAD=$hook "$client" steps "$storm" 0 2>&1 >/dev/null |
			awk '/^floor_hook:/ { printf "%.2f", $4 / $2 }')
		echo "  the floor, zstd level $level: $((app_per + writer_per)) a launch (runs ${apps[*]}), $bytes bytes a launch"
	done
	unset FLOOR_ZSTD_LEVEL hook
fi

# ---- 1e. native CPU time per launch, per thread (perf's cpu-clock samples, 10 kHz) ----
# Where valgrind's slowdown distorts the writer's work, this is the machine's own time.
cpu_ms() {	# cpu_ms SHIM(0/1): "main writer" ms of CPU for `steps $storm 0` at 0 ns
	local pre=
	[ "$1" = 1 ] && pre=$shim
	rm -f "$work"/t.trace
	FAKE_CUDA_LAUNCH_NS=0 LD_PRELOAD=$pre GPUSHIM_OUTPUT=$work/t.trace GPUSHIM_CUPTI=0 \
		perf record -q -e cpu-clock -F 10000 -o "$work/perf.data" "$client" steps "$storm" 0 \
		>/dev/null 2>&1 || return 1
	perf script -i "$work/perf.data" -F tid 2>/dev/null | sort | uniq -c | sort -rn |
		awk '{ ms[NR] = $1 / 10 } END { printf "%.1f %.1f\n", ms[1], ms[2] }'
}
if command -v perf >/dev/null && cpu_ms 0 >/dev/null; then
	for _ in 1 2 3; do
		read -r pm _ <<<"$(cpu_ms 0)"
		read -r sm sw <<<"$(cpu_ms 1)"
		echo "CPU time for $storm launches of 0 ns: plain $pm ms; shim: application thread $sm ms, writer $sw ms"
	done
else
	echo "CPU time per thread: skipped (perf cannot sample here)"
fi

# ---- 2. launch-bound loop, 2 us launches ----
# The shim as it runs, and with the hooks reading clock_gettime instead of the TSC
# (GPUSHIM_TSC=0, shim/clock.c), alternating with the plain run.
best_plain=0 best_shim=0 best_gettime=0
timed() {	# timed SHIM(0/1) [TSC(0/1)]: ns for `steps $loop 0` with 2 us launches
	local pre= t0 t1
	[ "$1" = 1 ] && pre=$shim
	rm -f "$work"/t.trace
	t0=$(date +%s%N)
	FAKE_CUDA_LAUNCH_NS=2000 LD_PRELOAD=$pre GPUSHIM_OUTPUT=$work/t.trace GPUSHIM_CUPTI=0 \
		GPUSHIM_TSC=${2:-1} "$client" steps "$loop" 0 >/dev/null
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
best() {	# best CURRENT NEW: the smaller, 0 standing for none yet
	if [ "$1" = 0 ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi
}
for _ in $(seq "$rounds"); do
	best_plain=$(best "$best_plain" "$(timed 0)")
	best_shim=$(best "$best_shim" "$(timed 1)")
	best_gettime=$(best "$best_gettime" "$(timed 1 0)")
done
ratio() { awk -v a="$best_plain" -v b="$1" 'BEGIN { printf "%.4f", b / a }'; }
added() { awk -v a="$best_plain" -v b="$1" -v n="$loop" 'BEGIN { printf "%+.0f", (b - a) / n }'; }
echo "launch-bound loop ($loop launches of 2 us, best of $rounds): plain $((best_plain / 1000000)) ms, shim $((best_shim / 1000000)) ms, ratio $(ratio "$best_shim") ($(added "$best_shim") ns a launch); with GPUSHIM_TSC=0 $((best_gettime / 1000000)) ms, ratio $(ratio "$best_gettime") ($(added "$best_gettime") ns a launch)"

# ---- 3. bytes per launch ----
rm -f "$work"/storm.trace
FAKE_CUDA_LAUNCH_NS=0 LD_PRELOAD=$shim GPUSHIM_OUTPUT=$work/storm.trace "$client" steps "$storm" 0 >/dev/null
size=$(stat -c %s "$work/storm.trace")
"$G" info --format json "$work/storm.trace" >"$work/storm.json"
lost=$(jq '.lost_records // 0' "$work/storm.json")
echo "trace size: $size bytes for $storm launches ($lost records lost to full rings), $(awk -v s="$size" -v n="$((storm - lost))" 'BEGIN { printf "%.2f", s / n }') bytes per recorded launch"

# ---- 4. analyzer throughput and memory ----
analyze() {	# analyze TRACE
	local recs t0 t1 rss
	recs=$("$G" info --format json "$1" | jq .records)
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$work/rss" "$G" report --format json "$1" >/dev/null
	t1=$(date +%s%N)
	rss=$(cat "$work/rss")
	echo "analyzer: $recs records in $(( (t1 - t0) / 1000000 )) ms, $(awk -v r="$recs" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", r / (ns / 1e9) / 1e6 }') M records/s, peak RSS $((rss / 1024)) MiB"
	# Its ceiling: the reader alone (decompression, validation, run expansion), best of 3.
	echo "  reader alone: $("$B/tests/read_trace" -n 3 "$1" | sed 's/^.*: //')"
}
analyze "$work/storm.trace"
rm -f "$work"/huge.trace
FAKE_CUDA_LAUNCH_NS=0 LD_PRELOAD=$shim GPUSHIM_OUTPUT=$work/huge.trace "$client" steps "$huge" 0 >/dev/null
analyze "$work/huge.trace"

bench_nvtx
