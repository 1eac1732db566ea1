#!/usr/bin/python3
"""[root] ward audit verify on a log a real wardd wrote, and every tampering.

In a private network namespace, wardd runs on a private state folder (from
mkdtemp) and a unix socket in a private 0700 folder, with a checkpoint every
4 records. Calls through `ward push` / `ward remove --host` and the stock
python3-grpcio client (an apply, an unchanged one, refused ones, a remove)
write the log; each response's head (audit_head, or the error's
`ward-audit-head` trailing metadata) is the log's last record. wardd prints
its audit key at start, the same as STATE/audit.pub. After SIGTERM (a last
checkpoint), `ward audit verify` passes the log, and catches on copies: an
edited record, a deleted one, two swapped, a truncation (only with a head
recorded before), a rewrite that recomputes the whole chain (by a recorded
head, and by the checkpoints' signatures with --key), checkpoints forged
with another key, a torn last line; each exit 1 naming the record.
Usage: audit_cli_test.py WARD_BINARY WARDD_BINARY PROTO_DIR
"""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

WARD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
WARDD = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
PROTO = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
UID = '48130'

POLICY = '''ward 1
policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
  }
}
'''


def check(cond, what, detail=''):
    if not cond:
        raise AssertionError(what + (':\n' + str(detail) if detail else ''))
    print('ok:', what)


def run(*args, want=0):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if want is not None and r.returncode != want:
        raise AssertionError('%s: exit %d, want %d\n%s%s' %
                             (' '.join(args), r.returncode, want, r.stdout, r.stderr))
    return r


def verify(log, *flags, want=0):
    return run(WARD, 'audit', 'verify', log, *flags, want=want)


def sha(b):
    return hashlib.sha256(b.encode()).hexdigest()


def line_hash(line):
    # The canonical bytes: the line without `,"hash":"<64 hex>"}`, closed.
    return sha(line[:-75] + '}')


def rehash(line):
    return line[:-66] + line_hash(line) + '"}'


def head_of(line):
    return '%s:%s' % (json.loads(line)['seq'], json.loads(line)['hash'])


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def write_lines(path, lines, end='\n'):
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + end)


def checkpoint_bytes(size, head, key_id):
    out = b''
    for field in (b'ward-audit-checkpoint-v1', str(size).encode(), head.encode(), key_id.encode()):
        out += struct.pack('<Q', len(field)) + field
    return out


