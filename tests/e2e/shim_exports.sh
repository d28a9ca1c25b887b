#!/bin/sh
# SPDX-License-Identifier: MIT
# libgpushim.so exports only CUDA entry points (and dlsym, the exec family and NVTX's injection entry), no libcuda or libcupti link
# dependency, and every variant the hooks need by exact name.
. "$(dirname "$0")/lib.sh"

nm -D --defined-only "$GPUSHIM_SHIM" | awk '{print $3}' >"$WORK/syms"
bad=$(grep -Ev '^(cu[A-Za-z0-9_]+|dlsym|InitializeInjectionNvtx2|execl|execle|execlp|execv|execve|execveat|execvp|execvpe|fexecve|_exit|_Exit|pthread_exit)$' "$WORK/syms" || true)
[ -z "$bad" ] || fail "unexpected exports: $bad"
for s in cuLaunchKernel cuLaunchKernel_ptsz cuGetProcAddress cuGetProcAddress_v2 \
	cuCtxSynchronize cuCtxSynchronize_v2 cuMemcpyBatchAsync cuMemcpyBatchAsync_v2 \
	cuMemcpyDtoH_v2_ptds cuStreamBeginCapture cuStreamBeginCapture_v2 cuMemHostRegister \
	cuMemHostRegister_v2 cuGraphLaunch_ptsz cuptiActivityRegisterCallbacks cuptiSubscribe dlsym \
	InitializeInjectionNvtx2; do
	grep -qx "$s" "$WORK/syms" || fail "missing export $s"
done
n=$(grep -c '^cu[A-Z]' "$WORK/syms")
[ "$n" -ge 150 ] || fail "only $n driver entry points exported"
needed=$(readelf -d "$GPUSHIM_SHIM" | grep NEEDED || true)
echo "$needed" | grep -Eq 'libcuda|libcupti|libnvToolsExt|libnvtx' && fail "link dependency on the driver: $needed"
echo "ok: $n driver entry points exported"
