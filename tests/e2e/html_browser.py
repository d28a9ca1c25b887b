#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The HTML report in a real browser: Debian's chromium, headless (scripts/deps.sh installs it).
# For a few traces - a training loop with steps and counters, a sampled run, two processes, a
# trace whose strings are markup - the page loads with no message on the console, its script
# ran (it marks the page and notes each picture's size as laid out: every picture has one),
# the DOM after the script holds the JSON report's figures, a table sorts as a #sort= link
# asks, and the screenshot is a drawing, not a blank page: many colours, the busy colour and
# the primary cause's among them. A page with a script error must be caught (the test can
# fail). Skips (77) only where no chromium is installed; GPUSHIM_REQUIRE_BROWSER=1 (CI) makes
# that a failure.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import html_lib as H  # noqa: E402

G = os.environ['GPUSHIM_BIN']
ROOT = os.environ['SOURCE_ROOT']
T = os.path.join(ROOT, 'tests', 'traces', 'h200')
WIDTH, HEIGHT = 1280, 2400
FAILED = []
BUSY = bytes.fromhex('2a9d8f')          # report_figures.c BUSY_COLOUR
CAUSE_COLOUR = {'host_sync': 'e63946', 'launch_overhead': 'f4a261', 'cpu_bound': 'e9c46a',
                'memcpy': '8338ec', 'allocation': 'ff006e', 'low_parallelism': '3a86ff'}


def browser():
    for name in (os.environ.get('GPUSHIM_CHROMIUM'), 'chromium', 'chromium-browser',
                 'google-chrome', 'google-chrome-stable'):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def load(chrome, url, tmp, tag):
    """The page at @url in headless chromium: (DOM after its scripts, console lines, PNG path)."""
    png = os.path.join(tmp, tag + '.png')
    cmd = [chrome, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
           '--no-first-run', '--no-default-browser-check', '--disable-extensions',
           '--hide-scrollbars', '--user-data-dir=' + os.path.join(tmp, 'profile-' + tag),
           '--enable-logging=stderr', '--v=0', '--window-size=%d,%d' % (WIDTH, HEIGHT),
           '--screenshot=' + png, '--dump-dom', url]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        FAILED.append('%s: chromium did not finish in 120 s' % tag)
        return None, [], None
    err = p.stderr.decode(errors='replace')
    # Chromium logs each console message as "...:CONSOLE(line)] "text", source: URL (line)".
    console = [ln for ln in err.splitlines() if 'CONSOLE' in ln]
    if p.returncode != 0 or not p.stdout:
        FAILED.append('%s: chromium exit %d: %s' % (tag, p.returncode, err[-600:]))
        return None, console, None
    return p.stdout.decode(errors='replace'), console, png


def check_screenshot(tag, png, colours):
    try:
        w, h, rows, bpp = H.png_pixels(png)
    except (OSError, ValueError) as e:
        FAILED.append('%s: screenshot: %s' % (tag, e))
        return
    if (w, h) != (WIDTH, HEIGHT):
        FAILED.append('%s: screenshot %dx%d, want %dx%d' % (tag, w, h, WIDTH, HEIGHT))
    counts = H.colour_counts(rows[::2], bpp)     # every other row: enough, and quick
    total = sum(counts.values())
    white = counts.get(b'\xff\xff\xff', 0)
    if len(counts) < 30 or white > 0.97 * total:
        FAILED.append('%s: screenshot is nearly blank: %d colours, %.1f%% white' %
                      (tag, len(counts), 100.0 * white / total))
    for name, rgb in colours.items():
        if counts.get(rgb, 0) < 50:
            FAILED.append('%s: screenshot: %s (#%s) drawn in %d pixels' %
                          (tag, name, rgb.hex(), counts.get(rgb, 0)))


def check_dom(tag, dom, doc, source_charts, want_keys):
    root, errors = H.parse(dom)
    FAILED.extend('%s: DOM: %s' % (tag, e) for e in errors[:3])
    html_el = list(root.find_all('html'))
    if not html_el or html_el[0].attrs.get('data-script') != 'ok':
        FAILED.append('%s: the page\'s script did not run to its end' % tag)
    charts = list(root.find_all('svg', 'chart'))
    if len(charts) != source_charts:
        FAILED.append('%s: %d pictures in the DOM, %d in the page' %
                      (tag, len(charts), source_charts))
    for svg in charts:
        m = re.fullmatch(r'(\d+)x(\d+)', svg.attrs.get('data-drawn', ''))
        if not m or int(m.group(1)) < 300 or int(m.group(2)) < 50:
            FAILED.append('%s: <svg class="%s"> laid out as %r' %
                          (tag, svg.attrs.get('class'), svg.attrs.get('data-drawn')))
    failed, keys = H.check_figures(root, doc, tag + ' DOM')
    FAILED.extend(failed)
    for k in want_keys - keys:
        FAILED.append('%s: the DOM lacks %s' % (tag, k))
    return root


