#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# report --format html against report --format json, for every trace given (meson: the H200
# traces): the page is valid UTF-8, every tag closed where it was opened, nothing in it fetches,
# embeds or runs what the page did not write (no URL but #fragments, no event handler, one
# inline script); every picture draws something; each figure the page names (data-json) equals
# the JSON's, shown in the text report's units; the causes, kernels and API tables have the
# JSON's rows in its order; the timeline's idle time by cause adds up to the findings'. Then
# several traces (a section each, the combined view), --top/--all/--wide, standard output
# against -o, the errors, and traces whose strings are markup or terminal controls.
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import html_lib as H  # noqa: E402

G = os.environ['GPUSHIM_BIN']
ROOT = os.environ['SOURCE_ROOT']
T = os.path.join(ROOT, 'tests', 'traces', 'h200')
FAILED = []
TOP = 100       # the page's rows a table by default (report_html.c HTML_TOP_DEFAULT)


def rows(root, table_id):
    for t in root.find_all('table'):
        if t.attrs.get('id') == table_id:
            body = [c for c in t.children if getattr(c, 'tag', None) == 'tbody']
            return [r for r in body[0].children if getattr(r, 'tag', None) == 'tr']
    return None


def read_page(what, raw):
    try:
        text = raw.decode('utf-8', errors='strict')
    except UnicodeDecodeError as e:
        FAILED.append('%s: not UTF-8: %s' % (what, e))
        return None, None
    if not text.startswith('<!DOCTYPE html>\n<html lang="en">'):
        FAILED.append('%s: does not begin as an HTML5 page' % what)
    root, errors = H.parse(text)
    FAILED.extend('%s: %s' % (what, e) for e in errors[:5])
    FAILED.extend(H.check_safety(root, text, what))
    failed, _ = H.check_charts(root, what)
    FAILED.extend(failed)
    return root, text


def idle_sums(rep):
    """What the timeline's idle layers must add up to (findings.h: the gaps' parts)."""
    measured = {a['cause']: a['time_ns'] for a in rep['attribution'] if a['status'] == 'measured'}
    g = rep['gpu']
    want = {c: measured.get(c, 0) for c in ('host_sync', 'launch_overhead', 'cpu_bound',
                                            'allocation')}
    want['memcpy'] = measured.get('memcpy', 0) - (g['exposed_copy_ns'] or 0)
    want['noise'] = g['noise_ns'] or 0
    want['dependency'] = g['dependency_wait_ns'] or 0
    want['module_load'] = (g['module_load_ns'] or 0) + (g['profiler_setup_ns'] or 0)
    return want


def check_section(what, root, sec, rep, sec_no):
    """One process's section against its report @rep."""
    failed, keys = H.check_figures(sec, {'reports': [None] * sec_no + [rep]} if sec_no is not None
                                   else rep, what)
    FAILED.extend(failed)
    need = {'verdict.summary', 'verdict.primary'}
    sig = rep['verdict']['signals']
    if sig['gpu_busy_pct'] is not None:
        need |= {'verdict.signals.gpu_busy_pct', 'verdict.signals.sm_fill_pct', 'span_ns'}
    if rep['memory']['peak_pct'] is not None:
        need.add('memory.peak_pct')
    if sig['steps_per_s'] is not None:
        need |= {'verdict.signals.steps_per_s', 'steps.p50_ns'}
    elif sig['kernels_per_s'] is not None:
        need.add('verdict.signals.kernels_per_s')
    if sig['sm_active_pct'] is not None:
        need.add('verdict.signals.sm_active_pct')
    if rep['verdict']['excluded'] is not None:
        need.add('verdict.excluded')
    for k in sorted(need - keys):
        FAILED.append('%s: the page does not show %s' % (what, k))

    n = sec_no or 0
    ranked = rep['verdict']['ranked']
    got = rows(sec, 'causes-%d' % n)
    if ranked and (got is None or len(got) != len(ranked)):
        FAILED.append('%s: causes table: %s rows for %d causes' %
                      (what, None if got is None else len(got), len(ranked)))
    for i in range(len(ranked)):
        if 'attribution.%d.cause' % i not in keys or 'attribution.%d.share_pct' % i not in keys:
            FAILED.append('%s: cause %d (%s) not shown' % (what, i + 1, ranked[i]))
    for table, key, field in (('kernels', 'kernels', 'launches'), ('api', 'api', 'calls')):
        got = rows(sec, '%s-%d' % (table, n))
        want = min(len(rep[key]), TOP)
        if want and (got is None or len(got) != want):
            FAILED.append('%s: %s table: %s rows, want %d' %
                          (what, table, None if got is None else len(got), want))
        for i in range(want):
            if '%s.%d.%s' % (key, i, field) not in keys:
                FAILED.append('%s: %s row %d has no %s' % (what, table, i + 1, field))
                break
    for i, r in enumerate(rows(sec, 'kernels-%d' % n) or []):
        cell = r.children[-1]
        if cell.attrs.get('title') != H.shown(rep['kernels'][i]['name']):
            FAILED.append('%s: kernel %d: title %r, JSON name %r' %
                          (what, i + 1, cell.attrs.get('title', '')[:80],
                           rep['kernels'][i]['name'][:80]))
            break

    svgs = list(sec.find_all('svg'))
    timeline = [s for s in svgs if 'timeline' in s.attrs.get('class', '').split()]
    if rep['trace_span_ns'] and not timeline:
        FAILED.append('%s: no timeline' % what)
    if timeline:
        layers = {p.attrs['data-layer']: int(p.attrs['data-total-ns'])
                  for p in timeline[0].walk() if 'data-total-ns' in p.attrs}
        if rep['gpu']['busy_pct'] is not None:
            for part, want in idle_sums(rep).items():
                if layers.get(part, 0) != want:
                    FAILED.append('%s: timeline %s %d ns, the findings %d' %
                                  (what, part, layers.get(part, 0), want))
            idle = sum(v for k, v in layers.items() if k not in ('busy', 'no GPU timestamps'))
            if idle != rep['gpu']['idle_ns']:
                FAILED.append('%s: timeline idle %d ns, gpu.idle_ns %d' %
                              (what, idle, rep['gpu']['idle_ns']))
            if not layers.get('busy'):
                FAILED.append('%s: timeline without busy time' % what)
        # Stretches without GPU timestamps: a sampled run's, or while a profiler held CUPTI.
        if (rep['gpu']['host_only_ns'] > 0) != ('no GPU timestamps' in layers):
            FAILED.append('%s: %d ns without GPU timestamps, timeline layers %s' %
                          (what, rep['gpu']['host_only_ns'], sorted(layers)))
    has_steps = [s for s in svgs if 'steps' in s.attrs.get('class', '').split()]
    if bool(has_steps) != bool(rep['steps']['series']):
        FAILED.append('%s: %d step pictures for %d steps' %
                      (what, len(has_steps), len(rep['steps']['series'])))


