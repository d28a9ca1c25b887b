#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
check_timeline.py - checks a timeline `gpushim export` wrote as Perfetto's trace processor would
read it (trace_processor itself cannot be installed here: it is on no registry this project
reaches), with nothing but the standard library.

  check_timeline.py perfetto FILE [--report REPORT.json]
  check_timeline.py chrome FILE [--report REPORT.json]

perfetto: the file is decoded by a hand-written protobuf reader (varints, fixed64, lengths),
every packet must be well-formed and end where its length says; each track is declared once,
with a declared parent; every TrackEvent names a declared track, its interned names are defined
earlier on its packet sequence (whose first packet clears the incremental state); slices go on
slice tracks, counter values (extra ones too, 8 at most an event) on counter tracks; each
slice's end follows its begin on its track, and sorted by time as Perfetto sorts them, the ends
close the slices they belong to (no two slices of a track partially overlap); every flow an operation continues was begun by a call
earlier in time.

chrome: the JSON parses (times as exact decimals), no two complete slices of one (pid, tid)
partially overlap, every cname is one Chrome's trace viewer reserves, each kernel, copy and
memset has the arguments Holistic Trace Analysis reads (correlation, External id, stream,
device) and each call its correlation, each flow has its start and its end, each inside a
slice of its track.

With --report (`report --format json --whole`): the kernels, copies, memsets and calls counted
agree with the report's. Prints a one-line summary; exits 1 with the first problems found.
"""
import collections
import decimal
import json
import sys

problems = []


def bad(msg):
    problems.append(msg)
    if len(problems) >= 20:
        finish()


def finish():
    if problems:
        for p in problems:
            print("FAIL: " + p, file=sys.stderr)
        sys.exit(1)


# ---- Protobuf ----

class Malformed(Exception):
    pass


def varint(b, i, end):
    x = 0
    shift = 0
    while True:
        if i >= end or shift > 63:
            raise Malformed("varint runs past its message")
        c = b[i]
        i += 1
        x |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return x, i


def fields(b, start=0, end=None):
    """(field, wire type, value) of a message: value an int, or (start, end) of its bytes."""
    end = len(b) if end is None else end
    i = start
    out = []
    while i < end:
        tag, i = varint(b, i, end)
        f, w = tag >> 3, tag & 7
        if f == 0:
            raise Malformed("field number 0")
        if w == 0:
            v, i = varint(b, i, end)
        elif w == 1:
            if i + 8 > end:
                raise Malformed("fixed64 runs past its message")
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif w == 2:
            n, i = varint(b, i, end)
            if i + n > end:
                raise Malformed("length %d runs past its message" % n)
            v = (i, i + n)
            i += n
        elif w == 5:
            if i + 4 > end:
                raise Malformed("fixed32 runs past its message")
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise Malformed("wire type %d" % w)
        out.append((f, w, v))
    return out


def one(fs, field, wire):
    vals = [v for f, w, v in fs if f == field]
    for f, w, v in fs:
        if f == field and w != wire:
            raise Malformed("field %d has wire type %d, not %d" % (field, w, wire))
    return vals[-1] if vals else None


def many(fs, field):
    return [v for f, w, v in fs if f == field]


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# TracePacket, TrackEvent, TrackDescriptor field numbers (protos/perfetto/trace/...).
PKT_TS, PKT_SEQ, PKT_TE, PKT_INTERNED, PKT_FLAGS, PKT_TD = 8, 10, 11, 12, 13, 60
TE_DEBUG, TE_TYPE, TE_NAME_IID, TE_UUID, TE_NAME = 4, 9, 10, 11, 23
TE_COUNTER, TE_DCOUNTER, TE_FLOWS, TE_TFLOWS = 30, 44, 47, 48
TE_EXTRA_UUIDS, TE_EXTRA_VALUES = 45, 46
TD_UUID, TD_NAME, TD_PROCESS, TD_THREAD, TD_PARENT, TD_COUNTER = 1, 2, 3, 4, 5, 8
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
SEQ_CLEARED, SEQ_NEEDS = 1, 2
IN_TABLES = {2: "event_names", 3: "debug_annotation_names", 29: "debug_annotation_strings"}


def check_perfetto(path):
    b = open(path, "rb").read()
    tracks = {}                 # uuid -> (parent, is_counter, name)
    events = []                 # (ts, order, uuid, type, name, flows)
    interned = {}               # seq -> {table: {iid: str}}
    seq_seen = set()
    extra_uuids = []            # (packet, uuid) of extra counter values
    try:
        packets = fields(b)
    except Malformed as e:
        bad("the trace: %s" % e)
        finish()
    for order, (f, w, v) in enumerate(packets):
        if f != 1 or w != 2:
            bad("packet %d: Trace field %d wire %d, not packet (1, bytes)" % (order, f, w))
            continue
        try:
            pk = fields(b, *v)
            seq = one(pk, PKT_SEQ, 0)
            flags = one(pk, PKT_FLAGS, 0) or 0
            if seq is None:
                bad("packet %d: no trusted_packet_sequence_id" % order)
                continue
            if seq not in seq_seen:
                seq_seen.add(seq)
                if not flags & SEQ_CLEARED:
                    bad("packet %d: sequence %d's first packet does not clear its state" %
                        (order, seq))
                interned[seq] = collections.defaultdict(dict)
            names = interned[seq]
            idv = one(pk, PKT_INTERNED, 2)
            if idv:
                if not flags & SEQ_NEEDS:
                    bad("packet %d: interned data without SEQ_NEEDS_INCREMENTAL_STATE" % order)
                for tf, tw, tv in fields(b, *idv):
                    if tf not in IN_TABLES:
                        bad("packet %d: interned table %d unknown to this writer" % (order, tf))
                        continue
                    e = fields(b, *tv)
                    iid, s = one(e, 1, 0), one(e, 2, 2)
                    if not iid or s is None:
                        bad("packet %d: interned entry without iid or name" % order)
                        continue
                    if iid in names[tf]:
                        bad("packet %d: %s iid %d defined twice" % (order, IN_TABLES[tf], iid))
                    names[tf][iid] = b[s[0]:s[1]].decode("utf-8", "replace")
            td = one(pk, PKT_TD, 2)
            te = one(pk, PKT_TE, 2)
            ts = one(pk, PKT_TS, 0)
            if td:
                d = fields(b, *td)
                uuid = one(d, TD_UUID, 0)
                if not uuid:
                    bad("packet %d: track without uuid" % order)
                    continue
                if uuid in tracks:
                    bad("packet %d: track %d declared twice" % (order, uuid))
                nm = one(d, TD_NAME, 2)
                name = b[nm[0]:nm[1]].decode("utf-8", "replace") if nm else None
                proc, thr = one(d, TD_PROCESS, 2), one(d, TD_THREAD, 2)
                if thr:
                    t = fields(b, *thr)
                    if one(t, 1, 0) is None or one(t, 2, 0) is None:
                        bad("packet %d: thread track %d without pid or tid" % (order, uuid))
                    tn = one(t, 5, 2)
                    name = b[tn[0]:tn[1]].decode() if tn else name
                if proc:
                    p = fields(b, *proc)
                    if one(p, 1, 0) is None:
                        bad("packet %d: process track %d without pid" % (order, uuid))
                    pn = one(p, 6, 2)
                    name = b[pn[0]:pn[1]].decode() if pn else name
                if name is None:
                    bad("packet %d: track %d has no name" % (order, uuid))
                tracks[uuid] = (one(d, TD_PARENT, 0), one(d, TD_COUNTER, 2) is not None, name)
            elif te:
                if ts is None:
                    bad("packet %d: track event without timestamp" % order)
                    continue
                e = fields(b, *te)
                typ = one(e, TE_TYPE, 0)
                uuid = one(e, TE_UUID, 0)
                iid = one(e, TE_NAME_IID, 0)
                name = None
                if (iid is not None or many(e, TE_DEBUG)) and not flags & SEQ_NEEDS:
                    bad("packet %d: interned names used without SEQ_NEEDS_INCREMENTAL_STATE" %
                        order)
                if iid is not None:
                    name = names[2].get(iid)
                    if name is None:
                        bad("packet %d: event name iid %d not defined on sequence %d" %
                            (order, iid, seq))
                for a in many(e, TE_DEBUG):
                    ad = fields(b, *a)
                    an = one(ad, 1, 0)
                    if an not in names[3]:
                        bad("packet %d: argument name iid %s not defined" % (order, an))
                    sv = one(ad, 17, 0)
                    if sv is not None and sv not in names[29]:
                        bad("packet %d: argument string iid %d not defined" % (order, sv))
                value = one(e, TE_COUNTER, 0)
                if value is None:
                    value = one(e, TE_DCOUNTER, 1)
                if typ not in (BEGIN, END, INSTANT, COUNTER):
                    bad("packet %d: event type %s" % (order, typ))
                if typ == COUNTER and value is None:
                    bad("packet %d: counter event without a value" % order)
                if typ in (BEGIN, INSTANT) and name is None:
                    bad("packet %d: slice without a name" % order)
                extra = many(e, TE_EXTRA_UUIDS)
                if len(extra) != len(many(e, TE_EXTRA_VALUES)) or len(extra) > 8:
                    bad("packet %d: %d extra counter tracks, %d values (8 at most)" %
                        (order, len(extra), len(many(e, TE_EXTRA_VALUES))))
                for u in extra:
                    extra_uuids.append((order, u))
                events.append((ts, order, uuid, typ, name, many(e, TE_FLOWS) +
                               many(e, TE_TFLOWS)))
            elif ts is None and not idv:
                bad("packet %d: neither a track, an event nor interned names" % order)
        except Malformed as e:
            bad("packet %d: %s" % (order, e))
    finish()

    for order, u in extra_uuids:
        if u not in tracks or not tracks[u][1]:
            bad("packet %d: an extra counter value on %s, no declared counter track" % (order, u))
    for uuid, (parent, _, _) in tracks.items():
        if parent and parent not in tracks:
            bad("track %d: parent %d never declared" % (uuid, parent))
    # Ends pair with their begins in file order (the writer puts a slice's end after its
    # begin on its track); then, in Perfetto's time order, each end must close its own slice.
    open_begin = {}
    slices = collections.defaultdict(list)      # uuid -> [(start, end, order)]
    counts = collections.Counter()
    flow_start = {}
    for ts, order, uuid, typ, name, flows in events:
        if uuid not in tracks:
            bad("event %d: track %s never declared" % (order, uuid))
            continue
        parent, is_counter, tname = tracks[uuid]
        if is_counter != (typ == COUNTER):
            bad("event %d: %s on %s track %s" % (order, "counter value" if typ == COUNTER
                                                 else "slice", "a counter" if is_counter
                                                 else "a slice", tname))
        if typ == BEGIN:
            if uuid in open_begin:
                bad("event %d: a slice begins on %s before the last one ended" % (order, tname))
            open_begin[uuid] = (ts, order, name)
        elif typ == END:
            if uuid not in open_begin:
                bad("event %d: an end on %s with no slice open" % (order, tname))
                continue
            s = open_begin.pop(uuid)
            if ts < s[0]:
                bad("event %d: slice %s ends before it begins" % (order, s[2]))
            slices[uuid].append((s[0], ts, s[1]))
            kind = ("calls" if tname.startswith("host thread") else
                    "kernels" if " kernels" in tname else
                    "copies" if " copies" in tname else tname)
            counts[(kind, s[2])] += 1
    for uuid, s in open_begin.items():
        bad("track %s: slice %s never ends" % (tracks[uuid][2], s[2]))
    for uuid, v in slices.items():
        v.sort()
        stack = []
        for start, end, order in v:
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                bad("track %s: a slice [%d, %d] partially overlaps one ending at %d" %
                    (tracks[uuid][2], start, end, stack[-1]))
                break
            stack.append(end)
    # Flows: begun on a host thread's track, continued later in time by GPU work.
    nr_flows = 0
    for ts, order, uuid, typ, name, flows in sorted(events):
        if not flows or uuid not in tracks:
            continue
        is_host = tracks[uuid][2].startswith("host thread")
        for fid in flows:
            if is_host:
                flow_start[fid] = ts
            elif fid not in flow_start:
                bad("event %d: flow %x continued with no call before it" % (order, fid))
            else:
                nr_flows += 1
    finish()
    kinds = collections.Counter()
    for (kind, name), n in counts.items():
        kinds[kind] += n
    print("perfetto: %d packets, %d tracks, %d slices, %d flows" %
          (len(packets), len(tracks), sum(len(v) for v in slices.values()), nr_flows))
    return {"kernels": kinds["kernels"],
            "copies": sum(n for (t, nm), n in counts.items() if t == "copies" and nm != "memset"),
            "memsets": counts[("copies", "memset")],
            "calls": kinds["calls"], "flows": nr_flows}


# ---- Chrome JSON ----

# tracing/base/color_scheme.html's reservedColorsByName: any other cname is an error there.
CNAMES = {
    "thread_state_uninterruptible", "thread_state_iowait", "thread_state_running",
    "thread_state_runnable", "thread_state_sleeping", "thread_state_unknown",
    "background_memory_dump", "light_memory_dump", "detailed_memory_dump",
    "vsync_highlight_color", "generic_work", "good", "bad", "terrible", "black", "grey",
    "white", "yellow", "olive", "rail_response", "rail_animation", "rail_idle", "rail_load",
    "startup", "heap_dump_stack_frame", "heap_dump_object_type", "heap_dump_child_node_arrow",
    "cq_build_running", "cq_build_passed", "cq_build_failed", "cq_build_abandoned",
    "cq_build_attempt_runnig", "cq_build_attempt_passed", "cq_build_attempt_failed",
}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def check_chrome(path):
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    ev = doc["traceEvents"]
    by_track = collections.defaultdict(list)
    flows = collections.defaultdict(dict)
    counts = collections.Counter()
    corr_calls, corr_ops = set(), []
    for i, e in enumerate(ev):
        ph = e.get("ph")
        if "cname" in e and e["cname"] not in CNAMES:
            bad("event %d: cname %r is no reserved colour name" % (i, e["cname"]))
        if ph == "X":
            ts, dur = decimal.Decimal(e["ts"]), decimal.Decimal(e["dur"])
            if dur < 0:
                bad("event %d: negative duration" % i)
            by_track[(e["pid"], e["tid"])].append((ts, ts + dur, i))
            cat = e.get("cat")
            args = e.get("args", {})
            counts[cat] += 1
            if cat in GPU_CATS:
                for k in ("correlation", "External id", "stream", "device"):
                    if not isinstance(args.get(k), int):
                        bad("event %d (%s): no integer argument %r" % (i, cat, k))
                if args.get("correlation"):
                    corr_ops.append((e["pid"], args["correlation"], i))
            elif cat == "cuda_driver":
                if not isinstance(args.get("correlation"), int):
                    bad("event %d: call without correlation" % i)
                elif (e["pid"], args["correlation"]) in corr_calls:
                    bad("event %d: correlation %d taken by another call" %
                        (i, args["correlation"]))
                corr_calls.add((e["pid"], args["correlation"]))
        elif ph in ("s", "f"):
            if e["id"] in flows[ph]:
                bad("event %d: flow %s id %s twice" % (i, ph, e["id"]))
            flows[ph][e["id"]] = ((e["pid"], e["tid"]), decimal.Decimal(e["ts"]))
        elif ph == "C":
            for k, v in e.get("args", {}).items():
                if not isinstance(v, (int, decimal.Decimal)):
                    bad("event %d: counter %s is not a number" % (i, k))
    for pid, corr, i in corr_ops:
        if (pid, corr) not in corr_calls:
            bad("event %d: correlation %d is no call's" % (i, corr))
            break
    for key, v in by_track.items():
        v.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, i in v:
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                bad("pid %s tid %s: slice %d [%s, %s] partially overlaps one ending at %s" %
                    (key[0], key[1], i, start, end, stack[-1]))
                break
            stack.append(end)
    if set(flows["s"]) != set(flows["f"]):
        bad("%d flow starts without an end, %d ends without a start" %
            (len(set(flows["s"]) - set(flows["f"])), len(set(flows["f"]) - set(flows["s"]))))

    def inside(track, ts):
        v = by_track.get(track, [])
        return any(s <= ts <= e for s, e, _ in v)
    # A flow's ends each bind to a slice of its track (checked for a sample: it is quadratic).
    for fid in list(flows["s"])[:2000]:
        for ph in ("s", "f"):
            if fid in flows[ph] and not inside(*flows[ph][fid]):
                bad("flow %s: its %s end is in no slice of its track" % (fid, ph))
    finish()
    print("chrome: %d events, %d tracks, %d flows" % (len(ev), len(by_track), len(flows["s"])))
    return {"kernels": counts["kernel"], "copies": counts["gpu_memcpy"],
            "memsets": counts["gpu_memset"], "calls": counts["cuda_driver"],
            "flows": len(flows["s"])}


def main():
    if len(sys.argv) not in (3, 5) or sys.argv[1] not in ("perfetto", "chrome"):
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        sys.exit(2)
    got = (check_perfetto if sys.argv[1] == "perfetto" else check_chrome)(sys.argv[2])
    if len(sys.argv) == 5:
        r = json.load(open(sys.argv[4]))
        want = {"kernels": r["gpu"]["kernels"], "copies": r["gpu"]["memcpys"],
                "memsets": r["gpu"]["memsets"], "calls": r["counts"]["calls"]}
        for k, v in want.items():
            if got[k] != v:
                bad("%s: %d in the timeline, %d in the report" % (k, got[k], v))
        # Every operation joined to a call that can cause GPU work has its arrow.
        if sys.argv[1] == "chrome" and got["flows"] != r["gpu"]["joined"]:
            bad("flows: %d, the report joined %d operations" % (got["flows"], r["gpu"]["joined"]))
    finish()


main()
