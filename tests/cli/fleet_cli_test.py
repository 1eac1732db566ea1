#!/usr/bin/python3
"""[root] ward push, status, diff and remove to many hosts (--hosts, --host).

Several real wardd, each in a fresh network namespace of its own (`ip netns
add`, entered with `nsenter --net=`: the nftables tables live there), with
its own state folder and unix socket in a mkdtemp folder. Then:
- a hosts file (comments, blank lines): push to all, one line per host as it
  finishes (stdout is no terminal), the summary table, the table in each
  namespace; the same again is unchanged, with the same audit heads;
- --format json: exactly version and the six keys per host, in file order;
- a host named twice is refused; a bad --canary, --max-failures or URL is a
  usage error and contacts no host;
- one host down (a socket nobody serves): exit 1, its error, the others ok;
- a host that accepts but never answers: DEADLINE_EXCEEDED after exactly
  one retry (two connections);
- a canary failure: no other host started (skipped, and untouched);
- --max-failures 1 with --parallel 1: the third host onwards skipped;
- --record-heads: created 0600, appended to, /dev/stdout works;
- status, diff and remove --hosts;
- a signed push and a signed remove to a wardd started with --bundle-key; an
  unsigned push and remove refused there; a key that is not Ed25519 is a
  usage error before any host is contacted;
- on a terminal (a pty): the lines are rewritten in place.
Usage: fleet_cli_test.py WARD_BINARY WARDD_BINARY
"""
import fcntl
import json
import os
import pty
import re
import select
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

WARD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
WARDD = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
UID = '48131'
TAG = 'wfleet%d' % os.getpid()

POLICY = '''ward 1
policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.200.9.0/24
  }
}
'''
CANARY = POLICY.replace('policy web', 'policy canary')


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


class Agents:
    """wardd processes, each in its own network namespace; all torn down by close()."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.procs = []
        self.netns = []

    def start(self, name, *flags):
        ns = '%s-%s' % (TAG, name)
        subprocess.run(['ip', 'netns', 'add', ns], check=True)
        self.netns.append(ns)
        subprocess.run(['ip', '-n', ns, 'link', 'set', 'lo', 'up'], check=True)
        sock = os.path.join(self.scratch, name, 'agent.sock')
        state = os.path.join(self.scratch, name, 'state')
        os.makedirs(os.path.dirname(sock), mode=0o700)
        url = 'unix://' + sock
        p = subprocess.Popen(['nsenter', '--net=/run/netns/' + ns, WARDD, '--listen', url,
                              '--state-dir', state] + list(flags),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        line = p.stdout.readline()
        if line.strip() != 'wardd: listening on ' + url:
            p.wait(timeout=30) if not line else None
            raise AssertionError('wardd %s: %r %s' % (name, line, p.stderr.read() if p.poll() is not None else ''))
        return url, ns

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
        for ns in self.netns:
            subprocess.run(['ip', 'netns', 'delete', ns])


def nft_table(ns, table):
    return subprocess.run(['nsenter', '--net=/run/netns/' + ns, 'nft', 'list', 'table', 'inet', table],
                          capture_output=True, text=True)


def table_rows(stdout):
    """The summary table after the progress lines: header, rows, totals."""
    progress, table = stdout.split('\n\n', 1)
    return progress.splitlines(), table.splitlines()


def fmt_table(rows):
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    return ['  '.join(r[c].ljust(widths[c]) for c in range(4)) + '  ' + r[4] for r in rows]


def silent_server(path, accepted):
    """A unix socket that accepts connections and never answers."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    held = []

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            held.append(c)
            accepted.append(time.monotonic())
    threading.Thread(target=loop, daemon=True).start()
    return s, held


