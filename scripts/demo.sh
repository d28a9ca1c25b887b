#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job. Installs what is missing and builds; then, on a machine with an NVIDIA GPU,
# records the bundled memory_full test app under the shim (device memory filled past 90 % while
# the GPU computes little: the case gpushim exists for) and reports on it; elsewhere it reports
# on the same app's trace recorded on an H200 (tests/traces/h200/memory_full.trace). The text
# report goes to standard output, the same report as an HTML page beside the demo's trace
# (DEMO_DIR, default build/demo/: memory_full.html for the bundled trace).
# Usage: scripts/demo.sh [--format json]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install
BUILD=${BUILD_DIR:-build}
deps_build "$BUILD"
gpushim=$BUILD/analyzer/gpushim

out=${DEMO_DIR:-$BUILD/demo}
mkdir -p "$out"
if nvidia-smi -L >/dev/null 2>&1 && [ -x "$BUILD/test_apps/memory_full" ]; then
	trace=$out/memory_full-$(date +%Y%m%d-%H%M%S).trace
	echo "recording $BUILD/test_apps/memory_full on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" >&2
	"$gpushim" run -o "$trace" -- "$BUILD/test_apps/memory_full" >&2
else
	trace=tests/traces/h200/memory_full.trace
	echo "no NVIDIA GPU here (or no nvcc to build the test apps): reporting on $trace, recorded on an H200" >&2
fi
echo "trace: $trace" >&2
html=$out/$(basename "${trace%.trace}").html
"$gpushim" report --format html -o "$html" "$trace"
echo "HTML report: $html (open it in a browser: one file, nothing fetched)" >&2
exec "$gpushim" report "$@" "$trace"
