#!/usr/bin/env python3
"""Collect kafel's own policies and nsjail's seccomp_string policies.

Sources (both Apache-2.0):
  google/kafel  test/basic.c, test/broken.c, test/includes.c (policy strings,
                as dumped by tools/dump_tests), test/testdata/*.policy,
                samples/*.policy
  google/nsjail configs/*.cfg  (`seccomp_string:` values, joined like nsjail's
                sandbox.cc: each string + "\\n")

Writes under OUT (the testdata/kafel directory):
  policies/<testfile>_<TESTCASE>_<n>.policy, policies/testdata/*.policy,
  policies/samples/*.policy, policies/nsjail/<cfg>.policy
  plus a JSON list of provenance records (--provenance, used by
  write_source_md.py) and the gen_oracle manifest (--manifest): one line per
  policy, "path<TAB>include_dir|-<TAB>test checks|-", where test checks are
  kafel's own TEST_POLICY_{ALLOWS,BLOCKS}_SYSCALL verdicts for that policy as
  "nr,a0,..,a5,0xRET" joined by ";" (gen_oracle adds them and asserts them).

Usage: collect_policies.py --kafel DIR --nsjail DIR --dump FILE --out DIR
                           --provenance FILE --manifest FILE
"""
import argparse
import json
import os
import re
import shutil


def read_dump(path):
    data = open(path, "rb").read()
    pos, recs = 0, []
    while pos < len(data):
        nl = data.index(b"\n", pos)
        fname, case, line, kind, length = data[pos:nl].decode().split("\t")
        start = nl + 1
        body = data[start:start + int(length)]
        assert data[start + int(length):start + int(length) + 1] == b"\n"
        pos = start + int(length) + 1
        recs.append(dict(file=os.path.basename(fname), case=case, line=int(line), kind=kind, src=body))
    return recs


def match_close(text, i, open_ch, close_ch):
    """text[i] == open_ch; return index of the matching close, skipping C strings/comments."""
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced")


def line_of(text, idx):
    return text.count("\n", 0, idx) + 1


def c_unescape_concat(argtext):
    """If argtext is only C string literals (with whitespace), return their bytes, else None."""
    pos, out = 0, bytearray()
    argtext = argtext.strip()
    tok = re.compile(r'\s*"((?:[^"\\\n]|\\.)*)"\s*', re.S)
    while pos < len(argtext):
        m = tok.match(argtext, pos)
        if not m:
            return None
        s, i = m.group(1), 0
        while i < len(s):
            if s[i] != "\\":
                out += s[i].encode()
                i += 1
                continue
            e = s[i + 1]
            simple = {"n": 10, "t": 9, "r": 13, '"': 34, "\\": 92, "'": 39, "a": 7,
                      "b": 8, "f": 12, "v": 11, "?": 63}
            if e in simple:
                out.append(simple[e])
                i += 2
            elif e == "x":
                m2 = re.match(r"[0-9a-fA-F]+", s[i + 2:])
                out.append(int(m2.group(0), 16) & 0xFF)
                i += 2 + len(m2.group(0))
            elif e in "01234567":
                m2 = re.match(r"[0-7]{1,3}", s[i + 1:])
                out.append(int(m2.group(0), 8) & 0xFF)
                i += 1 + len(m2.group(0))
            else:
                raise ValueError("unknown escape \\" + e)
        pos = m.end()
    return bytes(out)


def test_policies(kafel, dump, out):
    texts = {}
    prov = []
    counters = {}
    skipped = 0
    for r in read_dump(dump):
        f = r["file"]
        if f not in texts:
            texts[f] = open(os.path.join(kafel, "test", f), encoding="utf-8").read()
        text = texts[f]
        if r["kind"] == "CHECK":
            # TEST_POLICY_{ALLOWS,BLOCKS}_SYSCALL against the last compiled policy
            line_start = sum(len(l) + 1 for l in text.split("\n")[: r["line"] - 1])
            ci = re.compile(r"TEST_POLICY_(ALLOWS|BLOCKS)_SYSCALL\(").search(text, line_start)
            call = text[ci.end() - 1:match_close(text, ci.end() - 1, "(", ")") + 1]
            last = prov[-1]
            assert last["source"] == "test/" + f and r["case"] in last["note"], r
            if re.search(r"&\s*[A-Za-z_]", call):
                skipped += 1  # an address (e.g. (long)&dummy): not reproducible
                continue
            vals = [int(v) for v in r["src"].decode().split()]
            last.setdefault("test_checks", []).append(dict(
                nr=vals[0], args=[str(v) for v in vals[1:7]], ret="0x%08x" % vals[7],
                line=r["line"]))
            continue
        stem = f[:-2]
        key = (stem, r["case"])
        counters[key] = counters.get(key, 0) + 1
        name = "%s_%s_%d.policy" % (stem, r["case"], counters[key])
        # TEST_CASE range
        m = re.search(r"TEST_CASE\(%s\)\s*\{" % re.escape(r["case"]), text)
        case_start = line_of(text, m.start())
        case_end = line_of(text, match_close(text, m.end() - 1, "{", "}"))
        # call statement starting on line r["line"]
        line_start = sum(len(l) + 1 for l in text.split("\n")[: r["line"] - 1])
        macro = r["kind"]
        ci = text.index(macro + "(", line_start)
        assert line_of(text, ci) == r["line"], (name, macro)
        po = ci + len(macro)
        pc = match_close(text, po, "(", ")")
        call_lines = (r["line"], line_of(text, pc))
        argtext = text[po + 1:pc]
        if macro == "kafel_set_input_string":
            # kafel_set_input_string(ctxt, policy): the policy variable is a
            # literal initialised earlier in the same test case.
            var = argtext.split(",", 1)[1].strip()
            base = max(0, line_start - 2000)
            vm = None
            for vm in re.finditer(r"const char\* %s =(.*?);" % re.escape(var),
                                  text[base:line_start], re.S):
                pass
            lit = c_unescape_concat(vm.group(1)) if vm else None
            if vm:  # cite the literal, not the call
                call_lines = (line_of(text, base + vm.start()), line_of(text, base + vm.end()))
                macro = "const char* %s (passed to kafel_set_input_string at l.%d; " \
                        "the test targets ARM|X86_64)" % (var, r["line"])
        else:
            lit = c_unescape_concat(argtext)
        if lit is not None:
            assert lit == r["src"], "literal mismatch for " + name
            how = "string literal (checked equal to the compiled string)"
        else:
            how = "built at run time by the test (%s); dumped from the compiled test" % argtext.strip()
        assert r["kind"] in ("TEST_POLICY", "TEST_COMPILE_ERROR", "kafel_set_input_string")
        with open(os.path.join(out, "policies", name), "wb") as fh:
            fh.write(r["src"])
        prov.append(dict(path="policies/" + name, repo="google/kafel",
                         source="test/" + f,
                         lines="%d-%d" % call_lines,
                         note="TEST_CASE(%s) l.%d-%d, %s #%d; %s" % (
                             r["case"], case_start, case_end, macro,
                             counters[key], how),
                         kind=r["kind"],
                         include_dir="policies/testdata" if stem == "includes" else None))
    print("test verdict checks: %d kept, %d skipped (address-valued args)" % (
        sum(len(p.get("test_checks", [])) for p in prov), skipped))
    return prov


