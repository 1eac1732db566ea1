#!/usr/bin/python3
"""[root] Pull mode: a real wardd --bundle-dir over a folder laid out as the kubelet lays out a ConfigMap volume.

In a private mount and network namespace (its own nftables), with a private
state folder and socket, wardd watches a folder holding
`..2026_12_02_..../web.wardd-bundle.json`, the `..data` link to it and
`web.wardd-bundle.json -> ..data/web.wardd-bundle.json`. Bundles are made by
`ward compile -t wardd-bundle`; new versions are swapped in as the kubelet
does (a new timestamped folder, `..data_tmp` renamed over `..data`, the old
folder deleted). Asserted:
- ward compile: deterministic (same input and --sequence, same bytes), the
  ConfigMap parses and is valid against the core/v1 ConfigMap schema and holds
  the bundle file byte for byte; refusals without --sign-key, over 1 MiB;
- the first bundle is applied (generation 1, the kernel's table), a swap
  applies the next (generation 2);
- an unsigned (signature stripped), a foreign-key, an older-sequence bundle,
  a file that is not a bundle and one named after another policy are each
  refused, audited with the file as the caller, and change nothing
  (generation, sha256 and table as before);
- a valid bundle after them applies (generation 3): the refusals left no mark;
- a bundle that disappears removes nothing; a wardd restarted on the same
  folder finds its bundle in force (one audited "unchanged") and refuses
  nothing;
- a tombstone (ward compile --remove) in the bundle's place: foreign-key and
  wrong-scope ones refused, the signed one removes the policy and its table;
  the older bundle put back is refused (its sequence is spent).
Usage: pull_test.py WARD WARDD SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

WARD, WARDD, SRC = (os.path.abspath(a) for a in sys.argv[1:4]) if len(sys.argv) > 3 else (None,) * 3
UID = '48129'
SCHEMA = 'tests/packaging/kubernetes/schemas/k8s-v1.31.0-configmap-v1.json'
NOT_AFTER = '2099-01-01T00:00:00Z'


def policy(port):
    return 'ward 1\npolicy web {\n  network {\n    allow tcp to 10.0.0.0/8 port %d\n  }\n}\n' % port


def run(*args, want=0):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if want is not None and r.returncode != want:
        raise AssertionError('%s: exit %d, want %d\n%s%s' % (' '.join(args), r.returncode, want,
                                                           r.stdout, r.stderr))
    return r


def check(cond, what, detail=''):
    if not cond:
        raise AssertionError(what + ('\n' + detail if detail else ''))
    print('ok:', what)


class Volume:
    """A folder as the kubelet's atomic writer keeps a ConfigMap volume."""

    def __init__(self, path):
        self.path = path
        self.n = 0
        os.mkdir(path)

    def publish(self, files):
        """files: {key: bytes}. One swap: the keys' links, then ..data re-pointed in one rename."""
        self.n += 1
        ts = '..2026_12_02_10_00_%02d.%09d' % (self.n, self.n)
        os.mkdir(os.path.join(self.path, ts))
        for key, data in files.items():
            with open(os.path.join(self.path, ts, key), 'wb') as f:
                f.write(data)
        old = os.readlink(os.path.join(self.path, '..data')) if os.path.islink(
            os.path.join(self.path, '..data')) else None
        os.symlink(ts, os.path.join(self.path, '..data_tmp'))
        os.rename(os.path.join(self.path, '..data_tmp'), os.path.join(self.path, '..data'))
        for key in files:
            link = os.path.join(self.path, key)
            if not os.path.islink(link):
                os.symlink(os.path.join('..data', key), link)
        for name in os.listdir(self.path):
            if not name.startswith('.') and name not in files:
                os.unlink(os.path.join(self.path, name))
        if old:
            shutil.rmtree(os.path.join(self.path, old))


