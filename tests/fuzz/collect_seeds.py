#!/usr/bin/env python3
"""Collects the fuzz seed corpus into OUT_DIR (emptied first).

Seeds: every .ward file under policies/ and tests/, the hand-written seeds in
tests/fuzz/corpus/, and every policy text the tests quote in their C++
sources (string literals, raw or not, adjacent ones joined, that contain a
Ward declaration). Files are named by content hash, so duplicates collapse.

usage: collect_seeds.py SOURCE_DIR OUT_DIR
"""
import hashlib
import pathlib
import re
import shutil
import sys

MAX_SEED_BYTES = 64 * 1024  # larger texts only slow the fuzzer down

# A raw string R"delim(...)delim" or an ordinary "..." literal, optionally with
# an encoding prefix; comments and character literals are matched only to be
# skipped. Everything works on bytes: "\xff" in a test is one byte.
LITERAL = re.compile(
    rb"(?P<skip>//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*')"
    rb'|(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\((?P<raw>.*?)\)(?P=delim)"'
    rb'|(?:u8|u|U|L)?"(?P<plain>(?:[^"\\\n]|\\.)*)"',
    re.S)
# What lies between two literals that C++ joins into one.
BETWEEN = re.compile(rb'^(?:\s|//[^\n]*\n|/\*.*?\*/)*$', re.S)
DECLARATION = re.compile(rb'\b(?:policy\s+[\w-]+|group\s+@|let\s+\w|import\s+")')
ESCAPES = {b'n': b'\n', b't': b'\t', b'r': b'\r', b'a': b'\a', b'b': b'\b', b'f': b'\f',
           b'v': b'\v'}
ESCAPE = re.compile(rb'\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)', re.S)


def unescape(body):
    def one(m):
        e = m.group(1)
        if e[:1] == b'x':
            return bytes([int(e[1:], 16)])
        if e[:1].isdigit():
            return bytes([int(e, 8) & 0xFF])
        return ESCAPES.get(e, e)
    return ESCAPE.sub(one, body)


def quoted_policies(source):
    """Yields the string literals of one C++ file, adjacent ones joined."""
    current, end = None, None
    for m in LITERAL.finditer(source):
        if m.group('skip') is not None:
            continue
        piece = m.group('raw') if m.group('raw') is not None else unescape(m.group('plain'))
        if current is not None and BETWEEN.match(source[end:m.start()]):
            current += piece
        else:
            if current is not None:
                yield current
            current = piece
        end = m.end()
    if current is not None:
        yield current


def main():
    src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    seeds = []
    for folder in ('policies', 'tests'):
        seeds += [p.read_bytes() for p in sorted((src / folder).rglob('*.ward'))]
    seeds += [p.read_bytes() for p in sorted((src / 'tests/fuzz/corpus').glob('*'))
              if p.is_file()]
    for cc in sorted((src / 'tests').rglob('*.cc')):
        for text in quoted_policies(cc.read_bytes()):
            if DECLARATION.search(text):
                seeds.append(text)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    kept = set()
    for seed in seeds:
        if len(seed) > MAX_SEED_BYTES:
            continue
        name = hashlib.sha1(seed).hexdigest()
        if name not in kept:
            kept.add(name)
            (out / name).write_bytes(seed)
    print(f'collect_seeds: {len(kept)} seeds in {out}')


if __name__ == '__main__':
    main()