def rechain(lines, fix_heads=False, key=None):
    """The log rewritten as root could: every prev and hash recomputed;
    with fix_heads, each checkpoint's head too (its signature kept); with
    key (an Ed25519 key of the forger's), checkpoints signed again with it."""
    out, prev = [], '0' * 64
    for i, line in enumerate(lines):
        line = re.sub(r'"prev":"[0-9a-f]{64}"', '"prev":"%s"' % prev, line, count=1)
        if '"what":{"method":"checkpoint"}' in line and (fix_heads or key):
            line = re.sub(r'"head":"[0-9a-f]{64}"', '"head":"%s"' % prev, line)
            if key:
                from cryptography.hazmat.primitives import serialization
                der = key.public_key().public_bytes(serialization.Encoding.DER,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
                kid = hashlib.sha256(der).hexdigest()[:16]
                sig = base64.b64encode(key.sign(checkpoint_bytes(i, prev, kid))).decode()
                line = re.sub(r'"key_id":"[0-9a-f]{16}","sig":"[A-Za-z0-9+/=]+"',
                              '"key_id":"%s","sig":"%s"' % (kid, sig), line)
        line = rehash(line)
        out.append(line)
        prev = json.loads(line)['hash']
    return out


class Client:
    def __init__(self, sock, py):
        import grpc
        sys.path.insert(0, py)
        from ward.agent.v1 import agent_pb2
        self.grpc, self.pb = grpc, agent_pb2
        self.channel = grpc.insecure_channel('unix://' + sock)

    def call(self, method, request, response_type):
        raw = lambda b: b
        call = self.channel.unary_unary('/ward.agent.v1.Agent/' + method,
                                        request_serializer=raw, response_deserializer=raw)
        try:
            out, c = call.with_call(request.SerializeToString(), timeout=30)
            return response_type.FromString(out), None, None
        except self.grpc.RpcError as e:
            meta = dict(e.trailing_metadata() or ())
            return None, e, meta.get('ward-audit-head')


def inner(scratch):
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    state = os.path.join(scratch, 'state')
    sockdir = os.path.join(scratch, 'sock')
    os.mkdir(state, 0o700)
    os.mkdir(sockdir, 0o700)
    sock = os.path.join(sockdir, 'agent.sock')
    host = 'unix://' + sock
    py = os.path.join(scratch, 'py')
    os.mkdir(py)
    from grpc_tools import protoc  # python3-grpc-tools
    assert protoc.main(['protoc', '-I' + PROTO, '--python_out=' + py, 'ward/agent/v1/agent.proto']) == 0
    for d in ('ward', 'ward/agent', 'ward/agent/v1'):
        open(os.path.join(py, d, '__init__.py'), 'a').close()
    policy = os.path.join(scratch, 'web.ward')
    with open(policy, 'w') as f:
        f.write(POLICY)
    log = os.path.join(state, 'audit.log')
    pub = os.path.join(state, 'audit.pub')

    agent = subprocess.Popen([WARDD, '--state-dir', state, '--listen', host, '--checkpoint-every', '4'],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    heads = {}
    try:
        check(agent.stdout.readline() == 'wardd: listening on %s\n' % host, 'wardd listens')
        first = agent.stdout.readline()
        pem = ''
        while not pem.endswith('-----END PUBLIC KEY-----\n'):
            pem += agent.stdout.readline()
        with open(pub) as f:
            check(pem == f.read(), 'wardd prints its audit key, as in STATE/audit.pub', pem)
        der = subprocess.run(['openssl', 'pkey', '-pubin', '-in', pub, '-outform', 'DER'],
                             capture_output=True, check=True).stdout
        key_id = hashlib.sha256(der).hexdigest()[:16]
        check(first == 'wardd: audit key %s\n' % key_id, 'and its key id', first)
        check(os.stat(os.path.join(state, 'audit.key')).st_mode & 0o777 == 0o600, 'audit.key is 0600')

        c = Client(sock, py)
        last = lambda: head_of(read_lines(log)[-1])
        run(WARD, 'push', '--host', host, '--uid', UID, policy)
        run(WARD, 'push', '--host', host, '--uid', UID, policy)
        r, _, _ = c.call('List', c.pb.ListRequest(), c.pb.ListResponse)
        check(r.audit_head == last() and r.audit_head.startswith('2:'),
              'List: the head is the log\'s last record (2: the unchanged push)', r.audit_head)
        heads['after-push'] = r.audit_head
        for i in range(3):
            req = c.pb.ApplyRequest()
            req.bundle.policy = 'web'
            _, err, head = c.call('Apply', req, c.pb.ApplyResponse)
            check(err is not None and err.code() == c.grpc.StatusCode.INVALID_ARGUMENT
                  and err.details() == 'bundle.ir_json: missing', 'a bad bundle is refused')
            check(head == last(), 'its ward-audit-head is the log\'s last record, ' + str(head), last())
        check(json.loads(read_lines(log)[2])['result'] == 'refused: bundle.ir_json: missing',
              'the refusal is audited')
        check('"what":{"method":"checkpoint"}' in read_lines(log)[4], 'a checkpoint after 4 records')
        r, _, _ = c.call('Remove', c.pb.RemoveRequest(policy='nothere'), c.pb.RemoveResponse)
        check(not r.removed and r.audit_head == last(), 'Remove of nothing: the head, no record')
        run(WARD, 'remove', '--host', host, '--policy', 'web')
        r, _, _ = c.call('List', c.pb.ListRequest(), c.pb.ListResponse)
        check(r.audit_head == last() and r.audit_head.startswith('7:'), 'List after the remove: 7')
        heads['end'] = r.audit_head
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)

    lines = read_lines(log)
    check(len(lines) == 8 and json.loads(lines[7])['what'] == {'method': 'checkpoint'}
          and json.loads(lines[7])['checkpoint']['size'] == 7, 'a last checkpoint at shutdown')
    final = head_of(lines[-1])

    r = verify(log, '--key', pub, '--head', heads['after-push'], '--head', heads['end'])
    check(r.stdout == '%s: intact, 8 records, 2 checkpoints verified, 2 recorded heads present, '
          'head %s\n' % (log, final), 'verify: intact', r.stdout + r.stderr)
    print('  ' + r.stdout.strip())
    r = verify(log)
    check(r.stdout == '%s: intact, 8 records, 2 checkpoints (signatures not verified: no --key), '
          'head %s\n' % (log, final), 'verify without --key says so', r.stdout)
    j = json.loads(verify(log, '--key', pub, '--format', 'json').stdout)
    check(j == {'version': 1, 'file': log, 'intact': True, 'records': 8, 'checkpoints': 2,
                'signatures_verified': True, 'head': final, 'heads_checked': 0, 'error': None},
          'verify --format json', j)

    copy = os.path.join(scratch, 'copy.log')

    def tampered(new_lines, *flags, want=1, end='\n'):
        write_lines(copy, new_lines, end)
        return verify(copy, *flags, want=want).stdout

    edited = list(lines)
    edited[1] = edited[1].replace('"result":"unchanged"', '"result":"ok"')
    out = tampered(edited, '--key', pub)
    check(out == '%s:2: record 2: hash does not match its content\n' % copy, 'an edit names the record', out)

    self_hashed = list(edited)
    self_hashed[1] = rehash(self_hashed[1])
    out = tampered(self_hashed)
    check(out == '%s:3: record 3: prev does not match the hash of record 2\n' % copy,
          'an edit with its own hash recomputed: the next record\'s prev', out)
    early = list(lines)
    early[2] = re.sub(r'"time":"[^"]*"', '"time":"2020-01-01T00:00:00.000Z"', early[2], count=1)
    out = tampered(rechain(early, fix_heads=True))
    check(out == '%s:3: record 3: time goes backwards: 2020-01-01T00:00:00.000Z after %s\n'
          % (copy, json.loads(lines[1])['time']), 'a time moved back', out)

    out = tampered(lines[:2] + lines[3:])
    check(out == '%s:3: record 4: out of sequence: record 3 expected here (a record deleted, '
          'repeated or moved)\n' % copy, 'a deleted record', out)
    out = tampered(lines[:2] + [lines[3], lines[2]] + lines[4:])
    check(out == '%s:3: record 4: out of sequence: record 3 expected here (a record deleted, '
          'repeated or moved)\n' % copy, 'two records swapped', out)

    out = tampered(lines[:6], '--key', pub, want=0)
    check(out.startswith('%s: intact, 6 records, 1 checkpoint verified, head 6:' % copy),
          'a truncation alone keeps a chain', out)
    out = tampered(lines[:6], '--key', pub, '--head', heads['end'])
    check(out == '%s: record 7: missing: the log ends at record 6, but a client recorded head %s '
          '(truncated)\n' % (copy, heads['end']), 'a truncation is caught by a recorded head', out)

    out = tampered(rechain(edited))
    check(out == '%s:5: record 5: checkpoint head does not match the hash of record 4\n' % copy,
          'a rewrite that leaves the checkpoints: their head', out)
    rewritten = rechain(edited, fix_heads=True)
    out = tampered(rewritten, want=0)
    check(out.startswith('%s: intact, 8 records' % copy),
          'a whole rewrite passes without --key and --head (what they are for)', out)
    out = tampered(rewritten, '--head', heads['after-push'])
    check(out == '%s:2: record 2: hash differs from the head a client recorded, %s: the log was '
          'rewritten\n' % (copy, heads['after-push']), 'a rewrite is caught by a recorded head', out)
    out = tampered(rewritten, '--key', pub)
    check(out == '%s:5: record 5: checkpoint signature does not verify with key %s\n' % (copy, key_id),
          'a rewrite is caught by the checkpoint signature', out)

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    forger = Ed25519PrivateKey.generate()
    forged = rechain(edited, fix_heads=True, key=forger)
    other = json.loads(forged[4])['checkpoint']['key_id']
    out = tampered(forged, '--key', pub)
    check(out == '%s:5: record 5: checkpoint signed by key %s, not by --key %s\n' % (copy, other, key_id),
          'checkpoints signed with another key', out)
    # The forger's key id kept as the host's: the signature fails.
    same_id = [l.replace('"key_id":"%s"' % other, '"key_id":"%s"' % key_id) for l in forged]
    out = tampered(rechain(same_id), '--key', pub)
    check(out == '%s:5: record 5: checkpoint signature does not verify with key %s\n' % (copy, key_id),
          'another key\'s signature under the host\'s key id', out)

    out = tampered(lines + [lines[-1][:50]], end='')
    check(out == '%s:9: a torn record: the line ends before its hash (a write cut short, by a '
          'crash?)\n' % copy, 'a torn last line', out)
    r = verify(copy, '--head', 'nope', want=2)
    check("--head 'nope' is not SEQ:HASH" in r.stderr, 'a bad --head is a usage error', r.stderr)
    print('PASS')


def main():
    if os.geteuid() != 0:
        print('audit_cli_test: needs root; skipped')
        return 77
    if len(sys.argv) > 4 and sys.argv[4] == '--inner':
        inner(sys.argv[5])
        return 0
    scratch = tempfile.mkdtemp(prefix='ward-audit-')
    try:
        r = subprocess.run(['unshare', '--net', '/usr/bin/python3', os.path.abspath(__file__),
                            WARD, WARDD, PROTO, '--inner', scratch], timeout=300)
        return r.returncode
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