def copy_dir(kafel, sub, dst, out, include_dir):
    prov = []
    src_dir = os.path.join(kafel, sub)
    os.makedirs(os.path.join(out, dst), exist_ok=True)
    for n in sorted(os.listdir(src_dir)):
        if not n.endswith(".policy"):
            continue
        shutil.copyfile(os.path.join(src_dir, n), os.path.join(out, dst, n))
        nlines = open(os.path.join(src_dir, n), "rb").read().count(b"\n")
        prov.append(dict(path=dst + "/" + n, repo="google/kafel", source=sub + "/" + n,
                         lines="1-%d" % max(nlines, 1), note="copied verbatim",
                         kind="file", include_dir=include_dir))
    return prov


def nsjail_policies(nsjail, out):
    prov = []
    cfg_dir = os.path.join(nsjail, "configs")
    os.makedirs(os.path.join(out, "policies", "nsjail"), exist_ok=True)
    pat = re.compile(r'^\s*seccomp_string\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')
    for n in sorted(os.listdir(cfg_dir)):
        if not n.endswith(".cfg"):
            continue
        parts, lines = [], []
        for i, l in enumerate(open(os.path.join(cfg_dir, n), encoding="utf-8"), 1):
            m = pat.match(l.rstrip("\n"))
            if m:
                if "\\" in m.group(1):
                    raise SystemExit("escape in %s:%d, extend the unescaper" % (n, i))
                parts.append(m.group(1))
                lines.append(i)
            elif "seccomp_string" in l:
                raise SystemExit("unparsed seccomp_string in %s:%d" % (n, i))
        if not parts:
            continue
        stem = n[:-4]
        with open(os.path.join(out, "policies", "nsjail", stem + ".policy"), "w",
                  encoding="utf-8", newline="") as fh:
            fh.write("".join(p + "\n" for p in parts))
        assert lines == list(range(lines[0], lines[-1] + 1)), n
        prov.append(dict(path="policies/nsjail/%s.policy" % stem, repo="google/nsjail",
                         source="configs/" + n, lines="%d-%d" % (lines[0], lines[-1]),
                         note="%d seccomp_string values, each + \"\\n\" (sandbox.cc)" % len(parts),
                         kind="nsjail", include_dir=None))
    return prov


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kafel", required=True)
    ap.add_argument("--nsjail", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--provenance", required=True)
    ap.add_argument("--manifest", required=True)
    a = ap.parse_args()
    pol = os.path.join(a.out, "policies")
    if os.path.isdir(pol):
        shutil.rmtree(pol)
    os.makedirs(pol)
    prov = test_policies(a.kafel, a.dump, a.out)
    prov += copy_dir(a.kafel, "test/testdata", "policies/testdata", a.out, "policies/testdata")
    prov += copy_dir(a.kafel, "samples", "policies/samples", a.out, None)
    prov += nsjail_policies(a.nsjail, a.out)
    prov.sort(key=lambda p: p["path"])
    json.dump(prov, open(a.provenance, "w"), indent=1)
    with open(a.manifest, "w") as m:
        for p in prov:
            extra = ";".join(",".join([str(c["nr"])] + c["args"] + [c["ret"]])
                             for c in p.get("test_checks", []))
            m.write("%s\t%s\t%s\n" % (p["path"], p["include_dir"] or "-", extra or "-"))
    print("collected %d policies" % len(prov))


if __name__ == "__main__":
    main()
