#!/usr/bin/python3
"""Runs the README's tour and checks that it prints what the README says.

  ci/readme_tour.py --check  [--bin DIR] [README.md]   exit 1 and a diff when stale,
                                                       77 when root's blocks were skipped
  ci/readme_tour.py --update [--bin DIR] [README.md]   rewrite the stale blocks

A fenced block takes part when the line just before it is a marker comment:

  <!-- tour -->                 a ```console block: run its `$ ` commands and
                                compare what they print (stdout and stderr,
                                as a terminal shows them) with the lines after
                                each command
  <!-- tour: file=PATH -->      a ```ward, ```json or ```yaml block: its text
                                is the file PATH of the repository, byte for byte
  <!-- tour: skip: REASON -->   a console block that is shown but not run

Options of a run block, after `tour:` and separated by spaces: `root` (needs
root: without it the block is reported as skipped), `netns` (runs in a fresh
network namespace, deleted afterwards), `continue` (runs in the previous
block's folder instead of a fresh one), `setup=PATH` (a script of the
repository sourced first, its output hidden: it starts what the block needs
and sets a trap on EXIT that takes it down).

Each block runs in a fresh temporary folder in which `policies` and `tests`
are links to the repository's and `examples` a copy of it, so that `-o out`
writes nowhere in the tree and the paths printed are the ones the README
shows (the commands are written to run from the repository's root). The commands of a
block run in one shell, one after another (`echo $?` sees the previous
command's status); a command whose quotes are not closed goes on over the next
lines. An output line `...` stands for any number of lines. Machine-dependent
text (NORMALISE below) is replaced on both sides before comparing.
"""

import argparse
import difflib
import os
import pty
import re
import stat
import shutil
import subprocess
import sys
import tempfile
import termios

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^<!-- tour(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
SEPARATOR = "\x1eward-tour-command-end\x1e"

# Text that differs from machine to machine or run to run, replaced on both
# sides before comparing. Keep it short: each rule hides something from the
# check.
NORMALISE = [
    (re.compile(r"/tmp/ward-tour-[A-Za-z0-9_]+"), "$TOUR"),
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?\b"), "$TIME"),
    (re.compile(r"\bpid \d+\b"), "pid $PID"),
    (re.compile(r"\"pid\": ?\d+"), "\"pid\": $PID"),
    (re.compile(r"\b\d+ programs listed"), "$N programs listed"),
    (re.compile(r"/sys/fs/cgroup(/unified)?/"), "$CGROUP2/"),
    (re.compile(r"\brun-\d+"), "run-$PID"),
    (re.compile(r"\(id \d+\)"), "(id $ID)"),
    (re.compile(r"\bexpires [0-9hms]+"), "expires $T"),  # nft's countdown of a set element
    (re.compile(r"^commit: \S+$"), "commit: $COMMIT"),  # ward --version
    (re.compile(r"^build type: \S+$"), "build type: $BUILD"),
    # a network denial's exe is read from /proc when ward run reads the event,
    # empty when the process has exited by then (enforcers/README.md): a race
    # with the workload, which the README's example loses now and then
    (re.compile(r'"exe":"[^"]*","layer":"network"'), '"exe":$EXE,"layer":"network"'),
    # ward learn's figures depend on the host (what python3 reads at start-up
    # differs by a file or two from machine to machine; tests/enforcers/learn
    # frames them the same way)
    (re.compile(r"recorded \d+ events: [^;]*; (\d+) dropped"), r"recorded $N events: ...; \1 dropped"),
    # an eBPF object's pin folder is named by the object's bytes, whose BTF
    # holds the build's source paths (enforcers/linux/ebpf.h)
    (re.compile(r"(/sys/fs/bpf/ward/[^/ ]+/)[0-9a-f]{16}-"), r"\1$OBJECT-"),
    # ward doctor: the host's kernel build and its user-namespace limit
    (re.compile(r"^ward doctor: kernel \S+ "), "ward doctor: kernel $KERNEL "),
    (re.compile(r"max_user_namespaces \d+"), "max_user_namespaces $N"),
    # the seccomp cache's entries are named by the build's filter bytes
    (re.compile(r"/var/cache/ward/seccomp/[0-9a-f]{64}\."), "/var/cache/ward/seccomp/$SHA256."),
]


def normalise(line):
    for pattern, repl in NORMALISE:
        line = pattern.sub(repl, line)
    return line.rstrip()


class Block:
    def __init__(self, start, end, lang, marker, body):
        self.start = start  # index of the opening fence
        self.end = end  # index of the closing fence
        self.lang = lang
        self.marker = marker
        self.body = body  # lines between the fences

    def options(self):
        return self.marker.split() if self.marker else []


def find_blocks(lines):
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        if marker:
            blocks.append(Block(i, j, m.group(1), marker.group(1) or "", lines[i + 1 : j]))
        i = j + 1
    return blocks


def complete(command):
    """True when bash would read the command to its end (quotes closed)."""
    r = subprocess.run(["bash", "-n", "-c", command], capture_output=True)
    return r.returncode == 0


def parse_console(body):
    """[(command, expected output lines)] of a console block."""
    steps = []
    i = 0
    while i < len(body):
        if not body[i].startswith("$ "):
            raise ValueError(f"line {i + 1} of the block is output before any command")
        command = body[i][2:]
        i += 1
        while not complete(command) and i < len(body):
            command += "\n" + body[i]
            i += 1
        out = []
        while i < len(body) and not body[i].startswith("$ "):
            out.append(body[i])
            i += 1
        steps.append((command, out))
    return steps


def run_block(steps, folder, env, netns, setup):
    script = ["exec 2>&1", "__tour_rc=0"]
    if setup:
        # Sourced, so that its traps (the clean-up) run when the block ends.
        script.append(f". {os.path.join(REPO, setup)} >/dev/null 2>&1 || exit 99")
    for command, _ in steps:
        script.append("(exit $__tour_rc)")
        script.append(command)
        script.append("__tour_rc=$?")
        script.append(f"printf '%s\\n' '{SEPARATOR}'")
    argv = ["bash", "-c", "\n".join(script)]
    if netns:
        # A mount namespace of its own too, where a setup may bind files
        # (a resolv.conf) over the host's.
        argv = ["nsenter", f"--net=/run/netns/{netns}", "unshare", "--mount",
                "--propagation", "private"] + argv
    # On a terminal, as a user sees the commands: stdout is line-buffered
    # there, so its lines and stderr's come in the order they are written.
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # no \r before every \n
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=300)
    text = b"".join(chunks).decode("utf-8", "replace")
    if setup and proc.returncode == 99:
        raise SystemExit(f"readme_tour: the setup {setup} failed")
    parts = text.split(SEPARATOR + "\n")
    outputs = []
    for p in parts[: len(steps)]:
        lines = p.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        while lines and not lines[-1].strip():
            lines.pop()  # a blank last line cannot be told from the block's end
        outputs.append(lines)
    while len(outputs) < len(steps):
        outputs.append(["(the block's shell ended before this command)"])
    return outputs


