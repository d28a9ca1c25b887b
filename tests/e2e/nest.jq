# nest.jq - over a Chrome trace-event document, how many complete slices ("ph": "X") overlap
# a slice of their track (pid/tid) partly instead of nesting in it or following it (0: every
# track nests or follows). Used by analyzer_cli.sh and analyzer_hostile.sh on whatif --export.
[.traceEvents[] | select(.ph == "X") | {k: "\(.pid)/\(.tid)", s: (.ts * 1000 | round), e: ((.ts + .dur) * 1000 | round)}]
| group_by(.k)
| map(sort_by(.s, -.e)
	| reduce .[] as $x ({stack: [], bad: 0};
		.stack |= map(select(. > $x.s))
		| (if (.stack | length) > 0 and .stack[-1] < $x.e then .bad += 1 else . end)
		| .stack += [$x.e])
	| .bad)
| add // 0
