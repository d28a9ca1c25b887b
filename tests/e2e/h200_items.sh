#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PyTorch script with K loss.item() calls, recorded on the H200 with K = 10 and K = 30:
# 20 more .item() calls are exactly 20 more stream synchronizations and 20 more
# device-to-host copies, and nothing else about the launches changes but the steps' kernels.
. "$(dirname "$0")/lib.sh"
dir=$SOURCE_ROOT/tests/traces/h200
for k in 10 30; do
	"$GPUSHIM_BIN" report --format json "$dir/torch_items_$k.trace" >"$WORK/$k.json" ||
		fail "report torch_items_$k exited $?"
done
d() {
	echo $(($(jget "$WORK/30.json" "$1") - $(jget "$WORK/10.json" "$1")))
}
expect "stream syncs added" "$(d .counts.stream_syncs)" 20
expect "cuMemcpyDtoHAsync_v2 added" \
	"$(d '[.api[] | select(.name == "cuMemcpyDtoHAsync_v2") | .calls] | add // 0')" 20
expect "graph launches" "$(d .counts.graph_launches)" 0
# Each step launches the same kernels: the difference is a multiple of 20.
expect "launches per step" "$(( $(d .counts.launches) % 20 ))" 0
echo "torch_items: +20 syncs, +20 copies"