def segments(expected):
    """The expected lines split at `...` lines."""
    segs = [[]]
    for line in expected:
        if line.strip() == "...":
            segs.append([])
        else:
            segs[-1].append(line)
    return segs


def matches(expected, actual):
    exp = [normalise(l) for l in expected]
    act = [normalise(l) for l in actual]
    if not any(l.strip() == "..." for l in expected):
        return exp == act
    pattern = "".join(
        r"(?:.*\n)*?" if l.strip() == "..." else re.escape(l) + r"\n" for l in exp
    )
    return re.fullmatch(pattern, "".join(l + "\n" for l in act)) is not None


def rewrite(expected, actual):
    """The new text of an output: the actual lines, elided where the old
    text was: each segment between `...` lines keeps its length and is
    anchored at its first line's text in the actual output."""
    segs = segments(expected)
    if len(segs) == 1:
        return list(actual)
    dots = [l for l in expected if l.strip() == "..."]
    head, tail = segs[0], segs[-1]
    if len(actual) <= len(head) + len(tail):
        return list(actual)
    out = list(actual[: len(head)])
    pos = len(head)
    limit = len(actual) - len(tail)
    for n, seg in enumerate(segs[1:-1]):
        out.append(dots[n])
        if not seg:
            continue
        key = normalise(seg[0])
        for k in range(pos, limit):
            if normalise(actual[k]) == key:
                take = actual[k : min(k + len(seg), limit)]
                out.extend(take)
                pos = k + len(take)
                break
    out.append(dots[-1])
    out.extend(actual[limit:])
    return out


