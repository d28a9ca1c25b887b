#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
check_tables.py - checks the tables `gpushim export --format csv|sqlite` wrote for one trace
against the report of the same trace (`report --format json`), with the standard library's csv
and sqlite3 modules (the readers pandas and SQL users have):

  check_tables.py REPORT.json CSV_DIR [DATABASE]

Every CSV file parses, has its header and as many columns in each row; the rows of kernels,
copies and memsets (memops), calls, steps and NVTX ranges are as many as the report counts; the
kernel names (demangled and as recorded) are the report's kernels'; each gap's cause is a known
one, and the idle time by cause summed over the gaps is the report's for the causes it measures
from gaps; the database holds the same rows as the CSV files. Exits 1 with what differs.
"""
import csv
import json
import sqlite3
import sys

TABLES = ["processes", "names", "kernels", "memops", "calls", "gaps", "steps", "ranges"]
GAP_CAUSES = ["host_sync", "launch_overhead", "cpu_bound", "memcpy", "allocation", "noise",
              "dependency", "module_load"]
problems = []


def bad(msg):
    problems.append(msg)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        bad("%s: no header" % path)
        return [], []
    for i, r in enumerate(rows[1:]):
        if len(r) != len(rows[0]):
            bad("%s: row %d has %d columns, the header %d" % (path, i + 1, len(r), len(rows[0])))
            break
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def main():
    if len(sys.argv) not in (3, 4):
        print("usage: check_tables.py REPORT.json CSV_DIR [DATABASE]", file=sys.stderr)
        sys.exit(2)
    r = json.load(open(sys.argv[1]))
    t = {}
    heads = {}
    for name in TABLES:
        heads[name], t[name] = read_csv("%s/%s.csv" % (sys.argv[2], name))

    def count(name, got, want):
        if got != want:
            bad("%s: %d rows, the report counts %d" % (name, got, want))
    count("kernels", len(t["kernels"]), r["gpu"]["kernels"])
    count("memops", len(t["memops"]), r["gpu"]["memcpys"] + r["gpu"]["memsets"])
    count("memops memsets", sum(1 for x in t["memops"] if x["kind"] == "memset"),
          r["gpu"]["memsets"])
    count("calls", len(t["calls"]), r["counts"]["calls"])
    count("launch calls", sum(1 for x in t["calls"] if x["kind"] == "launch"),
          r["counts"]["launches"])
    count("steps", len(t["steps"]), r["steps"]["count"] if r["steps"]["source"] else 0)
    count("steady steps", sum(int(x["steady"]) for x in t["steps"]),
          r["steps"]["steady_steps"] if r["steps"]["source"] else 0)
    ri = r["ranges_info"]
    count("ranges", len(t["ranges"]), ri["ranges"] - ri["not_kept"] if ri else 0)
    count("processes", len(t["processes"]), 1)

    # Names: the report's kernels, each demangled and as recorded.
    names = {(x["name"], x["mangled"]) for x in t["names"]}
    want = {(k["name"], k["mangled"] or k["name"]) for k in r["kernels"]}
    if {n for n, _ in names} != {n for n, _ in want}:
        bad("names: %s in the tables only, %s in the report only" %
            (sorted({n for n, _ in names} - {n for n, _ in want})[:3],
             sorted({n for n, _ in want} - {n for n, _ in names})[:3]))
    elif names != want:
        bad("names: the mangled forms differ: %s" % sorted(names ^ want)[:3])
    ids = {x["name_id"]: x["name"] for x in t["names"]}
    for k in t["kernels"]:
        if ids.get(k["name_id"]) != k["name"]:
            bad("kernels: name_id %s is not %s" % (k["name_id"], k["name"]))
            break

    # Gaps: known causes; the time by cause the findings measure from gaps is the report's.
    by_cause = {c: 0 for c in GAP_CAUSES}
    for g in t["gaps"]:
        if g["cause"] not in GAP_CAUSES:
            bad("gaps: cause %r" % g["cause"])
            break
        parts = sum(int(g[c + "_ns"]) for c in GAP_CAUSES)
        if parts != int(g["dur_ns"]):
            bad("gaps: a gap of %s ns in parts summing to %d" % (g["dur_ns"], parts))
            break
        for c in GAP_CAUSES:
            by_cause[c] += int(g[c + "_ns"])
    for a in r["attribution"]:
        if a["cause"] in ("host_sync", "launch_overhead", "cpu_bound", "allocation") and \
                a["status"] == "measured" and by_cause[a["cause"]] != a["time_ns"]:
            bad("gaps: %s %d ns, the report %d" % (a["cause"], by_cause[a["cause"]],
                                                    a["time_ns"]))
    if r["gpu"]["noise_ns"] is not None and by_cause["noise"] != r["gpu"]["noise_ns"]:
        bad("gaps: noise %d ns, the report %d" % (by_cause["noise"], r["gpu"]["noise_ns"]))

    if len(sys.argv) == 4:
        db = sqlite3.connect(sys.argv[3])
        for name in TABLES:
            cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % name)]
            if cols != heads[name]:
                bad("database %s: columns %s, the CSV's %s" % (name, cols, heads[name]))
            n = db.execute("SELECT COUNT(*) FROM %s" % name).fetchone()[0]
            if n != len(t[name]):
                bad("database %s: %d rows, the CSV %d" % (name, n, len(t[name])))
        got = dict(db.execute("SELECT cause, SUM(dur_ns) FROM gaps GROUP BY cause"))
        want = {}
        for g in t["gaps"]:
            want[g["cause"]] = want.get(g["cause"], 0) + int(g["dur_ns"])
        if got != want:
            bad("database gaps by cause %s, the CSV's %s" % (got, want))
        got = db.execute("SELECT COUNT(*) FROM kernels k JOIN names n USING (pid, name_id) "
                         "WHERE k.name = n.name").fetchone()[0]
        if got != len(t["kernels"]):
            bad("database: %d of %d kernels join their name" % (got, len(t["kernels"])))
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("tables: %s" % ", ".join("%s %d" % (n, len(t[n])) for n in TABLES))


main()
