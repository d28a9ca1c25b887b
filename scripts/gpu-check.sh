#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU end-to-end check: runs every test app and PyTorch/JAX script under the shim and checks
# the results (scripts/gpu_check.py says what each check means). Exits 77 - "skipped" to
# meson - where there is no NVIDIA GPU. Expects a built tree (BUILD, default build/, built on
# any machine with the CUDA toolkit) and python3 with torch and jax for the Python parts.
# Usage: scripts/gpu-check.sh [--only PART,...]   PART: recording cupti profiler findings counters
#        where diff robustness nvtx bench perf (the default: all of them) analyzer twins modes
#        job stackcost detach soak
set -uo pipefail
cd "$(dirname "$0")/.."
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "gpu-check: no NVIDIA GPU here; skipped"
	exit 77
fi
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/analyzer/gpushim" ] || [ ! -f "$BUILD/shim/libgpushim.so" ] ||
	[ ! -x "$BUILD/test_apps/runtime_api" ]; then
	echo "gpu-check: $BUILD is not built (with test apps); run scripts/test.sh first" >&2
	exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
exec python3 scripts/gpu_check.py --build "$BUILD" "$@"
