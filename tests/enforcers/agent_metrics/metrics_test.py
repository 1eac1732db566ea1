#!/usr/bin/python3
"""[root] wardd --metrics: the Prometheus endpoint of a real wardd.

In a fresh network namespace (unshare --net), with its own state folder and
unix socket, wardd serves --metrics tcp://127.0.0.1:0; the endpoint is
scraped with urllib and parsed with prometheus_client's own parser
(python3-prometheus-client), the calls made with `ward push/status/remove
--host` and, for a malformed bundle, a generic grpcio call:
- the exposition: status, Content-Type, HELP and TYPE, the same bytes twice;
- push: generation 1, in sync, apply/applied 1; again: apply/unchanged 1;
  a malformed bundle: INVALID_ARGUMENT and apply/refused 1;
- the table deleted behind wardd's back, then Check: in sync 0, drift
  found 1 (once per drift, not per check);
- remove: remove/removed 1, the policy's series gone;
- pushed again and the table deleted: the background check (30 s) finds it;
- with ebpf built: denials by policy and rule, after a positive control;
- 404 for another path, 405 (Allow: GET, HEAD) for POST; [::1] too;
- without --metrics wardd listens on no TCP port; bad URLs exit 2 with the
  message and touch nothing; a port in use exits 1.
Usage: metrics_test.py WARD WARDD PROTO_DIR
"""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

PY = '/usr/bin/python3'
WARD, WARDD, PROTO = (os.path.abspath(a) for a in sys.argv[1:4]) if len(sys.argv) > 3 else (None,) * 3
UID = '48131'
POLICY = '''ward 1
policy web {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.200.9.0/24
  }
}
'''
EBPF_POLICY = '''ward 1
policy metricstest {
  network {
    allow tcp to 10.0.0.0/8 port 443
    deny to 10.5.9.0/24
  }
}
'''
EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8'


def check(cond, what, detail=''):
    if not cond:
        raise AssertionError(what + ('\n' + str(detail) if detail else ''))
    print('ok:', what)


def run(*cmd, want=0, **kw):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=120, **kw)
    if want is not None and r.returncode != want:
        raise AssertionError('%s: exit %d, want %d\n%s%s' % (' '.join(cmd), r.returncode, want, r.stdout, r.stderr))
    return r


