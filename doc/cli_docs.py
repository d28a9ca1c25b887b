#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Man pages and shell completion, made at build time from what the built gpushim says of itself:
# the command table (`gpushim --help-commands`, hidden) and each command's --help. Nothing here
# lists a command or an option, so the pages cannot drift from the code (gpushim(1)'s few lines
# on the program, --version, --help, the exit status and files are its only text of its own).
# Writes one file a run:
#   cli_docs.py GPUSHIM VERSION man [COMMAND] OUT   gpushim(1), or gpushim-COMMAND(1)
#   cli_docs.py GPUSHIM VERSION bash OUT            bash completion
#   cli_docs.py GPUSHIM VERSION zsh OUT             zsh completion (_gpushim)
# Options are read from the usage lines, the option lines ("  -o, --output FILE  what") and
# any --option the text names; an argument in capitals is a value, a|b|c its choices.
import re
import subprocess
import sys

OPT_TOKEN = re.compile(r'(--?[A-Za-z0-9][\w-]*)')
# An option as written in a usage bracket or an option line: -x, --long, --long ARG,
# --long=ARG, --long[=ARG].
OPT_SPEC = re.compile(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)(\[?=([^\s\],]+)\]?| ([^\s\[\],]+))?')
# An option named in prose, its groups as OPT_SPEC's.
PROSE_OPT = re.compile(r'(?<![\w-])(--[A-Za-z0-9][\w-]*)(=([A-Z][\w:]*)| ([A-Z][A-Z0-9_:]*)\b)?')
# An argument that lists its values: text|json, chrome.
CHOICES = re.compile(r'[a-z0-9]+(\|[a-z0-9]+)*')
# Metavariables whose value is a path (completed as files).
PATH_ARGS = {'FILE', 'PATH', 'PATTERN', 'TRACE', 'DIR'}


def gpushim(exe, *args):
    return subprocess.run([exe, *args], check=True, capture_output=True, text=True).stdout


def commands(exe):
    """The command table: [(name, summary)], in its order."""
    return [tuple(line.split('\t', 1)) for line in gpushim(exe, '--help-commands').splitlines()]


class Option:
    def __init__(self, names, arg, is_attached, desc):
        self.names = names		# ['-o', '--output']
        self.arg = arg			# 'PATTERN', 'text|json' or None
        self.is_attached = is_attached	# the argument only as --long=ARG: optional
        self.desc = desc		# its description, or ''

    def choices(self):
        if self.arg and CHOICES.fullmatch(self.arg):
            return self.arg.split('|')
        return []

    def is_path(self):
        return self.arg in PATH_ARGS


