#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernel names as the outputs print them, over every trace recorded on the H200: no "name" of
# report JSON, diff JSON (each trace against the next) or a timeline is mangled C++ (starts
# with _Z), nor a site's "after", "kernel" or "memory"; report JSON keeps each kernel's name
# as recorded in "mangled", and a name that is not mangled C++ (Triton's, XLA's, C's) is left
# as recorded; no two rows of the text report's kernel table print the same name, short or
# --wide.
. "$(dirname "$0")/lib.sh"
G=$GPUSHIM_BIN
traces=("$SOURCE_ROOT"/tests/traces/h200/*.trace)
[ "${#traces[@]}" -ge 50 ] || fail "only ${#traces[@]} traces"

# table_names REPORT: the names of its kernel table's rows, one a line, from the column the
# header's "name" starts, moved right as far as a grid/block wider than its 18 columns pushes
# the row (2097152,1,1/128,1,1); a row whose name does not start there is MISALIGNED.
table_names() {
	awk '
	/^kernels \(by GPU time\)$/ { getline; col = index($0, " name") + 1; inside = 1; next }
	inside && (/^$/ || /^  \.\.\. [0-9]+ more$/) { inside = 0 }
	inside {
		at = col
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9,]+\/[0-9,]+$/ && length($i) > 18) {
				at += length($i) - 18
				break
			}
		if (substr($0, at - 1, 1) != " " || substr($0, at, 1) == " ") {
			print "MISALIGNED: " $0
			exit
		}
		print substr($0, at)
	}' "$1"
}

demangled=0 plain=0 n=0
for i in "${!traces[@]}"; do
	t=${traces[$i]}
	next=${traces[$(((i + 1) % ${#traces[@]}))]}
	name=$(basename "$t" .trace)

	"$G" report --format json "$t" >"$WORK/r.json" || fail "$name: report exited $?"
	expect "$name: report JSON, names not mangled" \
		"$(jq -c '[.. | objects | (.name?, .after?, .kernel?, .memory?) | strings |
			select(startswith("_Z"))]' "$WORK/r.json")" "[]"
	expect "$name: every kernel has mangled, a plain name left as it is" \
		"$(jq '[.kernels[] | (.mangled | type) == "string" and
			(.mangled | startswith("_Z")) == (.name != .mangled)] | all' "$WORK/r.json")" true
	demangled=$((demangled + $(jq '[.kernels[] | select(.mangled | startswith("_Z"))] | length' "$WORK/r.json")))
	plain=$((plain + $(jq '[.kernels[] | select(.mangled | startswith("_Z") | not)] | length' "$WORK/r.json")))

	for wide in "" --wide; do
		# shellcheck disable=SC2086 # an option or none
		"$G" report $wide "$t" >"$WORK/r.txt" || fail "$name: report $wide exited $?"
		table_names "$WORK/r.txt" >"$WORK/rows"
		! grep -q "^MISALIGNED: " "$WORK/rows" || fail "$name: report $wide: $(head -1 "$WORK/rows")"
		! grep -q "^_Z" "$WORK/rows" || fail "$name: report $wide: a mangled row: $(grep -m1 "^_Z" "$WORK/rows")"
		expect "$name: report $wide: rows printing alike" "$(sort "$WORK/rows" | uniq -d)" ""
		expect "$name: report $wide: rows" "$(wc -l <"$WORK/rows")" \
			"$(jq '[.kernels | length, 15] | min' "$WORK/r.json")"
	done

	"$G" diff --format json "$t" "$next" >"$WORK/d.json" || fail "$name: diff exited $?"
	expect "$name: diff JSON, names not mangled" \
		"$(jq -c '[.. | objects | .name? | strings | select(startswith("_Z"))]' "$WORK/d.json")" "[]"
	expect "$name: diff JSON, a kernel's key is its mangled name" \
		"$(jq '[.changes[] | select(.kind == "kernel") | .key == .mangled] | all' "$WORK/d.json")" true
	n=$((n + 1))
done
[ "$demangled" -gt 100 ] && [ "$plain" -gt 50 ] ||
	fail "kernels: $demangled mangled C++, $plain plain: the traces changed?"

# The timeline of every trace, one document: names as the exporter writes them ("name":"...).
"$G" export --format chrome -o "$WORK/all.json" "${traces[@]}" || fail "export exited $?"
expect "timeline: names not mangled" "$(grep -o '"name":"_Z' "$WORK/all.json" | wc -l)" 0
[ "$(grep -o '"mangled":"_Z' "$WORK/all.json" | wc -l)" -gt 0 ] ||
	fail "timeline: no kernel's name as recorded in its arguments"
echo "names: $n traces ($demangled C++ kernels demangled, $plain plain), their diffs and timeline"
