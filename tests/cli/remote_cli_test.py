#!/usr/bin/python3
"""[root] ward push, status, diff and remove --host against a real wardd.

In a private mount and network namespace, with tmpfs over /run and /var/lib
(so the host's agent, its socket and its state are neither read nor
touched), wardd runs as the host's agent: default socket, default state
folder. Then, through the `ward` a user runs:
- push applies (generation 1), pushing again changes nothing;
- status --host says in sync (text and JSON);
- diff --host against the file: no changes, the sections a network scope
  does not enforce named, exit 0 with --fail-on any;
- ward apply and ward remove refuse while wardd holds the default state;
- the table deleted behind wardd's back: status --host says drifted, and
  diff --host --fail-on any exits 1 with the permissions gained;
- remove --host takes it away.
Usage: remote_cli_test.py WARD_BINARY WARDD_BINARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

WARD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
WARDD = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
HOST = 'unix:///run/ward/agent/agent.sock'
UID = '48129'

POLICY = '''ward 1
policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.200.9.0/24
  }
}
'''


def ward(*args, want=0):
    r = subprocess.run([WARD] + list(args), capture_output=True, text=True, timeout=120)
    if want is not None and r.returncode != want:
        raise AssertionError('ward %s: exit %d, want %d\n%s%s' %
                             (' '.join(args), r.returncode, want, r.stdout, r.stderr))
    return r


def check(cond, what, r=None):
    if not cond:
        raise AssertionError(what + ('' if r is None else ':\n' + r.stdout + r.stderr))
    print('ok:', what)


def inner(scratch):
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    for d in ('/run', '/var/lib'):
        subprocess.run(['mount', '-t', 'tmpfs', '-o', 'mode=0755', 'tmpfs', d], check=True)
    policy = os.path.join(scratch, 'web.ward')
    with open(policy, 'w') as f:
        f.write(POLICY)
    agent = subprocess.Popen([WARDD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = agent.stdout.readline()
        check(line.strip() == 'wardd: listening on ' + HOST, 'wardd listens on the default socket')

        r = ward('push', '--host', HOST, '--uid', UID, policy)
        check(r.stdout.startswith('applied web on %s with nftables to uid %s: generation 1, sha256 '
                                  % (HOST, UID)), 'push applies generation 1', r)
        sha = r.stdout.splitlines()[0].split('sha256 ')[1]
        r = ward('push', '--host', HOST, '--uid', UID, policy)
        first, head = r.stdout.split('\n', 1)
        check(first == 'unchanged web on %s with nftables to uid %s: generation 1, sha256 %s'
              % (HOST, UID, sha), 'pushing the same bundle again changes nothing', r)
        # wardd's audit head after the call ("none" from a wardd keeping no log).
        check(re.fullmatch(r'audit head: (none|[0-9]+:[0-9a-f]+)\n', head) is not None,
              'push prints the audit head', r)
        nft = subprocess.run(['nft', 'list', 'table', 'inet', 'ward_web'], capture_output=True, text=True)
        check(nft.returncode == 0 and 'meta skuid %s' % UID in nft.stdout, 'the kernel holds the table')

        r = ward('status', '--host', HOST)
        check(r.stdout.startswith('web: nftables, generation 1, uid %s, in sync, sha256 %s, applied '
                                  % (UID, sha[:12])), 'status --host: in sync', r)
        j = json.loads(ward('status', '--host', HOST, '--format', 'json').stdout)
        p = j['policies'][0]
        check(j['version'] == 1 and p['policy'] == 'web' and p['in_sync'] is True and p['gained'] == []
              and p['lost'] == [] and p['generation'] == 1 and p['sha256'] == sha,
              'status --host --format json: in sync')

        r = ward('diff', '--host', HOST, policy, '--fail-on', 'any')
        check(r.stdout == 'no changes\nnot enforced here (not drift): syscalls, filesystem, process, limits\n',
              'diff --host: no changes, the other sections not enforced here', r)
        j = json.loads(ward('diff', '--host', HOST, policy, '--format', 'json').stdout)
        check(j['changes'] == [] and j['not_enforced'] == ['syscalls', 'filesystem', 'process', 'limits'],
              'diff --host --format json')

        r = ward('apply', '--uid', UID, policy, want=2)
        check('wardd (pid %d) manages this host\'s policies (it holds /var/lib/ward); go through it: '
              'ward push --host %s ...; nothing changed' % (agent.pid, HOST) in r.stderr,
              'ward apply refuses while wardd holds the default state', r)
        r = ward('remove', '--policy', 'web', want=2)
        check('ward remove: wardd (pid %d)' % agent.pid in r.stderr, 'so does ward remove', r)

        subprocess.run(['nft', 'delete', 'table', 'inet', 'ward_web'], check=True)
        r = ward('status', '--host', HOST)
        check(', drifted, ' in r.stdout and '\n  gained: + egress ' in r.stdout,
              'status --host: drifted, with the permissions gained', r)
        r = ward('diff', '--host', HOST, policy, '--fail-on', 'any', want=1)
        lines = r.stdout.splitlines()
        check(any(l.startswith('+ egress tcp ') for l in lines) and not any(l.startswith('- ') for l in lines),
              'diff --host --fail-on any: exit 1, gains only', r)
        r = ward('diff', '--host', HOST, policy)
        check(r.returncode == 0, 'diff --host without --fail-on: exit 0')
        # Drift is reported, never repaired (no --repair): still gone.
        nft = subprocess.run(['nft', 'list', 'table', 'inet', 'ward_web'], capture_output=True, text=True)
        check(nft.returncode != 0, 'wardd did not repair the drift')

        r = ward('remove', '--host', HOST, 'web')
        check(r.stdout == 'removed web from %s\n' % HOST, 'remove --host', r)
        r = ward('remove', '--host', HOST, '--policy', 'web')
        check(r.stdout == '%s manages no policy web\n' % HOST, 'remove --host again: nothing to remove', r)
        r = ward('status', '--host', HOST)
        check(r.stdout.startswith('%s manages no policy\n' % HOST), 'status --host: nothing managed', r)
        r = ward('push', '--host', HOST, policy, want=2)
        check('name exactly one scope' in r.stderr, 'push without a scope is refused', r)
        r = ward('push', '--host', 'tcp://127.0.0.1:1', '--uid', UID, policy, want=2)
        check('missing --ca --tls-cert --tls-key' in r.stderr, 'push over tcp without TLS flags is refused', r)
    finally:
        agent.terminate()
        agent.wait(timeout=30)
    check(agent.returncode == 0, 'wardd exits 0 on SIGTERM')
    print('PASS')


def main():
    if os.geteuid() != 0:
        print('remote_cli_test: needs root; skipped')
        return 77
    if len(sys.argv) > 3 and sys.argv[3] == '--inner':
        inner(sys.argv[4])
        return 0
    with tempfile.TemporaryDirectory(prefix='ward-remote-') as scratch:
        r = subprocess.run(['unshare', '--mount', '--net', '--propagation', 'private', '/usr/bin/python3',
                            os.path.abspath(__file__), WARD, WARDD, '--inner', scratch], timeout=300)
        return r.returncode


if __name__ == '__main__':
    sys.exit(main())