def run(scratch):
    policy = os.path.join(scratch, 'web.ward')
    with open(policy, 'w') as f:
        f.write(POLICY)
    canary_policy = os.path.join(scratch, 'canary.ward')
    with open(canary_policy, 'w') as f:
        f.write(CANARY)
    agents = Agents(scratch)
    try:
        a, ns_a = agents.start('a')
        b, ns_b = agents.start('b')
        c, ns_c = agents.start('c')
        hosts = [a, b, c]
        spaces = [ns_a, ns_b, ns_c]
        hosts_file = os.path.join(scratch, 'hosts')
        with open(hosts_file, 'w') as f:
            f.write('# the fleet\n%s\n\n  %s   # b\n%s\n' % (a, b, c))
        down = 'unix://' + os.path.join(scratch, 'nobody', 'agent.sock')
        width = max(len(h) for h in hosts + [down])

        # All ok.
        r = ward('push', '--hosts', hosts_file, '--uid', UID, policy)
        progress, table = table_rows(r.stdout)
        check(sorted(progress) == sorted('%s  ok  generation 1 (changed)' % h.ljust(len(c)) for h in hosts),
              'push --hosts: one line per host as it finishes', r)
        heads = [row.split()[-1] for row in table[1:4]]
        want = fmt_table([['HOST', 'RESULT', 'GENERATION', 'CHANGED', 'AUDIT HEAD / ERROR']] +
                         [[h, 'ok', '1', 'yes', heads[i]] for i, h in enumerate(hosts)])
        check(table == want + ['3 ok, 0 failed, 0 skipped'], 'push --hosts: the summary table', r)
        warnings = r.stderr.splitlines()
        check(warnings and len(set(warnings)) == len(warnings) and all(w.startswith('3 hosts: ') for w in warnings),
              "push --hosts: the agents' warnings once each, with their count of hosts", r)
        for ns in spaces:
            nft = nft_table(ns, 'ward_web')
            check(nft.returncode == 0 and 'meta skuid %s' % UID in nft.stdout,
                  'the table is in namespace %s' % ns)

        # Unchanged, as JSON: the exact shape, file order, the same heads.
        r = ward('push', '--hosts', hosts_file, '--uid', UID, policy, '--format', 'json')
        j = json.loads(r.stdout)
        check(list(j.keys()) == ['version', 'hosts'] and j['version'] == 1, 'json: version and hosts', r)
        check([list(h.keys()) for h in j['hosts']] ==
              [['host', 'ok', 'generation', 'changed', 'error', 'audit_head']] * 3, 'json: the six keys per host')
        json_heads = [h['audit_head'] for h in j['hosts']]
        check(j['hosts'] == [{'host': h, 'ok': True, 'generation': 1, 'changed': False, 'error': '',
                              'audit_head': json_heads[i]} for i, h in enumerate(hosts)],
              'json: every host unchanged at generation 1, in file order', r)
        check(all(re.fullmatch(r'[0-9]+:[0-9a-f]{64}', x) for x in heads + json_heads),
              'audit heads are SEQ:HASH', r)
        # An unchanged apply is audited too: each head moves on by one record.
        check([int(x.split(':')[0]) for x in json_heads] == [int(x.split(':')[0]) + 1 for x in heads] and
              all(x != y for x, y in zip(json_heads, heads)),
              'an unchanged push moves each audit head on by its one "unchanged" record', r)

        r = ward('push', '--host', a, '--uid', UID, policy, '--format', 'json')
        one = json.loads(r.stdout)
        next_head = one['hosts'][0]['audit_head'] if one.get('hosts') else ''
        check(one == {'version': 1, 'hosts': [{'host': a, 'ok': True, 'generation': 1, 'changed': False,
                                               'error': '', 'audit_head': next_head}]} and
              next_head.split(':')[0] == str(int(json_heads[0].split(':')[0]) + 1),
              'push --host --format json: the fleet form for one host, its head one record on', r)

        # Usage errors: nothing contacted.
        dup = os.path.join(scratch, 'dup')
        with open(dup, 'w') as f:
            f.write('%s\n%s\n%s\n' % (a, b, a))
        r = ward('push', '--hosts', dup, '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: %s is named twice (%s:1 and %s:3)\n' % (a, dup, dup), 'a host named twice is refused', r)
        r = ward('push', '--hosts', hosts_file, '--host', b, '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: %s is named twice (%s:4 and --host)\n' % (b, hosts_file), 'also across --hosts and --host', r)
        r = ward('push', '--hosts', hosts_file, '--canary', '5x', '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: --canary 5x: not N or P%\n', '--canary 5x: usage error', r)
        r = ward('push', '--hosts', hosts_file, '--max-failures', '101%', '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: --max-failures 101%: not N or P%\n', '--max-failures 101%: usage error', r)
        r = ward('push', '--hosts', hosts_file, '--timeout', 'soon', '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: --timeout soon: not a duration (30s, 2m, 1500ms)\n', '--timeout soon', r)
        r = ward('push', '--host', a, '--host', 'http://x', '--uid', UID, canary_policy, want=2)
        check(r.stderr == 'ward push: --host http://x: not unix:///PATH or tcp://HOST:PORT\n', 'a bad URL among hosts', r)
        empty = os.path.join(scratch, 'empty')
        with open(empty, 'w') as f:
            f.write('# nobody\n\n')
        r = ward('status', '--hosts', empty, want=2)
        check(r.stderr == 'ward status: --hosts %s names no host\n' % empty, 'a hosts file without hosts', r)
        check(all(nft_table(ns, 'ward_canary').returncode != 0 for ns in spaces), 'no usage error reached a host')

        # One host down.
        r = ward('push', '--host', a, '--host', down, '--host', b, '--uid', UID, policy, want=1)
        progress, table = table_rows(r.stdout)
        bad = [l for l in progress if l.startswith(down)]
        check(len(bad) == 1 and bad[0].startswith('%s  failed  UNAVAILABLE: ' % down), 'the host down: failed, UNAVAILABLE', r)
        check(table[2].startswith(down.ljust(width) + '  failed  -           -        UNAVAILABLE: ')
              and table[1].startswith(a.ljust(width) + '  ok      1           no       ')
              and table[3].startswith(b.ljust(width) + '  ok      1           no       ')
              and table[4] == '2 ok, 1 failed, 0 skipped', 'the others ok, in the given order', r)

        # A host that never answers: one retry, then DEADLINE_EXCEEDED.
        accepted = []
        mute_path = os.path.join(scratch, 'mute.sock')
        mute, _held = silent_server(mute_path, accepted)
        mute_url = 'unix://' + mute_path
        t = time.monotonic()
        r = ward('status', '--host', a, '--host', mute_url, '--timeout', '400ms', want=1)
        elapsed = time.monotonic() - t
        mute.close()
        line = [l for l in r.stdout.splitlines() if l.startswith(mute_url)][0]
        check(line == '%s  failed  DEADLINE_EXCEEDED: Deadline Exceeded' % mute_url.ljust(max(len(a), len(mute_url))), 'a mute host: DEADLINE_EXCEEDED', r)
        check(len(accepted) == 2 and elapsed >= 0.8, 'after exactly one retry, on a new connection (%d connections, %.2f s)'
              % (len(accepted), elapsed))

        # A canary failure: nobody else started.
        canary_hosts = os.path.join(scratch, 'canary-hosts')
        with open(canary_hosts, 'w') as f:
            f.write('%s\n%s\n%s\n%s\n' % (down, a, b, c))
        r = ward('push', '--hosts', canary_hosts, '--canary', '1', '--uid', UID, canary_policy, want=1)
        progress, table = table_rows(r.stdout)
        check(progress[0].startswith('%s  failed  UNAVAILABLE: ' % down)
              and progress[1:] == ['%s  skipped  a canary failed' % h.ljust(width) for h in hosts],
              'the canary failed: the rest skipped', r)
        check(table[2:5] == [h.ljust(width) + '  skipped  -           -        skipped: a canary failed' for h in hosts]
              and table[5] == '0 ok, 1 failed, 3 skipped', 'the table says skipped', r)
        check(all(nft_table(ns, 'ward_canary').returncode != 0 for ns in spaces), 'the skipped hosts are untouched')
        r = ward('push', '--hosts', canary_hosts, '--canary', '25%', '--uid', UID, canary_policy,
                 '--format', 'json', want=1)
        j = json.loads(r.stdout)
        check([(h['host'], h['ok'], h['error']) for h in j['hosts'][1:]] ==
              [(h, False, 'skipped: a canary failed') for h in hosts] and
              j['hosts'][0]['error'].startswith('UNAVAILABLE: '), '--canary 25% of 4 is 1 host; json skipped', r)

        # --max-failures: stop starting hosts once exceeded.
        down2 = 'unix://' + os.path.join(scratch, 'nobody2', 'agent.sock')
        mf_hosts = os.path.join(scratch, 'mf-hosts')
        with open(mf_hosts, 'w') as f:
            f.write('%s\n%s\n%s\n%s\n%s\n' % (down, down2, a, b, c))
        r = ward('push', '--hosts', mf_hosts, '--parallel', '1', '--max-failures', '1', '--uid', UID,
                 canary_policy, '--format', 'json', want=1)
        j = json.loads(r.stdout)
        check([(h['ok'], h['error'][:13]) for h in j['hosts'][:2]] == [(False, 'UNAVAILABLE: ')] * 2 and
              [(h['host'], h['ok'], h['error']) for h in j['hosts'][2:]] ==
              [(h, False, 'skipped: more than 1 hosts failed') for h in hosts], '--max-failures 1: the rest skipped', r)
        check(all(nft_table(ns, 'ward_canary').returncode != 0 for ns in spaces), 'and untouched')
        r = ward('push', '--hosts', mf_hosts, '--parallel', '1', '--max-failures', '40%', '--uid', UID,
                 canary_policy, want=1)
        progress, table = table_rows(r.stdout)
        check(table[-1] == '3 ok, 2 failed, 0 skipped', '--max-failures 40% of 5 is 2: every host tried', r)
        for ns in spaces:
            check(nft_table(ns, 'ward_canary').returncode == 0, 'the canary policy reached %s' % ns)

        # --record-heads.
        heads_file = os.path.join(scratch, 'heads')
        want = ''
        for _ in range(2):
            r = ward('push', '--hosts', hosts_file, '--uid', UID, policy, '--record-heads', heads_file,
                     '--format', 'json')
            want += ''.join('%s %s\n' % (h['host'], h['audit_head']) for h in json.loads(r.stdout)['hosts'])
        st = os.stat(heads_file)
        with open(heads_file) as f:
            text = f.read()
        check(stat.S_IMODE(st.st_mode) == 0o600 and text == want and len(text.splitlines()) == 6 and
              all(re.fullmatch(r'\S+ [0-9]+:[0-9a-f]{64}', line) for line in text.splitlines()),
              '--record-heads: created 0600, one line per host per push (the heads the push reported), appended (%d bytes)' % len(text))
        r = ward('push', '--host', a, '--uid', UID, policy, '--record-heads', '/dev/stdout')
        lines = r.stdout.splitlines()
        check(len(lines) >= 2 and lines[-2].startswith('audit head: ') and
              lines[-1] == '%s %s' % (a, lines[-2][len('audit head: '):]), '--record-heads /dev/stdout', r)
        r = ward('push', '--hosts', hosts_file, '--uid', UID, canary_policy, '--record-heads',
                 os.path.join(scratch, 'no', 'such', 'heads'), want=2)
        check(r.stderr == 'ward push: --record-heads %s: No such file or directory; nothing sent\n'
              % os.path.join(scratch, 'no', 'such', 'heads'), '--record-heads where it cannot be: nothing sent', r)

        # status, diff, remove --hosts.
        r = ward('status', '--hosts', hosts_file)
        progress, table = table_rows(r.stdout)
        check(sorted(progress) == sorted('%s  in sync  2 policies' % h.ljust(len(c)) for h in hosts),
              'status --hosts: every host in sync', r)
        subprocess.run(['nsenter', '--net=/run/netns/' + ns_b, 'nft', 'delete', 'table', 'inet', 'ward_web'], check=True)
        r = ward('status', '--hosts', hosts_file, '--format', 'json')
        j = json.loads(r.stdout)
        check([(h['host'], h['ok'], h['in_sync']) for h in j['hosts']] == [(a, True, True), (b, True, False), (c, True, True)]
              and [p['policy'] for p in j['hosts'][1]['policies']] == ['canary', 'web'],
              'status --hosts --format json: b drifted', r)
        r = ward('diff', '--hosts', hosts_file, policy, '--fail-on', 'any', '--format', 'json', want=1)
        j = json.loads(r.stdout)
        check([(h['ok'], len(h['changes']) > 0) for h in j['hosts']] == [(True, False), (False, True), (True, False)]
              and j['hosts'][1]['error'].startswith('differs (--fail-on any): '),
              'diff --hosts --fail-on any: b differs, exit 1', r)
        r = ward('diff', '--hosts', hosts_file, policy)
        check(r.returncode == 0, 'diff --hosts without --fail-on: exit 0', r)
        r = ward('remove', '--hosts', hosts_file, '--policy', 'canary')
        progress, table = table_rows(r.stdout)
        check(sorted(progress) == sorted('%s  ok  removed canary' % h.ljust(len(c)) for h in hosts)
              and table[-1] == '3 ok, 0 failed, 0 skipped', 'remove --hosts', r)
        check(all(nft_table(ns, 'ward_canary').returncode != 0 for ns in spaces), 'the tables are gone')

        # On a terminal: every line from the start, rewritten in place.
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
        p = subprocess.Popen([WARD, 'status', '--hosts', hosts_file], stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        out = b''
        while True:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        p.wait(timeout=30)
        os.close(master)
        text = out.decode()
        check(text.startswith(''.join('%s  waiting\r\n' % h.ljust(len(c)) for h in hosts))
              and '\x1b[3A\r\x1b[2K%s  checking...\x1b[3B\r' % a.ljust(len(c)) in text
              and '\x1b[1A\r\x1b[2K%s  in sync  1 policy\x1b[1B\r' % c.ljust(len(c)) in text,
              'on a terminal: the lines rewritten in place')

        signed(scratch, agents, policy)
    finally:
        agents.close()
    print('PASS')


def signed(scratch, agents, policy):
    key = os.path.join(scratch, 'push.key')
    pub = os.path.join(scratch, 'push.pub')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'ed25519', '-out', key], check=True)
    subprocess.run(['openssl', 'pkey', '-in', key, '-pubout', '-out', pub], check=True)
    rsa = os.path.join(scratch, 'rsa.key')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'rsa', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', rsa],
                   check=True, capture_output=True)
    s, ns = agents.start('signed', '--bundle-key', pub)

    r = ward('push', '--host', s, '--uid', UID, policy, '--sign-key', rsa, want=2)
    check(r.stderr == 'ward push: --sign-key %s: not an Ed25519 key (make one with `openssl genpkey -algorithm '
          'ed25519`); nothing sent\n' % rsa, 'an RSA key is a usage error', r)
    r = ward('remove', '--host', s, '--policy', 'web', '--sign-key', rsa, want=2)
    check(r.stderr.startswith('ward remove: --sign-key %s: not an Ed25519 key' % rsa), 'for remove too', r)
    r = ward('push', '--host', s, '--uid', UID, policy, '--sign-key', pub, want=2)
    check(r.stderr.startswith('ward push: --sign-key %s: ' % pub), 'so is a public key', r)
    r = ward('push', '--host', s, '--uid', UID, policy, '--sequence', '5', want=2)
    check(r.stderr == 'ward push: --sequence and --valid-for need --sign-key\n', '--sequence without a key', r)
    check(nft_table(ns, 'ward_web').returncode != 0, 'nothing reached the host')

    r = ward('push', '--host', s, '--uid', UID, policy, want=2)
    check(r.stderr == 'ward push: %s: PERMISSION_DENIED: bundle.signature: missing: this wardd takes only '
          'signed bundles\n' % s, 'an unsigned push is refused', r)
    r = ward('push', '--host', s, '--uid', UID, policy, '--sign-key', key, '--sequence', '10', '--valid-for', '1h')
    check(r.stdout.startswith('applied web on %s with nftables to uid %s: generation 1, ' % (s, UID)),
          'a signed push is applied', r)
    check(nft_table(ns, 'ward_web').returncode == 0, 'the table is in place')
    r = ward('push', '--host', s, '--uid', str(int(UID) + 1), policy, '--sign-key', key, '--sequence', '9', want=2)
    check(r.stderr == "ward push: %s: PERMISSION_DENIED: bundle.signature.sequence: 9 is not higher than 10, the "
          "highest this wardd accepted for 'web' (a replay or a rollback)\n" % s, 'a lower sequence is refused', r)
    r = ward('remove', '--host', s, '--policy', 'web', want=2)
    check(r.stderr == 'ward remove: %s: PERMISSION_DENIED: remove.signature: missing: this wardd takes only '
          'signed removals\n' % s, 'an unsigned remove is refused', r)
    check(nft_table(ns, 'ward_web').returncode == 0, 'and the table stays')
    # The tombstone's scope from the host (Get).
    r = ward('remove', '--host', s, '--policy', 'web', '--sign-key', key, '--sequence', '11')
    check(r.stdout == 'removed web from %s\n' % s, 'a signed remove, its scope from the host', r)
    check(nft_table(ns, 'ward_web').returncode != 0, 'the table is gone')

    # Two signed hosts: one bundle, one signature (the default sequence:
    # now in ms), the same bytes to both; then a tombstone with the scope
    # given.
    s2, ns2 = agents.start('signed2', '--bundle-key', pub)
    r = ward('push', '--host', s, '--host', s2, '--uid', UID, policy, '--sign-key', key, '--format', 'json')
    j = json.loads(r.stdout)
    check([(h['ok'], h['generation'], h['changed']) for h in j['hosts']] == [(True, 2, True), (True, 1, True)],
          'a signed push to two hosts', r)
    r = ward('remove', '--host', s, '--host', s2, '--policy', 'web', '--uid', UID, '--sign-key', key,
             '--format', 'json')
    j = json.loads(r.stdout)
    check([(h['ok'], h['changed']) for h in j['hosts']] == [(True, True), (True, True)],
          'a signed remove from two hosts, the scope given', r)
    check(nft_table(ns, 'ward_web').returncode != 0 and nft_table(ns2, 'ward_web').returncode != 0,
          'both tables gone')
    r = ward('remove', '--host', s, '--host', s2, '--policy', 'web', '--sign-key', key, '--format', 'json')
    j = json.loads(r.stdout)
    check([(h['ok'], h['changed']) for h in j['hosts']] == [(True, False), (True, False)],
          'a signed remove of what neither host manages: nothing to remove (its Get says so)', r)


def main():
    if os.geteuid() != 0:
        print('fleet_cli_test: needs root; skipped')
        return 77
    with tempfile.TemporaryDirectory(prefix='ward-fleet-') as scratch:
        run(scratch)
    return 0


if __name__ == '__main__':
    sys.exit(main())