class Help:
    """A --help text cut into its usage lines, its option lines and its prose."""

    def __init__(self, text):
        lines = text.rstrip('\n').split('\n')
        self.usage = []
        while lines and (not self.usage and lines[0].startswith('usage:') or
                         self.usage and lines[0].startswith(' ')):
            self.usage.append(lines.pop(0))
        # blocks: ('para', [lines]) or ('opt', spec, [description lines])
        self.blocks = []
        para = []
        indent = None
        for line in lines:
            m = re.match(r'( +)(-\S.*?)(?:  +(\S.*))?$', line)
            if m and len(m.group(1)) <= 8:
                if para:
                    self.blocks.append(('para', para))
                    para = []
                self.blocks.append(('opt', m.group(2), [m.group(3)] if m.group(3) else []))
                indent = len(m.group(1))
            elif (indent is not None and line.strip() and
                  len(line) - len(line.lstrip()) > indent):
                self.blocks[-1][2].append(line.strip())
            elif line.strip():
                indent = None
                para.append(line.strip())
            else:
                indent = None
                if para:
                    self.blocks.append(('para', para))
                    para = []
        if para:
            self.blocks.append(('para', para))

    def synopsis(self):
        """The usage lines without 'usage: ', continuation lines joined."""
        return ' '.join(line.replace('usage:', '', 1).strip() for line in self.usage)

    def options(self, with_prose=True):
        """Every option the text names, with its argument and description where it says them;
        with_prose: also those only its prose names (whatif's STEPS line)."""
        found = []

        def add(names, m, desc):
            arg = m.group(3) or m.group(4) if m else None
            is_attached = bool(m and m.group(3)) and not m.group(4)
            for o in found:
                if set(o.names) & set(names):
                    o.names = sorted(set(o.names + names), key=lambda n: (len(n) > 2, n))
                    # The choices (text|json) where one place names them, FMT another.
                    if arg and (not o.arg or CHOICES.fullmatch(arg) and
                                not CHOICES.fullmatch(o.arg)):
                        o.arg, o.is_attached = arg, is_attached
                    elif arg and o.is_attached and not is_attached:
                        o.is_attached = False	# --x=ARG is also --x ARG
                    o.desc = o.desc or desc
                    return
            found.append(Option(sorted(names, key=lambda n: (len(n) > 2, n)), arg, is_attached,
                                desc))

        for kind, *rest in self.blocks:
            if kind == 'opt':
                spec, desc = rest
                specs = list(OPT_SPEC.finditer(spec))
                add([m.group(1) for m in specs], specs[-1], ' '.join(desc))
        for m in re.finditer(r'\[([^\[\]]*(?:\[[^\]]*\][^\[\]]*)?)\]', self.synopsis()):
            specs = list(OPT_SPEC.finditer(m.group(1)))
            if specs and m.group(1).startswith('-'):
                add([specs[0].group(1)], specs[0], '')
        for kind, *rest in self.blocks if with_prose else []:
            text = ' '.join(rest[0]) if kind == 'para' else ' '.join(rest[1])
            # A value only in capitals: "--fail-on is given" names no value.
            for m in PROSE_OPT.finditer(text):
                add([m.group(1)], m, '')
        if not any('--help' in o.names for o in found):
            add(['-h', '--help'], None, 'this text')
        return sorted(found, key=lambda o: o.names[-1])


# ---- man pages ----

def roff(text):
    """Text for a roff line: escapes, options' hyphens as \\-, non-ASCII as \\[uXXXX]."""
    text = text.replace('\\', '\\e')
    text = re.sub(r'(?<![\w-])--?[A-Za-z0-9][\w-]*|(?<!\S)--(?!\S)|\bgpushim-[a-z]+\(1\)',
                  lambda m: m.group(0).replace('-', '\\-'), text)
    text = ''.join(c if ord(c) < 128 else '\\[u%04X]' % ord(c) for c in text)
    if text.startswith(('.', "'")):
        text = '\\&' + text
    return text


def roff_spec(spec):
    """An option line's spec: the options in bold, their arguments in italics."""
    out = []
    for part in OPT_TOKEN.split(spec):
        if OPT_TOKEN.fullmatch(part):
            out.append('\\fB' + roff(part) + '\\fR')
        elif part.strip(' ,=[]'):
            lead = re.match(r'[ ,=\[]*', part).group(0)
            tail = re.search(r'[ ,\]]*$', part).group(0)
            out.append(roff(lead) + '\\fI' + roff(part[len(lead):len(part) - len(tail)]) +
                       '\\fR' + roff(tail))
        else:
            out.append(roff(part))
    return ''.join(out)


def man_body(help_text):
    h = Help(help_text)
    out = ['.SH SYNOPSIS', '.nf']
    out += [roff(line[len('usage: '):]) for line in h.usage]
    out += ['.fi']
    section = '.SH DESCRIPTION'
    for kind, *rest in h.blocks:
        if kind == 'para':
            out += [section if section else '.PP'] + [roff(line) for line in rest[0]]
        else:
            out += [section] if section else []
            out += ['.TP', roff_spec(rest[0])] + [roff(line) for line in rest[1]]
        section = None
    return out


