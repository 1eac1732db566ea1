#!/usr/bin/env python3
"""Generate language/facts/syscall_signatures.inc from the kernel's tracefs.

Every syscall the running kernel can trace has an event directory
events/syscalls/sys_enter_NAME/ whose `format` file lists the syscall's
parameters as C declarations, e.g.

    field:int __syscall_nr;	offset:8;	size:4;	signed:1;
    field:const char * filename;	offset:24;	size:8;	signed:0;

The parameters are the fields after `__syscall_nr`.  For each one we keep the
C type text exactly as written (the declaration minus the parameter name);
the size/signed columns are ignored because tracefs widens every argument to
an 8-byte slot.

Output (stdout) is a C++ include file with one array-initializer entry per
syscall, sorted by name:

    {"socket", {"int", "int", "int"}},
    {"getpid", {}},

Usage:
    python3 language/facts/gen_syscall_signatures.py > language/facts/syscall_signatures.inc
    python3 language/facts/gen_syscall_signatures.py --check language/facts/syscall_signatures.inc
    python3 language/facts/gen_syscall_signatures.py --tracefs /sys/kernel/tracing

Without --tracefs the script uses an already-mounted tracefs if there is one;
otherwise it moves itself into a private mount namespace (unshare(CLONE_NEWNS),
the same thing `unshare -m` does) and mounts tracefs there, so nothing is
mounted in the caller's namespace.  That needs root.

Exit status: 0 success (--check: entries equal), 1 --check found differences,
2 usage or parse error, 77 tracefs unavailable (e.g. not root).

Standard library only.
"""

import argparse
import ctypes
import difflib
import os
import re
import sys

SCRIPT = "language/facts/gen_syscall_signatures.py"
OUTPUT = "language/facts/syscall_signatures.inc"

EXIT_DIFFERENT = 1
EXIT_ERROR = 2
EXIT_SKIP = 77

# Places where tracefs may already be mounted in the current namespace.
KNOWN_MOUNTS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
PRIVATE_MOUNT_POINT = "/sys/kernel/tracing"

# <sched.h> / <sys/mount.h> constants (identical on every Linux architecture).
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

EVENT_PREFIX = "sys_enter_"
NAME_RE = re.compile(r"[A-Za-z0-9_]+")
IDENT_AT_END_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class TracefsUnavailable(Exception):
    """tracefs (or its syscall events) cannot be reached."""


class FormatError(Exception):
    """A format file did not look the way this script expects."""


def has_syscall_events(root):
    return os.path.isdir(os.path.join(root, "events", "syscalls"))


def mount_private_tracefs():
    """Enter a private mount namespace and mount tracefs there.

    Returns the mount point.  The namespace belongs to this process only and
    disappears when it exits, so no cleanup is needed.
    """
    if os.geteuid() != 0:
        raise TracefsUnavailable("mounting tracefs needs root (euid is %d)"
                                 % os.geteuid())
    if not os.path.isdir(PRIVATE_MOUNT_POINT):
        raise TracefsUnavailable("%s does not exist (kernel without tracing?)"
                                 % PRIVATE_MOUNT_POINT)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare.argtypes = [ctypes.c_int]
    libc.unshare.restype = ctypes.c_int
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_ulong, ctypes.c_void_p]
    libc.mount.restype = ctypes.c_int

    def fail(what):
        err = ctypes.get_errno()
        raise TracefsUnavailable("%s: %s" % (what, os.strerror(err)))

    if libc.unshare(CLONE_NEWNS) != 0:
        fail("unshare(CLONE_NEWNS)")
    # Make every mount private so nothing we do propagates back out.
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        fail("making / private in the new mount namespace")
    if libc.mount(b"none", PRIVATE_MOUNT_POINT.encode(), b"tracefs", 0,
                  None) != 0:
        fail("mount -t tracefs none %s" % PRIVATE_MOUNT_POINT)
    return PRIVATE_MOUNT_POINT


def locate_tracefs(explicit):
    if explicit is not None:
        if not has_syscall_events(explicit):
            raise TracefsUnavailable("%s has no events/syscalls directory"
                                     % explicit)
        return explicit
    for root in KNOWN_MOUNTS:
        if has_syscall_events(root):
            return root
    root = mount_private_tracefs()
    if not has_syscall_events(root):
        raise TracefsUnavailable("tracefs has no events/syscalls (kernel "
                                 "built without CONFIG_FTRACE_SYSCALLS?)")
    return root


def parse_field(line):
    """Return the C declaration of a `field:DECL; offset:...` line."""
    body = line.strip()
    if not body.startswith("field:"):
        return None
    decl, sep, _ = body[len("field:"):].partition(";")
    if not sep:
        raise FormatError("unterminated field line: %r" % line)
    return decl.strip()


def split_declaration(decl):
    """Split `const char * filename` into ("const char *", "filename")."""
    if "[" in decl:
        raise FormatError("array field is not a syscall parameter: %r" % decl)
    match = IDENT_AT_END_RE.search(decl)
    if match is None:
        raise FormatError("no parameter name in %r" % decl)
    ctype = decl[:match.start()].rstrip()
    if not ctype:
        raise FormatError("no type in %r" % decl)
    return ctype, match.group()


