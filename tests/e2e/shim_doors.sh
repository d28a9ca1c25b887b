#!/bin/sh
# SPDX-License-Identifier: MIT
# The same workload through each door (exported symbols, dlsym on the libcuda handle, the CUDA
# runtime's cuGetProcAddress bootstrap): output byte-identical with and without the shim, and
# the report holds the exact counts, peak and error numbers the client was written to produce.
. "$(dirname "$0")/lib.sh"

for mode in direct dlsym cudart; do
	run_plain "$WORK/plain-$mode.txt" "$mode"
	run_shim "$WORK/shim-$mode.txt" "$WORK/$mode-%p.trace" "$mode"
	cmp "$WORK/plain-$mode.txt" "$WORK/shim-$mode.txt" || fail "$mode: output changed by the shim"
	trace=$(only_trace "$WORK/$mode-*.trace")
	expect "$mode: file mode" "$(stat -c %a "$trace")" 600
	"$GPUSHIM_BIN" report --format json "$trace" >"$WORK/$mode.json"
	r="$WORK/$mode.json"
	expect "$mode: schema" "$(jget "$r" .schema)" gpushim.report/1
	expect "$mode: complete" "$(jget "$r" .trace.complete)" true
	expect "$mode: lost" "$(jget "$r" .trace.lost_records)" 0
	expect "$mode: launches" "$(jget "$r" .counts.launches)" 14
	expect "$mode: kernel launches" "$(jget "$r" .counts.kernel_launches)" 13
	expect "$mode: host functions" "$(jget "$r" .counts.host_funcs)" 1
	expect "$mode: failed launches" "$(jget "$r" .counts.launch_errors)" 1
	expect "$mode: syncs" "$(jget "$r" .counts.syncs)" 3
	expect "$mode: queries" "$(jget "$r" .counts.queries)" 1
	expect "$mode: memcpys" "$(jget "$r" .counts.memcpys)" 3
	expect "$mode: memcpy bytes" "$(jget "$r" .counts.memcpy_bytes)" 12582912
	expect "$mode: memsets" "$(jget "$r" .counts.memsets)" 1
	expect "$mode: allocs" "$(jget "$r" .counts.allocs)" 6
	expect "$mode: frees" "$(jget "$r" .counts.frees)" 6
	expect "$mode: alloc errors" "$(jget "$r" .counts.alloc_errors)" 2
	expect "$mode: errors" "$(jget "$r" .counts.errors)" 3
	expect "$mode: peak" "$(jget "$r" .memory.peak_bytes)" 12582912
	expect "$mode: device total" "$(jget "$r" .memory.device_total_bytes)" 17179869184
	expect "$mode: gpu source" "$(jget "$r" .gpu.source)" host
	expect "$mode: busy unknown" "$(jget "$r" .gpu.busy_pct)" null
	expect "$mode: vec_add" "$(jget "$r" '.kernels[] | select(.name=="vec_add") | .launches')" 10
	expect "$mode: vec_add grid" "$(jget "$r" '.kernels[] | select(.name=="vec_add") | .grid[0]')" 4096
	expect "$mode: scale (CUkernel)" "$(jget "$r" '.kernels[] | select(.name=="scale") | .launches')" 2
	expect "$mode: failing free" "$(jget "$r" '.api[] | select(.name=="cuMemFree_v2") | .errors')" 1
	expect "$mode: NOT_READY is no error" "$(jget "$r" '.api[] | select(.name=="cuStreamQuery") | .errors')" 0
done

# The door decides which exported variant was called; the trace names it.
has_api() {
	jq -e --arg n "$2" '[.api[].name] | index($n) != null' "$1" >/dev/null || fail "$1 lacks $2"
}
has_api "$WORK/direct.json" cuCtxSynchronize
has_api "$WORK/dlsym.json" cuLaunchKernel_ptsz
has_api "$WORK/dlsym.json" cuCtxSynchronize_v2
has_api "$WORK/cudart.json" cuLaunchKernel_ptsz
has_api "$WORK/cudart.json" cuMemcpyDtoH_v2_ptds
has_api "$WORK/cudart.json" cuStreamSynchronize_ptsz
has_api "$WORK/cudart.json" cuCtxSynchronize_v2
echo "ok: three doors, exact counts"