def make_folder():
    folder = tempfile.mkdtemp(prefix="ward-tour-")
    for name in ("policies", "tests"):
        os.symlink(os.path.join(REPO, name), os.path.join(folder, name))
    # A copy: examples that rewrite their file (`ward fmt`) leave the tree alone.
    shutil.copytree(os.path.join(REPO, "examples"), os.path.join(folder, "examples"))
    return folder


def add_netns():
    name = f"ward-tour-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "dev", "bin"),
                    help="folder of the built ward (default build/dev/bin)")
    ap.add_argument("readme", nargs="?", default=os.path.join(REPO, "README.md"))
    args = ap.parse_args()

    if not os.access(os.path.join(args.bin, "ward"), os.X_OK):
        print(f"readme_tour: no ward in {args.bin} (build it, or pass --bin DIR)", file=sys.stderr)
        return 2
    # The same few variables on every machine (`ward run` passes the ones
    # its policy allows to the command).
    env = {
        "PATH": os.path.abspath(args.bin) + ":/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        # Every run compiles its policy: the output does not depend on the
        # runs before it.
        "WARD_RUN_CACHE": "0",
        "WARD_STD": os.environ.get("WARD_STD", os.path.join(REPO, "policies", "std")),
    }

    with open(args.readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = find_blocks(lines)
    is_root = os.geteuid() == 0
    stale = []  # (block, new body)
    counts = {"checked": 0, "skipped": 0, "not run": 0, "files": 0}
    folders = []
    folder = None
    try:
        for b in blocks:
            opts = b.options()
            where = f"{os.path.basename(args.readme)}:{b.start + 1}"
            if opts and opts[0].startswith("file="):
                path = os.path.join(REPO, opts[0][len("file="):])
                with open(path, encoding="utf-8") as f:
                    want = f.read().rstrip("\n").split("\n")
                counts["files"] += 1
                if b.body != want:
                    stale.append((b, want, f"{where}: the block is not {opts[0][5:]}"))
                continue
            if b.lang != "console":
                raise SystemExit(f"readme_tour: {where}: a run marker on a ```{b.lang} block")
            if opts and opts[0].startswith("skip"):
                counts["not run"] += 1
                continue
            if "root" in opts and not is_root:
                counts["skipped"] += 1
                print(f"readme_tour: {where}: skipped (needs root)", file=sys.stderr)
                continue
            if "continue" not in opts or folder is None:
                folder = make_folder()
                folders.append(folder)
            steps = parse_console(b.body)
            netns = add_netns() if "netns" in opts else None
            try:
                setup = next((o[len("setup="):] for o in opts if o.startswith("setup=")), None)
                outputs = run_block(steps, folder, env, netns, setup)
            finally:
                if netns:
                    subprocess.run(["ip", "netns", "del", netns])
            counts["checked"] += 1
            new_body = []
            ok = True
            for (command, expected), actual in zip(steps, outputs):
                new_body.extend(("$ " + command).split("\n"))
                if matches(expected, actual):
                    new_body.extend(expected)
                else:
                    ok = False
                    new_body.extend(rewrite(expected, actual))
            if not ok:
                stale.append((b, new_body, f"{where}: the output differs"))
    finally:
        for d in folders:
            shutil.rmtree(d, ignore_errors=True)

    # The blocks run as root; make sure none of them (or a program they
    # start) replaced a device of the host.
    for dev in ("/dev/null", "/dev/zero", "/dev/full"):
        if not stat.S_ISCHR(os.stat(dev).st_mode):
            print(f"readme_tour: {dev} is no longer a character device after the tour", file=sys.stderr)
            return 1

    summary = (f"readme_tour: {counts['checked']} blocks run, {counts['files']} files compared, "
               f"{counts['not run']} shown but not run, {counts['skipped']} skipped")
    if args.check:
        for b, new_body, why in stale:
            print(why)
            sys.stdout.writelines(
                l + "\n" for l in difflib.unified_diff(
                    b.body, new_body, "README", "ward", lineterm="", n=2))
        print(summary + (f": {len(stale)} stale" if stale else ": all up to date"))
        if stale:
            return 1
        return 77 if counts["skipped"] else 0  # CTest's skip code (tests/CMakeLists.txt)
    for b, new_body, why in sorted(stale, key=lambda s: -s[0].start):
        lines[b.start + 1 : b.end] = new_body
        print(f"updated {why.split(': ')[0]}")
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(summary + f": {len(stale)} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
