#!/bin/sh
# SPDX-License-Identifier: MIT
# Stream capture: launches made while capturing are recorded and flagged as captured (they do
# not run then); the graph launches that replay them are recorded as graph launches.
. "$(dirname "$0")/lib.sh"

run_plain "$WORK/plain.txt" capture
run_shim "$WORK/shim.txt" "$WORK/c-%p.trace" capture
cmp "$WORK/plain.txt" "$WORK/shim.txt" || fail "output changed by the shim"
"$GPUSHIM_BIN" report --format json "$(only_trace "$WORK/c-*.trace")" >"$WORK/r.json"
expect "kernel launches" "$(jget "$WORK/r.json" .counts.kernel_launches)" 3
expect "captured" "$(jget "$WORK/r.json" .counts.captured_launches)" 3
expect "graph launches" "$(jget "$WORK/r.json" .counts.graph_launches)" 2
expect "captured kernel" "$(jget "$WORK/r.json" '.kernels[0].captured')" 3
echo "ok: capture and replay"