def one(trace, tmp):
    what = os.path.relpath(trace, ROOT)
    out = os.path.join(tmp, 'one.html')
    got = H.report_pair(G, [trace], out)
    if isinstance(got, str):
        FAILED.append(got)
        return None
    rep, raw = got
    root, _ = read_page(what, raw)
    if root is None:
        return None
    secs = list(root.find_all('section', 'process'))
    if len(secs) != 1:
        FAILED.append('%s: %d process sections' % (what, len(secs)))
        return None
    check_section(what, root, secs[0], rep, None)
    return len(raw)


def several(paths, tmp):
    what = 'report of ' + ' '.join(os.path.basename(p) for p in paths)
    got = H.report_pair(G, paths, os.path.join(tmp, 'many.html'))
    if isinstance(got, str):
        FAILED.append(got)
        return
    doc, raw = got
    root, _ = read_page(what, raw)
    if root is None:
        return
    secs = list(root.find_all('section', 'process'))
    if len(secs) != len(paths):
        FAILED.append('%s: %d sections' % (what, len(secs)))
        return
    for i, sec in enumerate(secs):
        if sec.attrs.get('id') != 'p%d' % i:
            FAILED.append('%s: section %d has id %s' % (what, i, sec.attrs.get('id')))
        check_section('%s [%d]' % (what, i), root, sec, doc['reports'][i], i)
    comb = list(root.find_all('section', 'combined'))
    if len(comb) != 1:
        FAILED.append('%s: %d combined sections' % (what, len(comb)))
        return
    failed, keys = H.check_figures(comb[0], doc, what + ' combined')
    FAILED.extend(failed)
    for k in ('processes', 'verdict.primary'):
        if k not in keys:
            FAILED.append('%s: the combined view does not show %s' % (what, k))
    n = len(doc['combined']['attribution'])
    if n and len(rows(comb[0], 'causes-combined') or []) != n:
        FAILED.append('%s: the combined causes table lacks rows' % what)
    procs = rows(comb[0], 'processes') or []
    if len(procs) != len(paths):
        FAILED.append('%s: %d rows in the processes table' % (what, len(procs)))


def options(tmp):
    train = os.path.join(T, 'torch_train.trace')
    out = os.path.join(tmp, 'opt.html')

    def page(*args):
        p = H.run([G, 'report', '--format', 'html', *args, train])
        if p.returncode:
            FAILED.append('report --format html %s: exit %d' % (' '.join(args), p.returncode))
            return None
        root, errors = H.parse(p.stdout.decode())
        FAILED.extend(errors)
        return root, p.stdout

    doc = H.report_pair(G, [train], out)[0]
    got = page('--top', '3')
    if got:
        r = rows(got[0], 'kernels-0')
        if len(r) != 3 or '... %d more' % (len(doc['kernels']) - 3) not in got[1].decode():
            FAILED.append('--top 3: %d kernel rows, or no "... N more"' % len(r))
    got = page('--all')
    if got and len(rows(got[0], 'kernels-0')) != len(doc['kernels']):
        FAILED.append('--all: not every kernel')
    got = page('--wide')
    if got:
        for i, r in enumerate(rows(got[0], 'kernels-0')):
            if r.children[-1].text() != H.shown(doc['kernels'][i]['name']):
                FAILED.append('--wide: kernel %d shows %r' % (i + 1, r.children[-1].text()[:80]))
                break
    # Standard output and -o write the same page.
    with open(out, 'rb') as f:
        if H.run([G, 'report', '--format', 'html', train]).stdout != f.read():
            FAILED.append('-o FILE and standard output differ')


