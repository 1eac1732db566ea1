#!/usr/bin/env python3
"""Generate policies/std/syscalls.ward from `systemd-analyze syscall-filter`.

Group membership is exactly what systemd's syscall-filter groups contain on
this machine (including @default and @known, and nested `@group` members
where systemd nests them), with two adjustments:

  * member names that no Ward architecture's kernel syscall table
    (language/facts/kernel/, read through gen_kernel_syscalls.py) lists are
    dropped; they are listed in a comment above the group that lost them;
  * Ward adds groups that systemd lacks (WARD_GROUPS, currently @io-uring).

Groups appear in systemd's order, Ward's additions last.  Within a group,
nested `@group` references come first, then syscall names, each sorted.

Usage:
    python3 policies/std/gen_syscalls_ward.py > policies/std/syscalls.ward

Standard library only.
"""

import os
import re
import subprocess
import sys

SCRIPT = "policies/std/gen_syscalls_ward.py"
OUTPUT = "policies/std/syscalls.ward"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "language", "facts"))
import gen_kernel_syscalls  # noqa: E402

# Groups Ward defines in addition to systemd's: (name, description, members).
WARD_GROUPS = (
    ("@io-uring", "io_uring asynchronous I/O interface",
     ("io_uring_setup", "io_uring_enter", "io_uring_register")),
)

WIDTH = 80
INDENT = "    "
NAME_RE = re.compile(r"@?[A-Za-z0-9_-]+")


class GenError(Exception):
    pass


def run(cmd):
    env = dict(os.environ, LC_ALL="C", SYSTEMD_COLORS="0", SYSTEMD_PAGER="",
               PAGER="cat")
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise GenError("cannot run %s: %s" % (cmd[0], exc.strerror))
    if proc.returncode != 0:
        raise GenError("%s failed (exit %d): %s"
                       % (" ".join(cmd), proc.returncode, proc.stderr.strip()))
    return proc.stdout


def systemd_version():
    first = run(["systemd-analyze", "--version"]).splitlines()[0].strip()
    match = re.fullmatch(r"systemd (\d+)(?: \((.*)\))?", first)
    if match is None:
        raise GenError("unexpected systemd-analyze --version: %r" % first)
    return match.group(1), match.group(2) or match.group(1)


def parse_syscall_filter(text):
    """Parse `systemd-analyze syscall-filter` output.

    Groups look like

        @name
            # description
            member
            @nested-group

    separated by blank lines.  Unindented `#` lines (the "Ungrouped" and
    "Unlisted" trailers) end the group section and are ignored.
    Returns [(name, description, [members])] in systemd's order.
    """
    groups = []
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            current = None
        elif line.startswith("@"):
            if not NAME_RE.fullmatch(stripped):
                raise GenError("bad group name %r" % stripped)
            current = (stripped, [], [])
            groups.append(current)
        elif not line[0].isspace():
            current = None          # trailer section such as "# Ungrouped"
        elif current is not None:
            if stripped.startswith("#"):
                current[1].append(stripped[1:].strip())
            elif NAME_RE.fullmatch(stripped):
                current[2].append(stripped)
            else:
                raise GenError("bad member %r in %s" % (stripped, current[0]))
        # indented lines outside a group belong to a trailer: ignore
    if not groups:
        raise GenError("no groups in systemd-analyze syscall-filter output")
    names = [g[0] for g in groups]
    if len(set(names)) != len(names):
        raise GenError("duplicate group in systemd-analyze output")
    return [(n, " ".join(d), m) for n, d, m in groups]


class KernelTables:
    """The names of the kernel syscall tables Ward's facts come from."""

    def __init__(self):
        try:
            tables = gen_kernel_syscalls.tables()
        except (gen_kernel_syscalls.GenError, OSError) as exc:
            raise GenError("cannot read the kernel syscall tables: %s" % exc)
        self.names = set()
        for _, names in tables:
            self.names.update(names)
        self.arches = "x86_64, x86, aarch64, arm, riscv64, ppc64le, s390x"

    def knows(self, name):
        """True if some architecture's table lists the name."""
        return name in self.names


def member_key(member):
    return (not member.startswith("@"), member)


