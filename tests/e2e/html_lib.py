# SPDX-License-Identifier: MIT
# Shared by html_report.py and html_browser.py: the HTML report read back (python3's
# html.parser into a small tree, every tag closed where it was opened), held against the JSON
# report of the same traces (each element with data-json names its figure there), checked for
# anything that could fetch or run what the page did not write, and a PNG decoder (zlib only)
# for the browser's screenshots.
import html.parser
import json
import re
import struct
import subprocess
import zlib

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source',
        'track', 'wbr'}
# Elements that load or embed something, or submit: none belongs in the page.
FORBIDDEN = {'img', 'iframe', 'frame', 'object', 'embed', 'link', 'base', 'form', 'audio',
             'video', 'source', 'picture', 'portal', 'use', 'image', 'foreignobject'}
# Attributes whose value a browser fetches or follows: only a fragment (#id) is allowed.
URL_ATTRS = {'src', 'href', 'xlink:href', 'action', 'formaction', 'data', 'poster', 'srcset',
             'background', 'ping', 'cite', 'longdesc', 'manifest', 'codebase', 'archive'}
SVG_NS = 'http://www.w3.org/2000/svg'
NUMERIC_ATTRS = {'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'width', 'height', 'd',
                 'viewbox'}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children = []

    def text(self):
        return ''.join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find_all(self, tag, cls=None):
        for n in self.walk():
            if n.tag == tag and (cls is None or cls in n.attrs.get('class', '').split()):
                yield n

    def ancestor(self, pred):
        n = self.parent
        while n is not None and not pred(n):
            n = n.parent
        return n


class Parser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node('#root', {}, None)
        self.stack = [self.root]
        self.errors = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, {}, self.stack[-1])
        for k, v in attrs:
            if k in n.attrs:
                self.errors.append('<%s> has %s twice' % (tag, k))
            n.attrs[k] = v if v is not None else ''
        self.stack[-1].children.append(n)
        if tag not in VOID:
            self.stack.append(n)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if len(self.stack) < 2 or self.stack[-1].tag != tag:
            self.errors.append('</%s> closes <%s>' % (tag, self.stack[-1].tag))
            return
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(text):
    p = Parser()
    p.feed(text)
    p.close()
    errors = list(p.errors)
    if len(p.stack) > 1:
        errors.append('left open: ' + ' '.join('<%s>' % n.tag for n in p.stack[1:]))
    return p.root, errors


# ---- The analyzer's units, as output.c formats them ----

def fmt_ns(ns):
    if ns < 1000:
        return '%d ns' % ns
    if ns < 1000000:
        return '%.2f us' % (ns / 1e3)
    if ns < 1000000000:
        return '%.2f ms' % (ns / 1e6)
    return '%.3f s' % (ns / 1e9)


def fmt_count(v):
    return '{:,}'.format(v)


def fmt_bytes(b):
    units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
    v, u = float(b), 0
    while v >= 1024 and u < 4:
        v /= 1024
        u += 1
    return '%d B' % b if u == 0 else '%.2f %s' % (v, units[u])


# What a page shows of a string as U+FFFD: what a terminal would not show (output.c is_shown).
HIDDEN = re.compile('[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]')


def shown(s):
    """@s (from the JSON, which keeps every character) as the page shows it."""
    return HIDDEN.sub('\ufffd', s)


def lookup(doc, path):
    """The value at a dotted path ("reports.0.kernels.3.launches"); KeyError when absent."""
    v = doc
    for part in path.split('.') if path else []:
        if isinstance(v, list):
            v = v[int(part)]
        else:
            v = v[part]
    return v


def first_number(text):
    m = re.search(r'-?[0-9][0-9,]*(\.[0-9]+)?', text)
    if not m:
        return None, 0
    return float(m.group(0).replace(',', '')), len(m.group(1) or '.') - 1


def check_figures(root, doc, what):
    """Each element's data-json figure against the JSON report @doc; returns (failures,
    the keys checked)."""
    failed, keys = [], set()
    for n in root.walk():
        key = n.attrs.get('data-json')
        if key is None:
            continue
        sec = n.ancestor(lambda a: 'data-json-base' in a.attrs)
        base = sec.attrs['data-json-base'] if sec is not None else ''
        path = base + '.' + key if base else key
        keys.add(key)
        try:
            want = lookup(doc, path)
        except (KeyError, IndexError, ValueError, TypeError):
            failed.append('%s: %s is not in the JSON' % (what, path))
            continue
        got, unit, text = n.attrs.get('data-value'), n.attrs.get('data-unit'), n.text().strip()
        if unit == 'str':
            want = shown(want) if isinstance(want, str) else want
            if got != want or text != want:
                failed.append('%s: %s: page %r / %r, JSON %r' % (what, path, got, text, want))
            continue
        if want is None:
            if got != 'null':
                failed.append('%s: %s: page %r, JSON null' % (what, path, got))
            continue
        try:
            gotv = float(got)
        except ValueError:
            failed.append('%s: %s: data-value %r' % (what, path, got))
            continue
        if abs(gotv - float(want)) > 1e-9 * max(1.0, abs(float(want))):
            failed.append('%s: %s: data-value %r, JSON %r' % (what, path, got, want))
            continue
        if unit == 'ns':
            ok = text == fmt_ns(int(want))
        elif unit == 'count':
            ok = text == fmt_count(int(want))
        elif unit == 'bytes':
            ok = text == fmt_bytes(int(want))
        else:   # pct, rate: the number shown, rounded from the JSON's (itself rounded)
            num, decimals = first_number(text)
            ok = num is not None and abs(num - float(want)) <= 0.5 * 10 ** -decimals + 0.006
        if not ok:
            failed.append('%s: %s shows %r for %r (%s)' % (what, path, text, want, unit))
    return failed, keys