def man(exe, version, command):
    cmds = commands(exe)
    see_also = ['gpushim(1)'] + ['gpushim-%s(1)' % n for n, _ in cmds]
    see_also.remove(('gpushim-' + command if command else 'gpushim') + '(1)')
    if command:
        summary = dict(cmds)[command]
        name = 'gpushim-' + command
        out = ['.SH NAME', roff(name) + ' \\- ' + roff(summary)]
        out += man_body(gpushim(exe, command, '--help'))
    else:
        name = 'gpushim'
        h = Help(gpushim(exe, '--help'))
        out = ['.SH NAME',
               'gpushim \\- why the GPU is under-used: record a CUDA program, analyze its trace',
               '.SH SYNOPSIS', '.nf', roff(h.synopsis()), '.fi',
               '.SH DESCRIPTION',
               roff('gpushim run preloads libgpushim.so into a CUDA program (C, C++, PyTorch, '
                    'JAX), which records its driver calls and, through CUPTI, when the GPU ran '
                    'each kernel and copy, into a compressed trace. The other commands read '
                    'traces: they attribute every idle gap of the GPU to what the host was '
                    'doing and rank the causes by what fixing each would save.'),
               '.SH COMMANDS']
        for n, summary in cmds:
            out += ['.TP', '\\fBgpushim %s\\fR' % roff(n),
                    roff('%s (gpushim-%s(1))' % (summary, n))]
        out += ['.SH OPTIONS']
        for o in h.options(with_prose=False):
            out += ['.TP', roff_spec(', '.join(o.names))]
            out += [roff(o.desc) if o.desc else
                    {'--version': 'print the version and the trace format version it writes',
                     '--help': 'list the commands'}.get(o.names[-1], '')]
        out += ['.SH EXIT STATUS',
                '0 success, 1 an error (a damaged trace names the file and the byte offset) or a '
                'regression found by \\fBgpushim diff \\-\\-fail\\-on\\fR, 2 a usage error, 3 '
                '\\fBgpushim diff\\fR could not compare the runs; \\fBgpushim run\\fR exits with '
                'the program\'s status (126: not executable, 127: not found).',
                '.SH FILES',
                '.TP', '\\fIshare/gpushim/schema/\\fR',
                'JSON Schemas of \\fBreport \\-\\-format json\\fR and '
                '\\fBdiff \\-\\-format json\\fR',
                '.TP', '\\fIinclude/gpushim/trace_format.h\\fR',
                'the trace format, for readers (pkg\\-config gpushim)']
    title = ['.TH %s 1 "" "gpushim %s" "gpushim manual"' % (roff(name.upper()), version)]
    return '\n'.join(title + out + ['.SH SEE ALSO', ', '.join(map(roff, see_also))]) + '\n'


# ---- completion ----

def command_options(exe):
    return [(n, s, Help(gpushim(exe, n, '--help')).options()) for n, s in commands(exe)]


def bash(exe):
    cmds = command_options(exe)
    glob = Help(gpushim(exe, '--help')).options(with_prose=False)
    words = lambda opts: ' '.join(n for o in opts for n in o.names)
    out = ['# bash completion for gpushim: made at build time from its commands\' --help',
           '# (doc/cli_docs.py); do not edit.',
           '_gpushim()', '{',
           '\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
           '\tlocal cmd= i opts',
           '\tfor ((i = 1; i < COMP_CWORD; i++)); do',
           '\t\tcase ${COMP_WORDS[i]} in',
           '\t\t-*) ;;',
           '\t\t*) cmd=${COMP_WORDS[i]}; break ;;',
           '\t\tesac',
           '\tdone',
           '\tif [ -z "$cmd" ]; then',
           '\t\tmapfile -t COMPREPLY < <(compgen -W "%s %s" -- "$cur")'
           % (' '.join(n for n, _, _ in cmds), words(glob)),
           '\t\treturn',
           '\tfi',
           '\tcase $cmd in']
    for name, _, opts in cmds:
        out.append('\t%s)' % name)
        if name == 'run':
            # After "--": the program to run, then its arguments.
            out += ['\t\tfor ((i++; i < COMP_CWORD; i++)); do',
                    '\t\t\t[ "${COMP_WORDS[i]}" = -- ] || continue',
                    '\t\t\tif [ "$i" -eq $((COMP_CWORD - 1)) ]; then',
                    '\t\t\t\tmapfile -t COMPREPLY < <(compgen -c -- "$cur")',
                    '\t\t\telse',
                    '\t\t\t\tmapfile -t COMPREPLY < <(compgen -f -- "$cur")',
                    '\t\t\tfi',
                    '\t\t\treturn',
                    '\t\tdone']
        cases = []
        for o in opts:
            if not o.arg or o.is_attached:
                continue
            if o.choices():
                action = ('mapfile -t COMPREPLY < <(compgen -W "%s" -- "$cur")' %
                          ' '.join(o.choices()))
            elif o.is_path():
                action = 'mapfile -t COMPREPLY < <(compgen -f -- "$cur")'
            else:
                action = 'COMPREPLY=()'
            cases.append('\t\t%s) %s; return ;;' % ('|'.join(o.names), action))
        if cases:
            out += ['\t\tcase $prev in'] + cases + ['\t\tesac']
        out.append('\t\topts="%s" ;;' % words(opts))
    out += ['\t*) return ;;',
            '\tesac',
            '\tif [[ $cur == -* ]]; then',
            '\t\tmapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")',
            '\telse',
            '\t\tmapfile -t COMPREPLY < <(compgen -f -- "$cur")',
            '\tfi',
            '}',
            'complete -o filenames -F _gpushim gpushim']
    return '\n'.join(out) + '\n'


