#!/usr/bin/python3
"""ward push to many hosts (README.md, "bench_fleet.py"): prints, asserts nothing.

Root. HOSTS wardd (default 100) on this machine, each in a fresh network
namespace of its own (`ip netns add`, entered with `nsenter --net=`), with
its own state folder and unix socket; one `--hosts` file names them all.
For a policy of RULES network rules (default 100), at --parallel 1, 8 and
32 side by side in the same run, the whole `ward push --hosts` command
(compile and sign once, then the fan-out):
- a changed bundle (another uid each time): every host applies it with
  nftables;
- the unchanged bundle (the same push again): every host answers
  changed=false (goal: under 2 s for 100 hosts);
- with --ebpf, and the ebpf backend built: changed pushes with -t ebpf to a
  cgroup this bench makes, each wardd in a private mount namespace with a
  bpffs of its own (so that the pins of 100 agents do not meet), reported
  apart (eBPF applies load and attach programs: backends/ebpf/README.md).
Every push is checked (exit 0, every host ok, changed as expected) before
its time counts. Everything is torn down even on failure: the agents
killed, the namespaces and the cgroup deleted.
Usage: bench_fleet.py BUILD_DIR [HOSTS] [RULES] [REPEAT] [--ebpf]
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
EBPF = '--ebpf' in sys.argv
BUILD = os.path.abspath(ARGS[0]) if ARGS else 'build/dev'
HOSTS = int(ARGS[1]) if len(ARGS) > 1 else 100
RULES = int(ARGS[2]) if len(ARGS) > 2 else 100
REPEAT = int(ARGS[3]) if len(ARGS) > 3 else 3
WARD = os.path.join(BUILD, 'bin', 'ward')
WARDD = os.path.join(BUILD, 'bin', 'wardd')
TAG = 'wbench%d' % os.getpid()
PARALLEL = (1, 8, 32)
UID = 48200


def policy_text(n):
    lines = ['ward 1', 'policy fleet {', '  network {']
    for i in range(n):
        a, b = divmod(i, 250)
        if i % 10 == 9:
            lines.append('    deny tcp to 10.%d.%d.%d port 22' % (a // 250, a % 250, b + 1))
        else:
            lines.append('    allow tcp to 10.%d.%d.%d port %d' % (a // 250, a % 250, b + 1, 443 + i % 7))
    lines += ['  }', '}', '']
    return '\n'.join(lines)


class Fleet:
    def __init__(self, scratch):
        self.scratch = scratch
        self.procs = []
        self.netns = []
        self.cgroup = None

    def start(self, n, ebpf=False):
        """n agents; with ebpf each in a private mount namespace with its own bpffs."""
        urls = []
        for i in range(n):
            ns = '%s-%s%d' % (TAG, 'e' if ebpf else 'n', i)
            subprocess.run(['ip', 'netns', 'add', ns], check=True)
            self.netns.append(ns)
            subprocess.run(['ip', '-n', ns, 'link', 'set', 'lo', 'up'], check=True)
            home = os.path.join(self.scratch, ns)
            os.makedirs(home, mode=0o700)
            url = 'unix://' + os.path.join(home, 'agent.sock')
            cmd = ['nsenter', '--net=/run/netns/' + ns]
            if ebpf:
                # A cgroup of its own, seen as the cgroup v2 root through a
                # cgroup namespace, so that every agent's `--cgroup fleet` is
                # its own (a cgroup holds at most 64 attached programs), and
                # a bpffs of its own for its pins.
                mine = os.path.join(self.cgroup, 'a%d' % i)
                os.makedirs(os.path.join(mine, 'fleet'))
                cmd = cmd + ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && m=$1 && shift && exec unshare '
                             '--cgroup --mount --propagation private sh -c \'umount -l "$0" && mount -t cgroup2 cgroup2 "$0" && '
                             'mount -t bpf bpf /sys/fs/bpf && exec "$@"\' "$m" "$@"', mine, cgroup2_mount()]
            cmd = cmd + [WARDD, '--listen', url, '--state-dir', os.path.join(home, 'state')]
            self.procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            urls.append(url)
        for p, url in zip(self.procs[-n:], urls):
            line = p.stdout.readline()
            if line.strip() != 'wardd: listening on ' + url:
                p.wait(timeout=30)
                raise SystemExit('wardd did not start: %r %s' % (line, p.stderr.read()))
        return urls

    def rss_mib(self):
        total = 0
        for p in self.procs:
            # The agent itself: nsenter (and unshare, sh) exec it in place.
            with open('/proc/%d/status' % p.pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        return total / 1024

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        for ns in self.netns:
            subprocess.run(['ip', 'netns', 'delete', ns])
        self.netns = []
        if self.cgroup:
            # Children first; the programs go with their agents' bpffs.
            for _ in range(50):
                try:
                    for d in sorted((os.path.join(r, x) for r, ds, _ in os.walk(self.cgroup) for x in ds),
                                    key=len, reverse=True):
                        os.rmdir(d)
                    os.rmdir(self.cgroup)
                    break
                except OSError:
                    time.sleep(0.1)
            self.cgroup = None


def push(hosts_file, scope, policy, parallel, want_changed, target='nftables'):
    cmd = [WARD, 'push', '--hosts', hosts_file, '-t', target, '--parallel', str(parallel),
           '--format', 'json'] + scope + [policy]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit('%s: exit %d\n%s%s' % (' '.join(cmd), r.returncode, r.stdout[-2000:], r.stderr))
    hosts = json.loads(r.stdout)['hosts']
    wrong = [h for h in hosts if not h['ok'] or h['changed'] != want_changed]
    if wrong:
        raise SystemExit('push: hosts not ok or not changed=%s: %s' % (want_changed, wrong[:3]))
    return dt


def run(scratch, fleet):
    policy = os.path.join(scratch, 'fleet.ward')
    with open(policy, 'w') as f:
        f.write(policy_text(RULES))
    t = time.perf_counter()
    urls = fleet.start(HOSTS)
    started = time.perf_counter() - t
    hosts_file = os.path.join(scratch, 'hosts')
    with open(hosts_file, 'w') as f:
        f.write(''.join(u + '\n' for u in urls))
    print('%d wardd started in %.1f s; policy: %d network rules' % (HOSTS, started, RULES))
    one = [push_one(urls[0], policy, i) for i in range(REPEAT)]

    uid = UID
    rows = []
    for parallel in PARALLEL:
        changed, unchanged = [], []
        for _ in range(REPEAT):
            uid += 1
            changed.append(push(hosts_file, ['--uid', str(uid)], policy, parallel, True))
            unchanged.append(push(hosts_file, ['--uid', str(uid)], policy, parallel, False))
        rows.append((parallel, statistics.median(changed), statistics.median(unchanged)))
    rss = fleet.rss_mib()

    ebpf_rows = []
    if EBPF:
        fleet.close()
        fleet.cgroup = os.path.join(cgroup2_mount(), TAG)
        os.mkdir(fleet.cgroup)
        urls = fleet.start(HOSTS, ebpf=True)
        ebpf_hosts = os.path.join(scratch, 'hosts-ebpf')
        with open(ebpf_hosts, 'w') as f:
            f.write(''.join(u + '\n' for u in urls))
        for parallel in PARALLEL:
            changed, unchanged = [], []
            for i in range(REPEAT):
                # Another policy text each time (a port more): a changed bundle
                # to the same cgroup.
                p = os.path.join(scratch, 'fleet-ebpf-%d-%d.ward' % (parallel, i))
                with open(p, 'w') as f:
                    f.write(policy_text(RULES + len(ebpf_rows) * REPEAT + i + 1))
                changed.append(push(ebpf_hosts, ['--cgroup', 'fleet'], p, parallel, True, 'ebpf'))
                unchanged.append(push(ebpf_hosts, ['--cgroup', 'fleet'], p, parallel, False, 'ebpf'))
            ebpf_rows.append((parallel, statistics.median(changed), statistics.median(unchanged)))

    print()
    print('| %d hosts, whole `ward push --hosts` | --parallel | median | per host |' % HOSTS)
    print('|---|---:|---:|---:|')
    print('| one host (`--host`), a changed bundle | - | %.0f ms | |' % (statistics.median(one) * 1000))
    for parallel, changed, unchanged in rows:
        print('| nftables, changed bundle | %d | %.2f s | %.1f ms |' % (parallel, changed, changed * 1000 / HOSTS))
    for parallel, changed, unchanged in rows:
        print('| nftables, unchanged bundle (goal < 2 s) | %d | %.2f s | %.1f ms |'
              % (parallel, unchanged, unchanged * 1000 / HOSTS))
    for parallel, changed, unchanged in ebpf_rows:
        print('| ebpf, changed bundle | %d | %.2f s | %.1f ms |' % (parallel, changed, changed * 1000 / HOSTS))
    for parallel, changed, unchanged in ebpf_rows:
        print('| ebpf, unchanged bundle | %d | %.2f s | %.1f ms |' % (parallel, unchanged, unchanged * 1000 / HOSTS))
    print('| RSS of the %d wardd (nftables, after the pushes) | | %.0f MiB | %.1f MiB |' % (HOSTS, rss, rss / HOSTS))


def cgroup2_mount():
    with open('/proc/mounts') as f:
        for line in f:
            dev, where, kind = line.split()[:3]
            if kind == 'cgroup2':
                return where
    raise SystemExit('no cgroup v2 mount')


def push_one(url, policy, i):
    cmd = [WARD, 'push', '--host', url, '--uid', str(UID - 1 - i), policy]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit('%s: exit %d\n%s' % (' '.join(cmd), r.returncode, r.stderr))
    return time.perf_counter() - t


def main():
    if os.geteuid() != 0:
        print('bench_fleet: needs root')
        return 1
    # SIGTERM tears down too (finally below), as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with tempfile.TemporaryDirectory(prefix='ward-bench-fleet-') as scratch:
        fleet = Fleet(scratch)
        try:
            run(scratch, fleet)
        finally:
            fleet.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