def check_safety(root, raw, what):
    """Nothing fetched, embedded or run but the page's own script; text only from traces."""
    failed = []
    scripts = list(root.find_all('script'))
    if len(scripts) != 1 or 'src' in scripts[0].attrs:
        failed.append('%s: %d <script> elements (want the page\'s one, inline)' %
                      (what, len(scripts)))
    ids = {}
    for n in root.walk():
        if n.tag in FORBIDDEN:
            failed.append('%s: a <%s> element' % (what, n.tag))
        if n.tag == 'meta' and 'http-equiv' in n.attrs and \
                n.attrs['http-equiv'].lower() != 'content-security-policy':
            failed.append('%s: <meta http-equiv=%s>' % (what, n.attrs['http-equiv']))
        for k, v in n.attrs.items():
            if k.startswith('on'):
                failed.append('%s: <%s %s=...>: an event handler' % (what, n.tag, k))
            if k in URL_ATTRS and not v.startswith('#'):
                failed.append('%s: <%s %s="%s">: not a fragment' % (what, n.tag, k, v[:80]))
            if k == 'xmlns' and v != SVG_NS:
                failed.append('%s: xmlns="%s"' % (what, v[:80]))
            if k in ('style', 'fill', 'stroke', 'mask', 'clip-path', 'filter') and \
                    re.search(r'url\((?!#)', v):
                failed.append('%s: <%s %s="%s">' % (what, n.tag, k, v[:80]))
            if k in NUMERIC_ATTRS and n.ancestor(lambda a: a.tag == 'svg') is not None and \
                    re.search(r'nan|inf', v, re.I):
                failed.append('%s: <%s %s="%s">' % (what, n.tag, k, v[:80]))
            if k == 'id':
                if v in ids:
                    failed.append('%s: id "%s" twice' % (what, v))
                ids[v] = n
    for st in root.find_all('style'):
        if re.search(r'@import|url\(', st.text()):
            failed.append('%s: <style> imports or names a URL' % what)
    # In an attribute, "://" is the SVG namespace's name (never fetched) or text to read.
    for n in root.walk():
        for k, v in n.attrs.items():
            if '://' in v and k not in ('title', 'aria-label', 'data-value', 'xmlns'):
                failed.append('%s: <%s %s="%s">' % (what, n.tag, k, v[:80]))
    # No control character survives (HTML forbids C0 but tab and line ends, and C1).
    bad = re.search('[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]',
                    raw)
    if bad:
        failed.append('%s: control character U+%04X at %d' % (what, ord(bad.group(0)),
                                                               bad.start()))
    return failed


def check_charts(root, what):
    """Every picture sized, with something drawn, no path empty."""
    failed, n = [], 0
    for svg in root.find_all('svg'):
        n += 1
        if not svg.attrs.get('viewbox') or not svg.attrs.get('width'):
            failed.append('%s: an <svg> without viewBox or width' % what)
        shapes = [s for s in svg.walk() if s.tag in ('path', 'rect', 'line', 'circle')]
        if not [s for s in shapes if 'hit' not in s.attrs.get('class', '').split()]:
            failed.append('%s: <svg class="%s"> draws nothing' % (what, svg.attrs.get('class')))
        for s in svg.walk():
            if s.tag == 'path' and not s.attrs.get('d', '').strip():
                failed.append('%s: an empty <path> in <svg class="%s">' %
                              (what, svg.attrs.get('class')))
    return failed, n


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def report_pair(gpushim, args, html_path):
    """The JSON report of @args and its HTML written to @html_path: (doc, page bytes) or an
    error string."""
    j = run([gpushim, 'report', '--format', 'json', *args])
    if j.returncode != 0:
        return 'report --format json %s: exit %d: %s' % (' '.join(args), j.returncode,
                                                           j.stderr.decode()[:300])
    h = run([gpushim, 'report', '--format', 'html', '-o', html_path, *args])
    if h.returncode != 0 or h.stdout or h.stderr:
        return 'report --format html %s: exit %d, stdout %d bytes: %s' % (
            ' '.join(args), h.returncode, len(h.stdout), h.stderr.decode()[:300])
    with open(html_path, 'rb') as f:
        return json.loads(j.stdout), f.read()


# ---- PNG (screenshots): 8-bit RGB or RGBA, not interlaced ----

def png_pixels(path):
    """(width, height, rows of bytes, bytes a pixel)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    w, h, depth, colour, _, _, interlace = hdr
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError('PNG depth %d colour %d interlace %d' % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev, i = zlib.decompress(b''.join(idat)), w * bpp, [], None, 0
    prev = bytearray(stride)
    for _ in range(h):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if ftype == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ftype == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + (left + prev[x]) // 2) & 255
        elif ftype == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def colour_counts(rows, bpp):
    """How many pixels of each RGB colour."""
    counts = {}
    for r in rows:
        for x in range(0, len(r), bpp):
            c = r[x:x + 3]
            counts[c] = counts.get(c, 0) + 1
    return counts
