#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""README's examples are the commands' real output: every fenced block whose first line is
`$ gpushim ...` (or that follows a `<!-- example: gpushim ... -->` comment) is run again with
the built gpushim, in the repository's root, with trace names not found there looked up under
tests/traces/, and each of the block's lines must be a line of the output, in order. A line
`...` (alone, indented or not) stands for lines left out, and a line ending in ` ...` for the
rest of one line. Exit 1 names the first line that no longer matches and what the command
printed instead, so an example can never drift from what the command prints.
usage: readme_examples.py GPUSHIM README"""
import os
import re
import shlex
import subprocess
import sys


def blocks(text):
    """(line number, command, expected lines) of each example block."""
    lines = text.split("\n")
    i, pending = 0, None
    while i < len(lines):
        m = re.match(r"<!-- example: (.*) -->$", lines[i].strip())
        if m:
            pending = m.group(1)
        if lines[i].startswith("```"):
            fence, start = lines[i], i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1:j]
            cmd = None
            if body and body[0].startswith("$ gpushim "):
                cmd_lines = [body[0][2:]]
                k = 1
                while cmd_lines[-1].endswith("\\") and k < len(body):
                    cmd_lines[-1] = cmd_lines[-1][:-1]
                    cmd_lines.append(body[k].strip())
                    k += 1
                cmd, body = " ".join(cmd_lines), body[k:]
            elif pending and fence == "```":
                cmd = pending
            if cmd:
                yield start + 1, cmd, body
            pending = None
            i = j
        i += 1


def find_trace(word, root):
    if not word.endswith(".trace") or os.path.exists(os.path.join(root, word)):
        return word
    # The current fixtures first: older formats' copies of a trace keep its name.
    h200 = os.path.join(root, "tests", "traces", "h200", os.path.basename(word))
    if os.path.exists(h200):
        return os.path.relpath(h200, root)
    for d, _, files in os.walk(os.path.join(root, "tests", "traces")):
        if os.path.basename(word) in files:
            return os.path.relpath(os.path.join(d, os.path.basename(word)), root)
    return word


def matches(want, got):
    want = want.rstrip()
    if want.endswith(" ..."):
        return got.rstrip().startswith(want[:-4].rstrip())
    return got.rstrip() == want


def check(gpushim, root, line, cmd, body):
    words = shlex.split(cmd.split("|")[0])
    # Options that write files are not run (the export example): nothing to compare.
    if any(w.startswith("--export") for w in words):
        return None
    words = [gpushim] + [find_trace(w, root) for w in words[1:]]
    pipe = cmd.split("|", 1)[1] if "|" in cmd else None
    p = subprocess.run(words, cwd=root, capture_output=True, text=True)
    out = p.stdout
    if pipe:
        out = subprocess.run(pipe, shell=True, input=out, capture_output=True,
                             text=True).stdout
    got = out.split("\n")
    k = 0
    for want in body:
        if want.strip() in ("...", ""):
            continue
        while k < len(got) and not matches(want, got[k]):
            k += 1
        if k == len(got):
            near = [g for g in got if g.strip() and g.split()[:1] == want.split()[:1]]
            return (f"README.md:{line}: `{cmd}` no longer prints, in order:\n  {want}\n"
                    f"closest line it prints: {near[0] if near else '(none)'}")
        k += 1
    return None


def main():
    gpushim, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    root = os.path.dirname(os.path.abspath(readme))
    n, bad = 0, []
    for line, cmd, body in blocks(open(readme, encoding="utf-8").read()):
        n += 1
        err = check(gpushim, root, line, cmd, body)
        if err:
            bad.append(err)
    for b in bad:
        print(b)
    print(f"{n} examples, {len(bad)} drifted")
    if n == 0:
        print("no example found: the markers are gone")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
