#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One trace recorded on the H200 exported in every format: both timelines, each checked as
# Perfetto would read it (check_timeline.py: well-formed packets, declared tracks, no partial
# overlap on a track, flows with both ends, counters on counter tracks, reserved colours, the
# arguments Holistic Trace Analysis reads), with as many kernels, copies, memsets and calls as
# the report counts over the whole run, the Perfetto file the smaller; and the tables, as CSV
# and SQLite, against the report (check_tables.py: counts, names, idle time by cause).
# Usage: export_h200.sh NAME
. "$(dirname "$0")/lib.sh"
name=$1
t=$SOURCE_ROOT/tests/traces/h200/$name.trace
check=$SOURCE_ROOT/tests/e2e/check_timeline.py
"$GPUSHIM_BIN" report --format json --whole "$t" >"$WORK/r.json" || fail "report exited $?"
"$GPUSHIM_BIN" export --format perfetto -o "$WORK/t.pftrace" "$t" || fail "export perfetto exited $?"
"$GPUSHIM_BIN" export --format chrome -o "$WORK/t.json" "$t" || fail "export chrome exited $?"
python3 "$check" perfetto "$WORK/t.pftrace" --report "$WORK/r.json" || fail "$name: perfetto"
python3 "$check" chrome "$WORK/t.json" --report "$WORK/r.json" || fail "$name: chrome"
p=$(stat -c %s "$WORK/t.pftrace")
c=$(stat -c %s "$WORK/t.json")
[ "$p" -lt "$c" ] || fail "$name: perfetto $p bytes, chrome $c"
"$GPUSHIM_BIN" report --format json "$t" >"$WORK/report.json" || fail "report exited $?"
"$GPUSHIM_BIN" export --format csv -o "$WORK/csv" "$t" || fail "export csv exited $?"
db=
if "$GPUSHIM_BIN" export --help | grep -q 'not in this build'; then
	echo "$name: this gpushim was built without SQLite"
else
	"$GPUSHIM_BIN" export --format sqlite -o "$WORK/t.db" "$t" || fail "export sqlite exited $?"
	db=$WORK/t.db
fi
tables=$SOURCE_ROOT/tests/e2e/check_tables.py
python3 "$tables" "$WORK/report.json" "$WORK/csv" $db || fail "$name: tables"
echo "$name: perfetto $p bytes, chrome JSON $c"