def wrap(first, items, last):
    """`first` + comma-separated items + `last`, wrapped at WIDTH columns."""
    lines = []
    line = first
    for i, item in enumerate(items):
        piece = item + ("," if i + 1 < len(items) else last)
        sep = "" if line in (first, INDENT) else " "
        if line not in (first, INDENT) and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line, sep = INDENT, ""
        line += sep + piece
    if not items:
        line += last
    lines.append(line)
    return lines


def comment(text, cont="//"):
    """`text` as `//` comment lines wrapped at WIDTH columns.

    Continuation lines start with `cont` (e.g. "//  " to indent them).
    """
    lines = []
    line = "//"
    for word in text.split():
        if line not in ("//", cont) and len(line) + 1 + len(word) > WIDTH:
            lines.append(line)
            line = cont
        line += " " + word
    lines.append(line)
    return lines


def render(groups, seccomp, major, full_version):
    out = ["ward 1", ""]
    header = [
        "Ward standard syscall groups.",
        "",
        "GENERATED FILE - do not edit by hand. Generated by %s from the "
        "output of `systemd-analyze syscall-filter` (systemd %s)."
        % (SCRIPT, full_version),
        "",
        "Membership follows systemd %s's documented syscall-filter groups "
        "(systemd.exec(5), SystemCallFilter=), named exactly as systemd "
        "names them, including @default and @known, in systemd's order. "
        "Where systemd nests a group inside another, the nested group is "
        "kept as an @group member. Members are sorted, @groups first."
        % major,
        "",
        "Names that the kernel syscall tables of %s (language/facts/kernel/) "
        "do not list are dropped and listed in a comment above their group."
        % seccomp.arches,
        "",
        "Groups after @known are Ward additions that systemd lacks.",
    ]
    if "@sandbox" not in [g[0] for g in groups]:
        header += ["", "systemd %s has no @sandbox group (it was added in a "
                   "later systemd release), so there is none here." % major]
    for para in header:
        out.extend(comment(para) if para else ["//"])
    out += ["//", "// Regenerate with:",
            "//   python3 %s > %s" % (SCRIPT, OUTPUT)]

    for name, description, members, dropped, note in groups:
        out.append("")
        if description:
            out.extend(comment(description))
        if note:
            out.extend(comment(note))
        if dropped:
            out.extend(comment(
                "Dropped (in no architecture's kernel syscall table): %s"
                % ", ".join(dropped),
                cont="//  "))
        out.extend(wrap("group %s = [" % name, members, "]"))
    return "\n".join(out) + "\n"


def build():
    major, full_version = systemd_version()
    systemd_groups = parse_syscall_filter(
        run(["systemd-analyze", "syscall-filter", "--no-pager"]))
    seccomp = KernelTables()
    group_names = {g[0] for g in systemd_groups}

    groups = []
    for name, description, members in systemd_groups:
        kept, dropped = [], []
        for m in members:
            if m.startswith("@"):
                if m not in group_names:
                    raise GenError("%s references unknown group %s"
                                   % (name, m))
                kept.append(m)
            elif seccomp.knows(m):
                kept.append(m)
            else:
                dropped.append(m)
        if len(set(kept)) != len(kept):
            raise GenError("duplicate member in %s" % name)
        groups.append((name, description, sorted(kept, key=member_key),
                       sorted(dropped), None))

    for name, description, members in WARD_GROUPS:
        if name in group_names:
            raise GenError("systemd now has %s; drop it from WARD_GROUPS"
                           % name)
        homes = sorted({g[0] for g in systemd_groups for m in members
                        if m in g[2]})
        note = ("Not a systemd group. "
                + ("systemd %s already lists these syscalls in %s."
                   % (major, ", ".join(homes)) if homes else
                   "systemd %s does not list these syscalls in any group."
                   % major))
        kept = [m for m in members if seccomp.knows(m)]
        dropped = sorted(m for m in members if m not in kept)
        groups.append((name, description, sorted(kept, key=member_key),
                       dropped, note))
    return render(groups, seccomp, major, full_version)


def main():
    try:
        text = build()
    except GenError as exc:
        print("%s: %s" % (SCRIPT, exc), file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