def errors(tmp):
    train = os.path.join(T, 'torch_train.trace')
    missing = os.path.join(tmp, 'missing.trace')
    cases = [
        (['--format', 'html', missing], 1, 'gpushim: %s: No such file or directory' % missing),
        (['--format', 'html', '-o', os.path.join(tmp, 'no', 'x.html'), train], 1,
         'gpushim: %s: No such file or directory' % os.path.join(tmp, 'no', 'x.html')),
        (['--format', 'htm', train], 2, "gpushim: report: unknown format 'htm'"),
        (['--format', 'html', '-o', '/dev/full', train], 1,
         'gpushim: report: write error on /dev/full'),
    ]
    for args, code, msg in cases:
        p = H.run([G, 'report', *args])
        err = p.stderr.decode()
        if p.returncode != code or not err.startswith(msg) or p.stdout:
            FAILED.append('report %s: exit %d, stdout %d bytes, stderr %r (want %d, %r)' %
                          (' '.join(args), p.returncode, len(p.stdout), err[:200], code, msg))
    # Standard output that cannot be written: main's error, exit 1.
    with open('/dev/full', 'wb') as full:
        p = H.subprocess.run([G, 'report', '--format', 'html', train], stdout=full,
                             stderr=H.subprocess.PIPE)
    if p.returncode != 1 or 'write error on standard output' not in p.stderr.decode():
        FAILED.append('report --format html > /dev/full: exit %d: %r' %
                      (p.returncode, p.stderr.decode()[:200]))
    # A trace missing among several: the others' page, exit 1.
    p = H.run([G, 'report', '--format', 'html', missing, train])
    if p.returncode != 1 or p.stdout.count(b'<section class="process"') != 1 or \
            b'id="combined"' not in p.stdout:
        FAILED.append('report --format html MISSING TRACE: exit %d, %d bytes' %
                      (p.returncode, len(p.stdout)))


def hostile(tmp):
    for kind in ('markup', 'escapes'):
        trace = os.path.join(tmp, kind + '.trace')
        if H.run([os.environ['HOSTILE_TRACE'], kind, trace]).returncode:
            FAILED.append('hostile_trace %s failed' % kind)
            continue
        got = H.report_pair(G, [trace], os.path.join(tmp, kind + '.html'))
        if isinstance(got, str):
            FAILED.append(got)
            continue
        rep, raw = got
        root, text = read_page(kind, raw)
        if root is None:
            continue
        sec = list(root.find_all('section', 'process'))[0]
        check_section(kind, root, sec, rep, None)
        names = [r.children[-1].text() for r in rows(sec, 'kernels-0') or []]
        if kind == 'markup':
            # Read back as text, whole: the markup a trace holds is what the page shows.
            if not names or "<script>alert('KERNEL')</script><img src=" not in names[0]:
                FAILED.append('markup: the kernel reads %r' % names[:1])
            cmd = [p.text() for p in root.find_all('p', 'meta') if p.text().startswith('command')]
            if not cmd or "<script>alert('CMD')</script>" not in cmd[0]:
                FAILED.append('markup: the command reads %r' % cmd[:1])
            if '\ufffd' not in text:
                FAILED.append('markup: the byte that is not UTF-8 is not U+FFFD')
        elif not names or '\ufffd]0;KERNEL\ufffd' not in names[0]:
            FAILED.append('escapes: the kernel reads %r' % names[:1])


def main():
    traces = sys.argv[1:] or sorted(os.path.join(T, f) for f in os.listdir(T)
                                    if f.endswith('.trace'))
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            sizes[os.path.basename(t)] = one(t, tmp)
        tt = lambda *names: [os.path.join(T, n + '.trace') for n in names]  # noqa: E731
        several(tt('diff_host_sync_a', 'diff_host_sync_b'), tmp)
        several(tt('memory_full', 'torch_die_segv', 'torch_train'), tmp)
        options(tmp)
        errors(tmp)
        hostile(tmp)
    for f in FAILED[:40]:
        print('FAIL:', f)
    if FAILED:
        sys.exit(1)
    big = max((v or 0, k) for k, v in sizes.items())
    print('html_report: %d traces, several at once, options, errors and hostile strings; '
          'largest page %s, %d bytes' % (len(traces), big[1], big[0]))


main()