def zsh_desc(text):
    """A description's first clause, short enough for a menu."""
    m = re.search(r'.{8}?[^;:(]*', text)
    text = m.group(0).strip() if m else text
    if text.count('(') > text.count(')'):
        text = text[:text.rindex('(')].strip()
    return text if len(text) <= 60 else text[:text.rindex(' ', 0, 57)] + '...'


def zsh_quote(text):
    """A description inside '...[desc]...': no brackets or colons of its own."""
    text = text.replace('[', '(').replace(']', ')').replace(':', '\\:')
    return text.replace("'", "'\\''")


def zsh(exe):
    cmds = command_options(exe)
    glob = Help(gpushim(exe, '--help')).options(with_prose=False)
    out = ['#compdef gpushim',
           '# zsh completion for gpushim: made at build time from its commands\' --help',
           '# (doc/cli_docs.py); do not edit.', '']

    def spec(o):
        excl = '(%s)' % ' '.join(o.names) if len(o.names) > 1 else ''
        desc = '[%s]' % zsh_quote(zsh_desc(o.desc)) if o.desc else ''
        if not o.arg:
            return ["'%s%s%s'" % (excl, n, desc) for n in o.names]
        if o.choices():
            action = '(%s)' % ' '.join(o.choices())
        elif o.is_path():
            action = '_files'
        else:
            action = ' '
        def sep(n):
            return '=-' if o.is_attached else '=' if n.startswith('--') else '+'
        return ["'%s%s%s%s:%s:%s'" % (excl, n, sep(n), desc, zsh_quote(o.arg.lower()), action)
                for n in o.names]

    for name, _, opts in cmds:
        out += ['_gpushim_%s() {' % name, '\t_arguments -s -S \\']
        out += ['\t\t%s \\' % s for o in opts for s in spec(o)]
        if name == 'run':
            out += ["\t\t'*::program:_normal'"]
        else:
            out += ["\t\t'*:trace:_files'"]
        out += ['}', '']
    out += ['_gpushim() {',
            '\tlocal curcontext=$curcontext state line',
            '\tlocal -a commands',
            '\tcommands=(']
    out += ["\t\t'%s:%s'" % (n, zsh_quote(s)) for n, s, _ in cmds]
    out += ['\t)',
            '\t_arguments -C \\']
    out += ["\t\t'(- *)%s%s' \\" % (n, '[%s]' % zsh_quote(zsh_desc(o.desc)) if o.desc else '')
            for o in glob for n in o.names]
    out += ["\t\t'1: :->command' \\",
            "\t\t'*:: :->args'",
            '\tcase $state in',
            "\tcommand) _describe -t commands 'gpushim command' commands ;;",
            '\targs)',
            '\t\tcase $line[1] in']
    out += ['\t\t%s) _gpushim_%s ;;' % (n, n) for n, _, _ in cmds]
    out += ['\t\tesac ;;',
            '\tesac',
            '}',
            '',
            '_gpushim "$@"']
    return '\n'.join(out) + '\n'


def main(argv):
    exe, version, what = argv[1:4]
    rest = argv[4:]
    if what == 'man':
        text = man(exe, version, rest[0] if len(rest) == 2 else None)
    elif what == 'bash':
        text = bash(exe)
    elif what == 'zsh':
        text = zsh(exe)
    else:
        sys.exit('cli_docs.py: unknown output ' + what)
    with open(rest[-1], 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main(sys.argv)
