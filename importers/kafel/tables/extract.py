#!/usr/bin/env python3
"""Extract kafel's per-architecture syscall tables into TSV files.

Source: google/kafel, src/syscalls/{amd64,i386,aarch64,arm,mipso32,mips64,
riscv64,m68k}_syscalls.c (Apache-2.0, see LICENSE.kafel and README.md for the
commit). Each file defines `const struct syscall_descriptor <arch>_syscall_list[]`
as an array of `{"name", nr, {[ARG_i] = {"argname", size}, ...}}` initialisers
(struct layout: kafel src/syscall.h).

Output, one file per arch, `<kafelarch>.tsv`, one line per entry, sorted by name:
    name<TAB>nr<TAB>arg0name:size<TAB>arg1name:size...
Only the args the entry defines are written, in index order, up to the highest
defined index; an index that is skipped is written as `-:0`.

Usage: extract.py KAFEL_SRC_DIR [OUT_DIR]
  KAFEL_SRC_DIR is a kafel checkout (the directory holding src/syscalls/).
  OUT_DIR defaults to the directory of this script.
"""
import os
import re
import sys

ARCHS = ["amd64", "i386", "aarch64", "arm", "mipso32", "mips64", "riscv64", "m68k"]

TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*|[{}\[\],=]')


def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.index("*/", i + 2)
            out.append(" ")
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] == '"':
            m = re.compile(r'"(?:[^"\\]|\\.)*"').match(text, i)
            out.append(m.group(0))
            i = m.end()
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def tokenize(s):
    toks, pos = [], 0
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            raise SystemExit("cannot tokenize at: %r" % s[pos:pos + 40])
        if not m.group(0).isspace():
            toks.append(m.group(0))
        pos = m.end()
    return toks


class Parser:
    def __init__(self, toks, macros):
        self.t, self.i, self.macros = toks, 0, macros

    def peek(self):
        return self.t[self.i]

    def take(self, expect=None):
        tok = self.t[self.i]
        if expect is not None and tok != expect:
            raise SystemExit("expected %r, got %r at token %d" % (expect, tok, self.i))
        self.i += 1
        return tok

    def string(self):
        tok = self.take()
        if not tok.startswith('"'):
            raise SystemExit("expected string, got %r" % tok)
        return tok[1:-1]

    def number(self):
        tok = self.take()
        tok = self.macros.get(tok, tok)
        return int(tok, 0)

    def entry(self):
        self.take("{")
        name = self.string()
        self.take(",")
        nr = self.number()
        self.take(",")
        self.take("{")
        args, idx = {}, 0
        while self.peek() != "}":
            if self.peek() == "[":
                self.take("[")
                idx = self.number()
                self.take("]")
                self.take("=")
            self.take("{")
            aname = self.string()
            self.take(",")
            asize = self.number()
            self.take("}")
            if idx in args:
                raise SystemExit("duplicate arg index in %s" % name)
            args[idx] = (aname, asize)
            idx += 1
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        self.take("}")
        return name, nr, args


def parse_file(path, arch):
    text = strip_comments(open(path, encoding="utf-8").read())
    macros = dict(re.findall(r"^\s*#define\s+(\w+)\s+(\d+)\s*$", text, re.M))
    m = re.search(r"const\s+struct\s+syscall_descriptor\s+%s_syscall_list\s*\[\s*\]\s*=\s*\{" % arch, text)
    if not m:
        raise SystemExit("no %s_syscall_list in %s" % (arch, path))
    end = text.index("\n};", m.end())
    p = Parser(tokenize(text[m.end():end]), macros)
    entries = []
    while p.i < len(p.t):
        entries.append(p.entry())
        if p.i < len(p.t):
            p.take(",")
    return entries


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    for arch in ARCHS:
        entries = parse_file(os.path.join(src, "src", "syscalls", arch + "_syscalls.c"), arch)
        lines = []
        for name, nr, args in entries:
            cols = [name, str(nr)]
            for i in range(max(args) + 1 if args else 0):
                a = args.get(i)
                cols.append("%s:%d" % a if a else "-:0")
            lines.append("\t".join(cols))
        lines.sort(key=lambda l: (l.split("\t")[0], l))
        with open(os.path.join(out, arch + ".tsv"), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
        print("%s: %d entries" % (arch, len(lines)))


if __name__ == "__main__":
    main()