def parse_format(text, where):
    """Return the list of parameter C types in a sys_enter format file."""
    decls = [d for d in (parse_field(l) for l in text.splitlines())
             if d is not None]
    try:
        nr_index = next(i for i, d in enumerate(decls)
                        if split_declaration(d)[1] == "__syscall_nr")
    except StopIteration:
        raise FormatError("%s: no __syscall_nr field" % where) from None
    types = []
    for decl in decls[nr_index + 1:]:
        # Newer kernels may append captured user-space strings as dynamic
        # `__data_loc` fields; they are not syscall parameters.
        if decl.startswith("__data_loc"):
            continue
        try:
            ctype, _name = split_declaration(decl)
        except FormatError as exc:
            raise FormatError("%s: %s" % (where, exc)) from None
        types.append(ctype)
    return types


def read_signatures(root):
    """Return sorted [(name, [ctype, ...])] for every sys_enter event."""
    events = os.path.join(root, "events", "syscalls")
    signatures = []
    for entry in os.listdir(events):
        if not entry.startswith(EVENT_PREFIX):
            continue
        name = entry[len(EVENT_PREFIX):]
        if not NAME_RE.fullmatch(name):
            raise FormatError("unexpected event name %r" % entry)
        path = os.path.join(events, entry, "format")
        with open(path, encoding="ascii") as f:
            text = f.read()
        header = re.search(r"^name:\s*(\S+)", text, re.M)
        if header is None or header.group(1) != entry:
            raise FormatError("%s: name line does not match directory" % path)
        signatures.append((name, parse_format(text, path)))
    if not signatures:
        raise TracefsUnavailable("no sys_enter_* events under %s" % events)
    signatures.sort()
    return signatures


def cxx_string(text):
    """A C++ narrow string literal for printable ASCII text."""
    if any(not (" " <= c <= "~") for c in text):
        raise FormatError("non-printable character in %r" % text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def entry_lines(signatures):
    return ["{%s, {%s}}," % (cxx_string(name),
                             ", ".join(cxx_string(t) for t in types))
            for name, types in signatures]


def header_lines():
    release = os.uname().release
    machine = os.uname().machine
    return [
        "// Syscall parameter C types, one entry per syscall, sorted by name:",
        '//   {"name", {"type of arg 0", "type of arg 1", ...}},',
        "//",
        "// GENERATED FILE - do not edit by hand.",
        "// Generated by %s from the tracefs" % SCRIPT,
        "// syscall event formats (events/syscalls/sys_enter_*/format) of",
        "// Linux %s (uname -r) on %s (uname -m)." % (release, machine),
        "//",
        "// Regenerate with:",
        "//   python3 %s > %s" % (SCRIPT, OUTPUT),
        "// Compare with the running kernel with:",
        "//   python3 %s --check %s" % (SCRIPT, OUTPUT),
    ]


def file_entry_lines(text):
    """Entry lines of an existing .inc file: everything but comments/blanks."""
    return [l.strip() for l in text.splitlines()
            if l.strip() and not l.strip().startswith("//")]


def main(argv):
    parser = argparse.ArgumentParser(
        description="Generate the Ward syscall signature table from tracefs.")
    parser.add_argument("--tracefs", metavar="DIR",
                        help="read an already-mounted tracefs at DIR instead "
                             "of mounting one in a private mount namespace")
    parser.add_argument("--check", metavar="FILE",
                        help="compare FILE's entries with the running "
                             "kernel; print a unified diff and exit 1 if "
                             "they differ")
    args = parser.parse_args(argv)

    existing = None
    if args.check is not None:
        try:
            with open(args.check, encoding="utf-8") as f:
                existing = file_entry_lines(f.read())
        except OSError as exc:
            print("%s: cannot read %s: %s" % (SCRIPT, args.check,
                                              exc.strerror), file=sys.stderr)
            return EXIT_ERROR

    try:
        root = locate_tracefs(args.tracefs)
        signatures = read_signatures(root)
    except TracefsUnavailable as exc:
        print("%s: tracefs unavailable: %s" % (SCRIPT, exc), file=sys.stderr)
        return EXIT_SKIP
    except (FormatError, OSError, UnicodeDecodeError) as exc:
        print("%s: %s" % (SCRIPT, exc), file=sys.stderr)
        return EXIT_ERROR

    entries = entry_lines(signatures)

    if existing is not None:
        if existing == entries:
            print("%s: %s matches the running kernel (%d syscalls)"
                  % (SCRIPT, args.check, len(entries)), file=sys.stderr)
            return 0
        diff = difflib.unified_diff(
            existing, entries, fromfile=args.check,
            tofile="running kernel (%s)" % os.uname().release, lineterm="")
        for line in diff:
            print(line)
        return EXIT_DIFFERENT

    sys.stdout.write("\n".join(header_lines() + entries) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
