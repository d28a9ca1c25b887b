#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program that dlopens libcuda, uses it through dlsym, dlcloses it and opens it again (a
# plugin loading and unloading a CUDA backend): output unchanged, no crash, every launch of
# both rounds recorded.
. "$(dirname "$0")/lib.sh"
"$RELOAD_CLIENT" >"$WORK/plain.txt"
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/r-%p.trace" "$RELOAD_CLIENT" >"$WORK/shim.txt" ||
	fail "exit $? under the shim"
cmp "$WORK/plain.txt" "$WORK/shim.txt" || fail "output changed: $(cat "$WORK/shim.txt")"
t=$(only_trace "$WORK/r-*.trace")
"$GPUSHIM_BIN" report --format json "$t" >"$WORK/r.json"
expect "launches" "$(jget "$WORK/r.json" .counts.launches)" 6
expect "cuInit" "$(jget "$WORK/r.json" '.api[] | select(.name == "cuInit") | .calls')" 2
expect "complete" "$(jget "$WORK/r.json" .trace.complete)" true
echo "ok: dlclose and reload"
