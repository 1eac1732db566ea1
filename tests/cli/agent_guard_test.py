#!/usr/bin/python3
"""[root] No sandbox reaches wardd (compiler/agent_guard.h), end to end.

In a private mount and network namespace (a tmpfs over /run, so the host's
/run/ward is neither read nor touched), the test listens where an agent
would: its default socket /run/ward/agent/agent.sock and a TCP port it
publishes in /run/ward/agent/endpoints.json, beside a unix socket and a
port that are not the agent's. A policy grants all four. Then:
- without Ward all four connect (the positive control);
- under `ward run` (the eBPF scope of the run's cgroup) the agent's socket
  and port are refused with EPERM, the others connect;
- under `ward apply -t nftables --uid U` a process of that uid gets
  ECONNREFUSED on the agent's port (the socket relies on its permissions:
  nftables sees no unix sockets), the other port connects;
- `ward explain` says why: the implicit rule, named.
Usage: agent_guard_test.py WARD_BINARY
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

WARD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
UID = 48127  # a user id no test and no host account uses

PROBE = r"""
import errno, socket, sys
for target in sys.argv[1:]:
    if target.startswith('/'):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = target
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = ('127.0.0.1', int(target))
    s.settimeout(5)
    try:
        s.connect(addr)
        print(target, 'ok')
    except OSError as e:
        print(target, errno.errorcode.get(e.errno, str(e.errno)))
    finally:
        s.close()
"""


def listen_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o666)  # only Ward stands between the workload and it
    s.listen(64)
    return s


def listen_tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', 0))
    s.listen(64)
    return s


def serve(s):
    while True:
        try:
            c, _ = s.accept()
            c.close()
        except OSError:
            return


def probe(targets, prefix=()):
    out = subprocess.run(list(prefix) + ['/usr/bin/python3', '-c', PROBE] + targets,
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError('probe failed (%d): %s %s' % (out.returncode, out.stdout, out.stderr))
    return dict(line.split(' ', 1) for line in out.stdout.strip().splitlines())


def expect(got, want, what):
    if got != want:
        raise AssertionError('%s: got %s, want %s' % (what, got, want))
    print('ok:', what, got)


def ward(*args, check=True):
    r = subprocess.run([WARD] + list(args), capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError('ward %s: exit %d\n%s%s' % (' '.join(args), r.returncode, r.stdout, r.stderr))
    return r


def inner(scratch):
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'mode=0755', 'tmpfs', '/run'], check=True)
    os.makedirs('/run/ward/agent', mode=0o700)
    os.chmod('/run/ward', 0o755)
    os.makedirs('/run/guard-test', mode=0o755)
    agent_sock, other_sock = '/run/ward/agent/agent.sock', '/run/guard-test/other.sock'
    listeners = [listen_unix(agent_sock), listen_unix(other_sock)]
    agent_tcp, other_tcp = listen_tcp(), listen_tcp()
    listeners += [agent_tcp, other_tcp]
    for s in listeners:
        threading.Thread(target=serve, args=(s,), daemon=True).start()
    agent_port, other_port = str(agent_tcp.getsockname()[1]), str(other_tcp.getsockname()[1])
    # The workload must reach the agent's folder for the unix probe to mean
    # anything: open it up (wardd's own is 0700, which alone keeps a
    # non-root workload out).
    os.chmod('/run/ward/agent', 0o755)
    policy = os.path.join(scratch, 'guard.ward')
    with open(policy, 'w') as f:
        f.write('''ward 1
import "std/linux.ward"
policy guard extends linux-base {
  filesystem {
    allow read "/"
  }
  network {
    allow tcp to loopback
    allow unix "%s"
    allow unix "%s"
  }
}
''' % (agent_sock, other_sock))
    targets = [agent_sock, other_sock, agent_port, other_port]

    # Before the agent publishes its port, only its default socket is
    # refused: the guard, not something else, refuses the port below.
    got = probe(targets, prefix=[WARD, 'run', policy, '--'])
    expect(got, {agent_sock: 'EPERM', other_sock: 'ok', agent_port: 'ok', other_port: 'ok'},
           'under ward run, before the port is published')

    fd = os.open('/run/ward/agent/endpoints.json', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, json.dumps({'version': 1, 'unix': [agent_sock],
                             'tcp': [{'address': '127.0.0.1', 'port': int(agent_port)}]}).encode())
    os.close(fd)


    expect(probe(targets), {t: 'ok' for t in targets}, 'without ward, all four connect')

    got = probe(targets, prefix=[WARD, 'run', policy, '--'])
    expect(got, {agent_sock: 'EPERM', other_sock: 'ok', agent_port: 'EPERM', other_port: 'ok'},
           'under ward run, the agent is refused')

    r = ward('explain', policy, '--connect', '127.0.0.1:' + agent_port, check=False)
    want = 'implicit rule: wardd listens on tcp://127.0.0.1:%s' % agent_port
    if r.returncode == 2 or not r.stdout.startswith('deny ') or want not in r.stdout:
        raise AssertionError('explain --connect: %d\n%s%s' % (r.returncode, r.stdout, r.stderr))
    print('ok: explain names', want)
    r = ward('explain', policy, '--unix', agent_sock, check=False)
    want = 'implicit rule: wardd listens on unix://' + agent_sock
    if not r.stdout.startswith('deny ') or want not in r.stdout:
        raise AssertionError('explain --unix: %d\n%s%s' % (r.returncode, r.stdout, r.stderr))
    print('ok: explain names', want)
    r = ward('explain', policy, '--connect', '127.0.0.1:' + other_port, check=False)
    if not r.stdout.startswith('allow ') or 'implicit' in r.stdout:
        raise AssertionError('explain of the other port: %s%s' % (r.stdout, r.stderr))
    print('ok: explain allows the other port without an implicit rule')

    as_user = ['setpriv', '--reuid', str(UID), '--regid', str(UID), '--clear-groups']
    expect(probe([agent_port, other_port], prefix=as_user), {agent_port: 'ok', other_port: 'ok'},
           'as uid %d without ward, both ports connect' % UID)
    ward('apply', '-t', 'nftables', '--uid', str(UID), policy)
    try:
        expect(probe([agent_port, other_port], prefix=as_user),
               {agent_port: 'ECONNREFUSED', other_port: 'ok'},
               'under the nftables scope, the agent port is refused')
    finally:
        ward('remove', '-t', 'nftables', '--policy', 'guard')
    print('PASS')


def main():
    if os.geteuid() != 0:
        print('agent_guard_test: needs root; skipped')
        return 77
    if len(sys.argv) > 2 and sys.argv[2] == '--inner':
        inner(sys.argv[3])
        return 0
    with tempfile.TemporaryDirectory(prefix='ward-guard-') as scratch:
        os.chmod(scratch, 0o755)
        r = subprocess.run(['unshare', '--mount', '--net', '--propagation', 'private',
                            '/usr/bin/python3', os.path.abspath(__file__), WARD, '--inner', scratch],
                           timeout=300)
        return r.returncode


if __name__ == '__main__':
    sys.exit(main())