class Wardd:
    """A wardd with its own state folder and socket; reads its start lines."""

    def __init__(self, scratch, name, args):
        self.state = os.path.join(scratch, name, 'state')
        self.sock = os.path.join(scratch, name, 'sock', 'agent.sock')
        os.makedirs(self.state, mode=0o700)
        self.host = 'unix://' + self.sock
        self.proc = subprocess.Popen([WARDD, '--state-dir', self.state, '--listen', self.host] + args,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        want = 2 if any(a.startswith('--metrics') for a in args) else 1
        deadline, buf = time.monotonic() + 30, b''
        while len(self.lines) < want:
            if b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                self.lines.append(line.decode())
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                self.stop()
                raise AssertionError('wardd did not start: %s' % self.proc.stderr.read())
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                raise AssertionError('wardd exited %d: %s' % (self.proc.wait(), self.proc.stderr.read()))
            buf += chunk
        self.metrics = None
        for line in self.lines:
            if line.startswith('wardd: metrics on '):
                self.metrics = line[len('wardd: metrics on '):]

    def url(self, path='/metrics'):
        return 'http://' + self.metrics[len('tcp://'):] + path

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def scrape(w, path='/metrics', method='GET'):
    """(status, headers, body) of one request with the stock client."""
    req = urllib.request.Request(w.url(path), method=method, data=b'x=1' if method == 'POST' else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def samples(w, quiet=False):
    """{(name, ((label, value), ...)): value} through prometheus_client's parser."""
    from prometheus_client.parser import text_string_to_metric_families

    status, headers, body = scrape(w)
    if not quiet or status != 200:
        check(status == 200 and headers['Content-Type'] == EXPOSITION, 'GET /metrics: 200, ' + EXPOSITION,
              (status, headers))
    out = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def calls(m, method, result):
    return m[('ward_agent_calls_total', (('method', method), ('result', result)))]


def policy(m, name, enforcer, policy_name):
    return m.get((name, (('enforcer', enforcer), ('policy', policy_name))))


def grpc_apply(scratch, target, bundle):
    """Apply with a generic grpcio call (messages from the checked-in proto)."""
    py = os.path.join(scratch, 'py')
    if not os.path.isdir(py):
        os.makedirs(py)
        from grpc_tools import protoc

        assert protoc.main(['protoc', '-I' + PROTO, '--python_out=' + py, 'ward/agent/v1/agent.proto']) == 0
        for d in ('ward', 'ward/agent', 'ward/agent/v1'):
            open(os.path.join(py, d, '__init__.py'), 'a').close()
    sys.path.insert(0, py)
    import grpc
    from google.protobuf import json_format
    from ward.agent.v1 import agent_pb2

    req = json_format.ParseDict({'bundle': bundle}, agent_pb2.ApplyRequest())
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary('/ward.agent.v1.Agent/Apply', request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
        try:
            call(req.SerializeToString(), timeout=30)
            return 'OK', ''
        except grpc.RpcError as e:
            return e.code().name, e.details()


def tcp_listeners():
    """The TCP sockets listening in this network namespace."""
    out = []
    for f in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(f) as fh:
            out += [l.split()[1] for l in fh.readlines()[1:] if l.split()[3] == '0A']
    return out


def test_refused_urls(scratch):
    for url, msg in [
        ('unix:///run/metrics.sock', "wardd: --metrics 'unix:///run/metrics.sock': expected tcp://127.0.0.1:PORT or "
                                     "tcp://[::1]:PORT\n"),
        ('tcp://127.0.0.1', "wardd: --metrics 'tcp://127.0.0.1': expected tcp://127.0.0.1:PORT or tcp://[::1]:PORT\n"),
        ('tcp://127.0.0.1:65536', "wardd: --metrics 'tcp://127.0.0.1:65536': expected tcp://127.0.0.1:PORT or "
                                  "tcp://[::1]:PORT\n"),
        ('tcp://localhost:9464', "wardd: --metrics 'tcp://localhost:9464': 'localhost' is not an IPv4 address\n"),
        ('tcp://0.0.0.0:9464', "wardd: --metrics 'tcp://0.0.0.0:9464': not a loopback address; the endpoint has no "
                               "authentication, so it listens on 127.0.0.0/8 or [::1] only\n"),
        ('tcp://[::]:9464', "wardd: --metrics 'tcp://[::]:9464': not a loopback address; the endpoint has no "
                            "authentication, so it listens on 127.0.0.0/8 or [::1] only\n"),
    ]:
        state = tempfile.mkdtemp(dir=scratch)
        r = run(WARDD, '--state-dir', state, '--listen', 'unix://' + state + '/s/agent.sock', '--metrics', url,
                want=2)
        check(r.stderr == msg and r.stdout == '', '--metrics %s: exit 2, %r' % (url, msg.strip()), r.stderr)
        check(os.listdir(state) == [], '--metrics %s: nothing opened (the state folder untouched)' % url)
    # A port taken: exit 1 once the bind fails, the socket not listening.
    taken = socket.socket()
    taken.bind(('127.0.0.1', 0))
    taken.listen()
    port = taken.getsockname()[1]
    state = tempfile.mkdtemp(dir=scratch)
    sock = state + '/s/agent.sock'
    r = run(WARDD, '--state-dir', state, '--listen', 'unix://' + sock, '--metrics', 'tcp://127.0.0.1:%d' % port,
            want=1)
    check(r.stderr == 'wardd: --metrics: 127.0.0.1:%d: Address already in use\n' % port,
          '--metrics on a port in use: exit 1, Address already in use', r.stderr)
    check(not os.path.exists(sock), 'the gRPC socket was not opened')
    taken.close()


def test_no_metrics_no_port(scratch):
    w = Wardd(scratch, 'plain', [])
    try:
        check(tcp_listeners() == [], 'wardd without --metrics listens on no TCP port', tcp_listeners())
    finally:
        check(w.stop() == 0, 'wardd exits 0')


def test_exposition(scratch):
    policy_file = os.path.join(scratch, 'web.ward')
    with open(policy_file, 'w') as f:
        f.write(POLICY)
    w = Wardd(scratch, 'main', ['--metrics', 'tcp://127.0.0.1:0'])
    try:
        check(w.lines[0] == 'wardd: listening on ' + w.host and w.metrics.startswith('tcp://127.0.0.1:')
              and int(w.metrics.rsplit(':', 1)[1]) > 0, 'wardd prints the metrics endpoint with its port', w.lines)
        check(len(tcp_listeners()) == 1, 'one TCP listener: the metrics port', tcp_listeners())
        _, _, first = scrape(w)
        _, _, second = scrape(w)
        check(first == second, 'two scrapes, nothing changed between: the same bytes')
        check(first.startswith('# HELP ward_agent_up 1 while wardd serves.\n# TYPE ward_agent_up gauge\n'
                               'ward_agent_up 1\n'), 'HELP, TYPE, then the sample', first)
        for name, kind in [('ward_agent_policy_generation', 'gauge'), ('ward_agent_policy_in_sync', 'gauge'),
                           ('ward_agent_drift_found_total', 'counter'), ('ward_agent_calls_total', 'counter'),
                           ('ward_agent_denials_total', 'counter')]:
            check('\n# TYPE %s %s\n' % (name, kind) in first, 'TYPE %s %s' % (name, kind))
        m = samples(w)
        check(m[('ward_agent_up', ())] == 1 and m[('ward_agent_drift_found_total', ())] == 0, 'up 1, no drift')
        check(all(calls(m, meth, res) == 0 for meth, res in [('apply', 'applied'), ('apply', 'unchanged'),
                                                             ('apply', 'refused'), ('apply', 'failed'),
                                                             ('remove', 'removed'), ('remove', 'refused'),
                                                             ('remove', 'failed')]),
              'every call outcome shown at 0 before the first call')

        run(WARD, 'push', '--host', w.host, '--uid', UID, policy_file)
        m = samples(w)
        check(policy(m, 'ward_agent_policy_generation', 'nftables', 'web') == 1, 'push: generation 1')
        check(policy(m, 'ward_agent_policy_in_sync', 'nftables', 'web') == 1, 'push: in sync 1')
        check(calls(m, 'apply', 'applied') == 1 and calls(m, 'apply', 'unchanged') == 0, 'push: apply/applied 1')

        r = run(WARD, 'push', '--host', w.host, '--uid', UID, policy_file)
        check(r.stdout.startswith('unchanged web'), 'the same push again changes nothing', r.stdout)
        m = samples(w)
        check(calls(m, 'apply', 'unchanged') == 1 and calls(m, 'apply', 'applied') == 1, 'apply/unchanged 1')

        code = grpc_apply(scratch, w.host, {'policy': 'web'})
        check(code == ('INVALID_ARGUMENT', 'bundle.ir_json: missing'), 'a malformed bundle: INVALID_ARGUMENT', code)
        m = samples(w)
        check(calls(m, 'apply', 'refused') == 1, 'apply/refused 1')
        check(policy(m, 'ward_agent_policy_generation', 'nftables', 'web') == 1, 'the refusal changed nothing')

        run('nft', 'delete', 'table', 'inet', 'ward_web')
        for _ in range(2):  # the same drift, checked twice: found once
            r = run(WARD, 'status', '--host', w.host)
            check(', drifted, ' in r.stdout, 'status --host (Check): drifted', r.stdout)
        m = samples(w)
        check(policy(m, 'ward_agent_policy_in_sync', 'nftables', 'web') == 0, 'drift: in sync 0')
        check(m[('ward_agent_drift_found_total', ())] == 1, 'drift found 1, not once per check',
              m[('ward_agent_drift_found_total', ())])

        status, headers, body = scrape(w, '/other')
        check((status, body) == (404, 'wardd serves /metrics only\n'), 'GET /other: 404', (status, body))
        status, headers, body = scrape(w, '/metrics/')
        check(status == 404, 'GET /metrics/: 404', status)
        status, headers, body = scrape(w, method='POST')
        check((status, headers['Allow'], body) == (405, 'GET, HEAD', '/metrics: GET only\n'),
              'POST /metrics: 405, Allow: GET, HEAD', (status, dict(headers), body))

        r = run(WARD, 'remove', '--host', w.host, 'web')
        m = samples(w)
        check(calls(m, 'remove', 'removed') == 1, 'remove/removed 1')
        check(policy(m, 'ward_agent_policy_generation', 'nftables', 'web') is None, 'the removed policy\'s series gone')

        # Drift found by the background check (every 30 s), no call made.
        run(WARD, 'push', '--host', w.host, '--uid', UID, policy_file)
        run('nft', 'delete', 'table', 'inet', 'ward_web')
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            m = samples(w, quiet=True)
            if m[('ward_agent_drift_found_total', ())] == 2:
                break
            time.sleep(1)
        check(m[('ward_agent_drift_found_total', ())] == 2 and
              policy(m, 'ward_agent_policy_in_sync', 'nftables', 'web') == 0 and
              policy(m, 'ward_agent_policy_generation', 'nftables', 'web') == 2,
              'the background check found the drift: drift found 2, in sync 0 (generation 2)')
        run(WARD, 'remove', '--host', w.host, 'web')

        test_denials(scratch, w)
        port = int(w.metrics.rsplit(':', 1)[1])
    finally:
        check(w.stop() == 0, 'wardd exits 0 on SIGTERM')
    with socket.socket() as s:
        check(s.connect_ex(('127.0.0.1', port)) != 0, 'the metrics port is closed with wardd')


def cgroup2_mount():
    with open('/proc/self/mounts') as f:
        for line in f:
            parts = line.split()
            if parts[2] == 'cgroup2':
                return parts[1]
    return None


def connect_in(cgroup, addr, port):
    """errno of a TCP connect from a process in `cgroup` (0: connected)."""
    code = ('import socket\ns = socket.socket()\ns.settimeout(5)\nprint(s.connect_ex((%r, %d)))' % (addr, port))
    procs = os.path.join(cgroup, 'cgroup.procs')
    r = subprocess.run([PY, '-c', code], capture_output=True, text=True, timeout=30,
                       preexec_fn=lambda: open(procs, 'w').write(str(os.getpid())))
    return int(r.stdout.strip())


def test_denials(scratch, w):
    if os.environ.get('WARD_TEST_EBPF') != '1':
        print('skipped: denials (this build has no ebpf enforcer)')
        return
    root = cgroup2_mount()
    if root is None:
        print('skipped: denials (no cgroup2 mount)')
        return
    cg = os.path.join(root, 'ward-metrics-%d' % os.getpid())
    os.mkdir(cg)
    policy_file = os.path.join(scratch, 'metricstest.ward')
    with open(policy_file, 'w') as f:
        f.write(EBPF_POLICY)
    try:
        run('ip', 'addr', 'add', '10.5.0.1/32', 'dev', 'lo')
        run('ip', 'addr', 'add', '10.5.9.1/32', 'dev', 'lo')
        run(WARD, 'push', '--host', w.host, '-t', 'ebpf', '--cgroup', cg, policy_file)
        m = samples(w)
        check(policy(m, 'ward_agent_policy_in_sync', 'ebpf', 'metricstest') == 1, 'ebpf push: in sync 1')
        import errno

        # The positive control: allowed, refused by the closed port only.
        check(connect_in(cg, '10.5.0.1', 443) == errno.ECONNREFUSED, 'allowed connect: ECONNREFUSED')
        check(connect_in(cg, '10.5.0.1', 80) == errno.EPERM, 'no rule matched: EPERM')
        check(connect_in(cg, '10.5.9.1', 443) == errno.EPERM, 'the deny rule: EPERM')
        got = {}
        for _ in range(50):
            m = samples(w)
            got = {dict(k[1])['rule']: v for k, v in m.items()
                   if k[0] == 'ward_agent_denials_total' and dict(k[1])['policy'] == 'metricstest'}
            if sum(got.values()) >= 2:
                break
            time.sleep(0.1)
        # Both under rule "none": a bundle's IR JSON carries no rule
        # provenance (compiler/ir_json.cc), so the maps wardd loads name no
        # deny rule and the kernel's event says "no rule matched" for the
        # deny too (ward apply's own maps say "rule 2"). The counter keeps
        # the number an event carries (README.md, "Metrics").
        check(got == {'none': 2}, 'denials by policy and rule: {policy="metricstest",rule="none"} 2', got)
    finally:
        run(WARD, 'remove', '--host', w.host, 'metricstest', want=None)
        os.rmdir(cg)


def test_ipv6(scratch):
    w = Wardd(scratch, 'v6', ['--metrics', 'tcp://[::1]:0'])
    try:
        check(w.metrics.startswith('tcp://[::1]:'), 'tcp://[::1]:0: bound on [::1]', w.metrics)
        m = samples(w)
        check(m[('ward_agent_up', ())] == 1, 'scraped over [::1]')
    finally:
        check(w.stop() == 0, 'wardd exits 0')


def inner(scratch):
    run('ip', 'link', 'set', 'lo', 'up')
    test_refused_urls(scratch)
    test_no_metrics_no_port(scratch)
    test_exposition(scratch)
    test_ipv6(scratch)
    print('PASS')


def main():
    if os.geteuid() != 0:
        print('metrics_test: needs root; skipped')
        return 77
    try:
        import prometheus_client.parser  # noqa: F401  python3-prometheus-client
    except ImportError:
        print('metrics_test: python3-prometheus-client missing (ci/setup.sh); skipped')
        return 77
    if len(sys.argv) > 5 and sys.argv[4] == '--inner':
        inner(sys.argv[5])
        return 0
    scratch = tempfile.mkdtemp(prefix='ward-metrics-')
    try:
        r = subprocess.run(['unshare', '--net', PY, os.path.abspath(__file__), WARD, WARDD, PROTO, '--inner', scratch],
                           timeout=600)
        return r.returncode
    finally:
        os.environ.get('KEEP') or shutil.rmtree(scratch, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