class Agent:
    def __init__(self, scratch, bundle_dir, key_pub):
        self.sock = 'unix://' + os.path.join(scratch, 'sock', 'agent.sock')
        self.state = os.path.join(scratch, 'state')
        self.lines = []
        self.cv = threading.Condition()
        self.proc = subprocess.Popen(
            [WARDD, '--state-dir', self.state, '--listen', self.sock, '--bundle-key', key_pub,
             '--bundle-dir', bundle_dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        check(line.strip() == 'wardd: listening on ' + self.sock, 'wardd listens', line)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cv:
                self.lines.append(line.rstrip('\n'))
                self.cv.notify_all()

    def wait_line(self, text, start=0, timeout=20):
        """The first stderr line from index `start` on that holds `text`; its index."""
        deadline = time.time() + timeout
        with self.cv:
            while True:
                for i in range(start, len(self.lines)):
                    if text in self.lines[i]:
                        return i
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError('wardd never said %r; it said:\n%s' % (text, '\n'.join(self.lines)))
                self.cv.wait(left)

    def mark(self):
        with self.cv:
            return len(self.lines)

    def status(self):
        j = json.loads(run(WARD, 'status', '--host', self.sock, '--format', 'json').stdout)
        return {p['policy']: p for p in j['policies']}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=30)
        return self.proc.returncode


def audit_records(state):
    with open(os.path.join(state, 'audit.log')) as f:
        return [json.loads(l) for l in f if l.strip()]


def table():
    r = subprocess.run(['nft', 'list', 'table', 'inet', 'ward_web'], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def inner(scratch):
    import jsonschema
    import yaml
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    keys = {}
    for k in ('ops', 'foreign'):
        pem, pub = os.path.join(scratch, k + '.pem'), os.path.join(scratch, k + '.pub')
        run('openssl', 'genpkey', '-algorithm', 'ed25519', '-out', pem)
        run('openssl', 'pkey', '-in', pem, '-pubout', '-out', pub)
        keys[k] = pem
    files = {}
    for port in (443, 8443, 9443):
        with open(os.path.join(scratch, 'web%d.ward' % port), 'w') as f:
            f.write(policy(port))

    def compile_bundle(port, sequence, key='ops', out=None):
        out = out or os.path.join(scratch, 'out-%d-%d-%s' % (port, sequence, key))
        r = run(WARD, 'compile', os.path.join(scratch, 'web%d.ward' % port), '-t', 'wardd-bundle',
                '--sign-key', keys[key], '--uid', UID, '--sequence', str(sequence),
                '--not-after', NOT_AFTER, '-o', out)
        check(r.stdout == '%s/web.wardd-bundle.json\n%s/web.configmap.yaml\n' % (out, out),
              'ward compile -t wardd-bundle writes the bundle and its ConfigMap (port %d, sequence %d, %s)'
              % (port, sequence, key), r.stdout + r.stderr)
        with open(os.path.join(out, 'web.wardd-bundle.json'), 'rb') as f:
            bundle = f.read()
        with open(os.path.join(out, 'web.configmap.yaml'), 'rb') as f:
            configmap = f.read()
        return bundle, configmap

    b1, cm1 = compile_bundle(443, 100)
    again, cm_again = compile_bundle(443, 100, out=os.path.join(scratch, 'again'))
    check(again == b1 and cm_again == cm1, 'same input and --sequence: the same bytes, bundle and ConfigMap')
    for spelling in (['--target=wardd-bundle'], ['-twardd-bundle'], ['--target', 'wardd-bundle']):
        out = os.path.join(scratch, 'spelling')
        run(WARD, 'compile', os.path.join(scratch, 'web443.ward'), *spelling, '--sign-key', keys['ops'],
            '--uid', UID, '--sequence', '100', '--not-after', NOT_AFTER, '-o', out)
        with open(os.path.join(out, 'web.wardd-bundle.json'), 'rb') as f:
            check(f.read() == b1, 'ward compile %s: the same bundle' % ' '.join(spelling))
    r = run(WARD, 'compile', os.path.join(scratch, 'web443.ward'), '-t', 'nftables,wardd-bundle', '-o',
            os.path.join(scratch, 'mixed'), want=2)
    check(r.stderr == 'ward compile: -t wardd-bundle is a target of its own: compile other targets '
          'separately\n' and not os.path.exists(os.path.join(scratch, 'mixed')),
          '-t nftables,wardd-bundle: refused, nothing written', r.stderr)
    other, _ = compile_bundle(443, 101)
    check(other != b1, 'another --sequence: other bytes')
    cm = yaml.safe_load(cm1)
    with open(os.path.join(SRC, SCHEMA)) as f:
        errors = [e.message for e in jsonschema.Draft7Validator(json.load(f)).iter_errors(cm)]
    check(errors == [], 'the ConfigMap is valid against the core/v1 ConfigMap schema', str(errors))
    check(cm['metadata']['name'] == 'ward-bundle-web' and cm['metadata']['namespace'] == 'ward-system' and
          list(cm['data']) == ['web.wardd-bundle.json'] and cm['data']['web.wardd-bundle.json'].encode() == b1,
          'ConfigMap ward-bundle-web holds web.wardd-bundle.json byte for byte')
    j = json.loads(b1)
    check(j['policy'] == 'web' and j['scope'] == {'uid': int(UID)} and j['enforcer'] == 'nftables' and
          j['signature']['sequence'] == '100' and j['signature']['not_after'] == '4070908800000',
          'the bundle file names its policy, host scope, enforcer and signature')
    r = run(WARD, 'compile', os.path.join(scratch, 'web443.ward'), '-t', 'wardd-bundle', '--uid', UID,
            '-o', os.path.join(scratch, 'unsigned'), want=2)
    check(r.stderr == 'ward compile: -t wardd-bundle needs --sign-key KEY: wardd --bundle-dir applies '
          'signed bundles only\n' and not os.path.exists(os.path.join(scratch, 'unsigned')),
          'no --sign-key: refused, nothing written', r.stderr)
    big = os.path.join(scratch, 'big.ward')
    with open(big, 'w') as f:
        f.write('ward 1\npolicy web {\n  network {\n%s  }\n}\n' % ''.join(
            '    allow tcp to 10.%d.%d.0/24 port %d\n' % (i // 128, 2 * (i % 128), 1024 + i)
            for i in range(3000)))
    r = run(WARD, 'compile', big, '-t', 'wardd-bundle', '--sign-key', keys['ops'], '--uid', UID,
            '-o', os.path.join(scratch, 'big'), want=2)
    check('bytes, and a ConfigMap holds at most 1 MiB (1048576 bytes); nothing written' in r.stderr and
          not os.path.exists(os.path.join(scratch, 'big')), 'a bundle over 1 MiB: refused, nothing written',
          r.stderr)

    vol = Volume(os.path.join(scratch, 'bundles'))
    vol.publish({'web.wardd-bundle.json': b1})
    check(os.readlink(os.path.join(vol.path, 'web.wardd-bundle.json')) == '..data/web.wardd-bundle.json',
          'the volume: NAME -> ..data/NAME -> ..TIMESTAMP/NAME')
    os.mkdir(os.path.join(scratch, 'sock'), 0o700)
    for missing, why in ((os.path.join(scratch, 'nope'), 'No such file or directory'),
                         (os.path.join(scratch, 'ops.pub'), 'Not a directory')):
        r = run(WARDD, '--state-dir', os.path.join(scratch, 'state-x'), '--listen',
                'unix://' + os.path.join(scratch, 'sock', 'x.sock'), '--bundle-key',
                os.path.join(scratch, 'ops.pub'), '--bundle-dir', missing, want=1)
        check(r.stderr.endswith('wardd: --bundle-dir %s: cannot watch: %s\n' % (missing, why)),
              '--bundle-dir that is not a folder (%s): wardd stops at start, exit 1' % why, r.stderr)
    r = run(WARDD, '--state-dir', os.path.join(scratch, 'state-x'), '--bundle-dir', vol.path, want=2)
    check(r.stderr == 'wardd: --bundle-dir needs --bundle-key: pulled bundles are applied only when signed\n',
          '--bundle-dir without --bundle-key: exit 2', r.stderr)
    agent = Agent(scratch, vol.path, os.path.join(scratch, 'ops.pub'))
    file_id = 'bundle-dir:%s/web.wardd-bundle.json' % vol.path
    try:
        agent.wait_line(file_id + ': applied policy web, generation 1')
        p = agent.status()['web']
        check(p['generation'] == 1 and p['in_sync'] and p['scope'] == 'uid ' + UID,
              'the first bundle is applied: generation 1, in sync', str(p))
        check('meta skuid %s' % UID in (table() or '') and '10.0.0.0/8 . 443 ' in table(), 'the kernel holds it', str(table()))

        b2, _ = compile_bundle(8443, 200)
        t0 = time.monotonic()
        vol.publish({'web.wardd-bundle.json': b2})
        agent.wait_line(file_id + ': applied policy web, generation 2')
        print('figure: ..data swapped to generation 2 applied: %.0f ms' % ((time.monotonic() - t0) * 1000))
        p2 = agent.status()['web']
        check(p2['generation'] == 2 and p2['sha256'] != p['sha256'] and '10.0.0.0/8 . 8443 ' in table(),
              'a swap of ..data applies the new bundle: generation 2')
        nft2 = table()

        b3, _ = compile_bundle(9443, 300)
        stripped = json.loads(b3)
        del stripped['signature']
        foreign, _ = compile_bundle(9443, 300, key='foreign')
        older, _ = compile_bundle(9443, 150)
        foreign_id = json.loads(foreign)['signature']['key_id']
        cases = [
            ('an unsigned (stripped) bundle', json.dumps(stripped).encode(),
             'bundle.signature: missing: this wardd takes only signed bundles'),
            ('a foreign-key bundle', foreign,
             "bundle.signature.key_id: '%s' is not a key this wardd holds" % foreign_id),
            ('an older-sequence bundle', older,
             "bundle.signature.sequence: 150 is not higher than 200, the highest this wardd accepted for "
             "'web' (a replay or a rollback)"),
            ('a file that is not a bundle', b'{"policy": "web", "colour": 1}\n',
             'not a bundle file (the JSON mapping of ward.agent.v1.Bundle): '),
        ]
        for what, data, reason in cases:
            before = len(audit_records(agent.state))
            mark = agent.mark()
            vol.publish({'web.wardd-bundle.json': data})
            agent.wait_line(file_id + ': ', mark)
            i = agent.wait_line(reason, mark)
            check(agent.lines[i] == 'wardd: %s: refused: %s' % (file_id, reason) or
                  (reason.endswith(': ') and agent.lines[i].startswith('wardd: %s: refused: %s' % (file_id, reason))),
                  '%s: refused, the file named (%s)' % (what, agent.lines[i]))
            records = audit_records(agent.state)[before:]
            check(any(r.get('who') == file_id and r.get('result', '').startswith('refused: ') and
                      reason in r['result'] for r in records),
                  '%s: audited, the file as the caller' % what, json.dumps(records))
            p = agent.status()['web']
            check(p['generation'] == 2 and p['sha256'] == p2['sha256'] and table() == nft2,
                  '%s: nothing changed (generation 2, the same table)' % what)

        mark = agent.mark()
        vol.publish({'web.wardd-bundle.json': b2, 'other.wardd-bundle.json': b3})
        i = agent.wait_line('bundle-dir:%s/other.wardd-bundle.json: refused: ' % vol.path, mark)
        check(agent.lines[i].endswith("refused: the file other.wardd-bundle.json holds policy 'web'; a bundle file is named after its policy (web.wardd-bundle.json)"),
              'a bundle file named after another policy: refused', agent.lines[i])
        check(agent.status()['web']['generation'] == 2, '... and nothing changed')

        vol.publish({'web.wardd-bundle.json': b3})
        agent.wait_line(file_id + ': applied policy web, generation 3')
        check(agent.status()['web']['generation'] == 3 and '10.0.0.0/8 . 9443 ' in table(),
              'a valid bundle after the refusals applies: generation 3')

        mark = agent.mark()
        vol.publish({})
        i = agent.wait_line(file_id + ' is gone; what it applied stays in force', mark)
        time.sleep(0.5)
        check(agent.status()['web']['generation'] == 3 and '10.0.0.0/8 . 9443 ' in table(),
              'the bundle gone from the volume: nothing removed')
        vol.publish({'web.wardd-bundle.json': b3})
        agent.wait_line(file_id + ': unchanged policy web, generation 3', mark)
    finally:
        rc = agent.stop()
    check(rc == 0, 'wardd exits 0 on SIGTERM')

    before = len(audit_records(agent.state))
    agent = Agent(scratch, vol.path, os.path.join(scratch, 'ops.pub'))
    try:
        agent.wait_line(file_id + ': unchanged policy web, generation 3')
        check(agent.status()['web']['generation'] == 3, 'restarted on the same folder: generation 3')
        check(not any('refused' in l or 'applied' in l for l in agent.lines),
              'restarted: nothing applied or refused again', '\n'.join(agent.lines))
        time.sleep(0.2)
        records = [r for r in audit_records(agent.state)[before:] if r.get('who') == file_id]
        check([r.get('result') for r in records] == ['unchanged'],
              'restarted: the folder\'s bundle audited once, unchanged', json.dumps(records))

        # Removal: a signed tombstone in the bundle's place (the same ConfigMap).
        def tombstone(sequence, key='ops', uid=UID):
            out = os.path.join(scratch, 'rm-%d-%s-%s' % (sequence, key, uid))
            r = run(WARD, 'compile', '-t', 'wardd-bundle', '--remove', '--policy', 'web', '--sign-key',
                    keys[key], '--uid', uid, '--sequence', str(sequence), '--not-after', NOT_AFTER, '-o', out)
            check(r.stdout == '%s/web.wardd-remove.json\n%s/web.configmap.yaml\n' % (out, out),
                  'ward compile --remove writes the tombstone and its ConfigMap (%d, %s, uid %s)'
                  % (sequence, key, uid), r.stdout + r.stderr)
            with open(os.path.join(out, 'web.configmap.yaml')) as f:
                cm = yaml.safe_load(f)
            with open(os.path.join(out, 'web.wardd-remove.json'), 'rb') as f:
                data = f.read()
            check(cm['metadata']['name'] == 'ward-bundle-web' and
                  cm['data'] == {'web.wardd-remove.json': data.decode()},
                  'its ConfigMap replaces the bundle\'s: ward-bundle-web, the tombstone as its one key')
            return data

        rm_id = 'bundle-dir:%s/web.wardd-remove.json' % vol.path
        for what, data, reason in (
                ('a foreign-key tombstone', tombstone(400, key='foreign'), "remove.signature.key_id: '%s' is "
                 "not a key this wardd holds" % foreign_id),
                ('a tombstone for another scope', tombstone(400, uid='1'),
                 "remove.scope: uid '1' is not the scope of 'web' in force (uid '%s')" % UID)):
            mark = agent.mark()
            vol.publish({'web.wardd-remove.json': data})
            i = agent.wait_line(rm_id + ': ', mark)
            check(agent.lines[i] == 'wardd: %s: refused: %s' % (rm_id, reason), '%s: refused' % what,
                  agent.lines[i])
            check(agent.status()['web']['generation'] == 3 and '10.0.0.0/8 . 9443 ' in table(),
                  '%s: nothing removed' % what)
        mark = agent.mark()
        vol.publish({'web.wardd-remove.json': tombstone(400)})
        agent.wait_line(rm_id + ': removed policy web', mark)
        check('web' not in agent.status() and table() is None, 'a signed tombstone removes the policy and its table')
        records = [r for r in audit_records(agent.state) if r.get('who') == rm_id]
        check(records and records[-1].get('result') == 'ok', 'the removal audited, the file as the caller')
        mark = agent.mark()
        vol.publish({'web.wardd-bundle.json': b3})
        i = agent.wait_line(file_id + ': ', mark)
        check(agent.lines[i] == "wardd: %s: refused: bundle.signature.sequence: 300 is not higher than 400, the "
              "highest this wardd accepted for 'web' (a replay or a rollback)" % file_id,
              'the bundle before the tombstone, again: refused', agent.lines[i])
        check('web' not in agent.status() and table() is None, '... and nothing applied')
    finally:
        rc = agent.stop()
    check(rc == 0, 'wardd exits 0 on SIGTERM')
    print('PASS')


def main():
    if os.geteuid() != 0:
        print('pull_test: needs root; skipped')
        return 77
    if len(sys.argv) > 5 and sys.argv[4] == '--inner':
        inner(sys.argv[5])
        return 0
    with tempfile.TemporaryDirectory(prefix='ward-pull-') as scratch:
        r = subprocess.run(['unshare', '--mount', '--net', '--propagation', 'private', '/usr/bin/python3',
                            os.path.abspath(__file__), WARD, WARDD, SRC, '--inner', scratch], timeout=300)
        return r.returncode


if __name__ == '__main__':
    sys.exit(main())