def check_sorted(tag, root, table_id, col, desc):
    for t in root.find_all('table'):
        if t.attrs.get('id') != table_id:
            continue
        body = [c for c in t.children if getattr(c, 'tag', None) == 'tbody'][0]
        trs = [r for r in body.children if getattr(r, 'tag', None) == 'tr']
        vals = []
        for r in trs:
            cells = [c for c in r.children if getattr(c, 'tag', None) == 'td']
            v = cells[col].attrs.get('data-v', '')
            vals.append(float(v) if v else float('-inf'))
        if vals != sorted(vals, reverse=desc) or len(vals) < 2:
            FAILED.append('%s: #sort: %s column %d not in order: %s' %
                          (tag, table_id, col, vals[:8]))
        heads = [th for th in t.walk() if th.tag == 'th']
        if heads[col].attrs.get('aria-sort') != ('descending' if desc else 'ascending'):
            FAILED.append('%s: #sort: the header is not marked' % tag)
        return
    FAILED.append('%s: no table %s' % (tag, table_id))


def page(chrome, tmp, tag, traces, sort=None):
    path = os.path.join(tmp, tag + '.html')
    got = H.report_pair(G, traces, path)
    if isinstance(got, str):
        FAILED.append(got)
        return None
    doc, raw = got
    src, _ = H.parse(raw.decode())
    n_charts = len(list(src.find_all('svg', 'chart')))
    url = 'file://' + path + ('#sort=%s:%d:%s' % (sort[0], sort[1], 'desc' if sort[2] else 'asc')
                              if sort else '')
    dom, console, png = load(chrome, url, tmp, tag)
    for ln in console:
        FAILED.append('%s: console: %s' % (tag, ln[-300:]))
    if dom is None:
        return None
    reps = doc['reports'] if 'reports' in doc else [doc]
    want = {'verdict.summary', 'verdict.primary'}
    root = check_dom(tag, dom, doc, n_charts, want)
    if sort:
        check_sorted(tag, root, *sort)
    colours = {'busy': BUSY}
    primary = reps[0]['verdict']['primary']
    if primary in CAUSE_COLOUR:
        colours[primary] = bytes.fromhex(CAUSE_COLOUR[primary])
    check_screenshot(tag, png, colours)
    return path


def main():
    chrome = browser()
    if not chrome:
        if os.environ.get('GPUSHIM_REQUIRE_BROWSER') == '1':
            sys.exit('FAIL: no chromium (scripts/deps.sh installs it), and '
                     'GPUSHIM_REQUIRE_BROWSER=1')
        print('SKIP: no chromium installed (scripts/deps.sh installs Debian\'s)')
        sys.exit(77)
    tt = lambda *names: [os.path.join(T, n + '.trace') for n in names]  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        train = page(chrome, tmp, 'torch_train', tt('torch_train'), ('kernels-0', 2, False))
        page(chrome, tmp, 'sampled', tt('torch_twins_sync_sampled'), ('api-0', 1, True))
        page(chrome, tmp, 'two', tt('diff_host_sync_a', 'diff_host_sync_b'))
        markup = os.path.join(tmp, 'markup.trace')
        if H.run([os.environ['HOSTILE_TRACE'], 'markup', markup]).returncode:
            FAILED.append('hostile_trace markup failed')
        else:
            page(chrome, tmp, 'markup', [markup])
        # The check must be able to fail: a page whose script throws is caught.
        if train:
            with open(train, encoding='utf-8') as f:
                text = f.read()
            bad = os.path.join(tmp, 'bad.html')
            with open(bad, 'w', encoding='utf-8') as f:
                f.write(text.replace('</body>', '<script>null.x;</script></body>'))
            _, console, _ = load(chrome, 'file://' + bad, tmp, 'bad')
            if not [ln for ln in console if 'Uncaught' in ln]:
                FAILED.append('a script error was not seen on the console: %s' % console)
    for f in FAILED[:40]:
        print('FAIL:', f)
    if FAILED:
        sys.exit(1)
    print('html_browser: 4 pages in %s: no console message, scripts ran, pictures laid out, '
          'figures in the DOM, sorting, screenshots drawn' %
          subprocess.run([chrome, '--version'], capture_output=True).stdout.decode().strip())


main()
