#!/usr/bin/python3
"""wardd figures (README.md, "bench_agent"): prints, asserts nothing.

Root. In a private network namespace (nftables tables are per namespace)
with a private state folder and socket, for a policy of N network rules
(default 10,000):
- `ward apply -t nftables --uid U` (the peer) against `ward push` of the
  same policy to a wardd on a unix socket (goal: within 20 %);
- the Check RPC of that policy (goal: under 200 ms);
- the Apply RPC of the unchanged bundle (goal: under 5 ms), from the stock
  python3-grpcio client, and the `ward push` command of it, beside the
  command's own start-up (`ward push --help`);
- wardd's RSS idle at start and after the applies.
Usage: bench_agent.py BUILD_DIR [RULES] [REPEAT]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else 'build/dev'
RULES = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
REPEAT = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WARD = os.path.join(BUILD, 'bin', 'ward')
WARDD = os.path.join(BUILD, 'bin', 'wardd')
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(SRC, 'enforcers', 'agent', 'proto')
UID = 48128


def policy_text(n):
    lines = ['ward 1', 'policy bench {', '  network {']
    for i in range(n):
        a, b = divmod(i, 250)
        if i % 10 == 9:
            lines.append('    deny tcp to 10.%d.%d.%d port 22' % (a // 250, a % 250, b + 1))
        elif i % 3 == 0:
            lines.append('    allow tcp to 10.%d.%d.%d port %d' % (a // 250, a % 250, b + 1, 443 + i % 7))
        else:
            lines.append('    allow udp to 10.%d.%d.%d/30 ports 53,5353' % (a // 250, a % 250, (b * 4) % 252))
    lines += ['  }', '}', '']
    return '\n'.join(lines)


def timed(cmd, **kw):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit('%s: exit %d\n%s%s' % (' '.join(cmd), r.returncode, r.stdout, r.stderr))
    return dt


def bundle_hash(b):
    # backends/bundle.h, BundleHash: each field length-prefixed (8 bytes, LE).
    import hashlib
    h = hashlib.sha256()
    def field(x):
        x = x.encode() if isinstance(x, str) else x
        h.update(len(x).to_bytes(8, 'little'))
        h.update(x)
    field('ward-bundle-v1')
    field(b.policy)
    field(b.ir_json)
    field(b.manifest)
    field(str(len(b.artifacts)))
    for a in b.artifacts:
        field(a.path)
        field(a.target)
        field(a.bytes)
    kind = b.scope.WhichOneof('kind')
    field(kind)
    field(str(getattr(b.scope, kind)))
    field(b.enforcer)
    return h.hexdigest()


def rss_kib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def stubs(tmp):
    from grpc_tools import protoc
    out = os.path.join(tmp, 'py')
    os.makedirs(out)
    if protoc.main(['protoc', '-I' + PROTO_DIR, '--python_out=' + out, '--grpc_python_out=' + out,
                    os.path.join(PROTO_DIR, 'ward/agent/v1/agent.proto')]) != 0:
        raise SystemExit('protoc failed')
    sys.path.insert(0, out)
    from ward.agent.v1 import agent_pb2, agent_pb2_grpc
    return agent_pb2, agent_pb2_grpc


def inner():
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    import grpc
    with tempfile.TemporaryDirectory(prefix='ward-bench-agent-') as tmp:
        pb, pb_grpc = stubs(tmp)
        policy = os.path.join(tmp, 'bench.ward')
        with open(policy, 'w') as f:
            f.write(policy_text(RULES))
        print('policy: %d network rules, %d bytes' % (RULES, os.path.getsize(policy)))

        apply = []
        for _ in range(REPEAT):
            apply.append(timed([WARD, 'apply', '-t', 'nftables', '--uid', str(UID), policy]))
            timed([WARD, 'remove', '-t', 'nftables', '--policy', 'bench'])

        state = os.path.join(tmp, 'state')
        sock = os.path.join(tmp, 'run', 'agent.sock')
        agent = subprocess.Popen([WARDD, '--listen', 'unix://' + sock, '--state-dir', state],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(200):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            time.sleep(0.2)
            idle = rss_kib(agent.pid)
            host = 'unix://' + sock
            push = []
            for i in range(REPEAT):
                # A changed bundle each time (another uid): a real apply.
                push.append(timed([WARD, 'push', '--host', host, '--uid', str(UID + 1 + i % 2), policy]))
            unchanged_cmd = [timed([WARD, 'push', '--host', host, '--uid', str(UID + 1 + (REPEAT - 1) % 2),
                                    policy]) for _ in range(REPEAT)]
            startup = [timed([WARD, 'push', '--help']) for _ in range(20)]
            after = rss_kib(agent.pid)

            channel = grpc.insecure_channel('unix:' + sock, options=[
                ('grpc.max_send_message_length', 64 << 20), ('grpc.max_receive_message_length', 64 << 20)])
            stub = pb_grpc.AgentStub(channel)
            got = stub.Get(pb.GetRequest(policy='bench'), timeout=30)
            request = pb.ApplyRequest(bundle=got.bundle)
            rpc = []
            for _ in range(100):
                t = time.perf_counter()
                r = stub.Apply(request, timeout=30)
                rpc.append(time.perf_counter() - t)
                if r.changed:
                    raise SystemExit('the unchanged bundle was applied again')
            # The Apply RPC of a new bundle (another uid each time): wardd's
            # own apply, without the client's front end and compile.
            rpc_new = []
            for i in range(REPEAT):
                b = pb.Bundle()
                b.CopyFrom(got.bundle)
                b.scope.uid = UID + 10 + i
                b.sha256 = bundle_hash(b)
                t = time.perf_counter()
                r = stub.Apply(pb.ApplyRequest(bundle=b), timeout=60)
                rpc_new.append(time.perf_counter() - t)
                if not r.changed:
                    raise SystemExit('a new bundle was not applied')
            check = []
            for _ in range(REPEAT * 2):
                t = time.perf_counter()
                c = stub.Check(pb.CheckRequest(policy='bench'), timeout=60)
                check.append(time.perf_counter() - t)
            in_sync = all(p.in_sync for p in c.policies)
        finally:
            agent.terminate()
            agent.wait(timeout=30)

        ms = lambda xs: statistics.median(xs) * 1000
        print()
        print('| what | median | goal |')
        print('|---|---:|---|')
        print('| ward apply -t nftables (%d rules) | %.1f ms | peer |' % (RULES, ms(apply)))
        print('| ward push, a new bundle (apply through wardd) | %.1f ms | within 20 %% of ward apply (%+.0f %%) |'
              % (ms(push), (ms(push) / ms(apply) - 1) * 100))
        print('| Apply RPC, a new bundle (wardd\'s own apply) | %.1f ms | within 20 %% of ward apply (%+.0f %%) |'
              % (ms(rpc_new), (ms(rpc_new) / ms(apply) - 1) * 100))
        print('| Check RPC (python3-grpcio) | %.1f ms | < 200 ms (in sync: %s) |' % (ms(check), in_sync))
        print('| Apply RPC, unchanged bundle (python3-grpcio, unix socket) | %.2f ms | < 5 ms |' % ms(rpc))
        print('| ward push, unchanged bundle (whole command) | %.1f ms | |' % ms(unchanged_cmd))
        print('| ward push --help (the command\'s own start-up) | %.1f ms | |' % ms(startup))
        print('| wardd RSS, idle at start | %.1f MiB | |' % (idle / 1024))
        print('| wardd RSS, after the applies | %.1f MiB | |' % (after / 1024))


def main():
    if os.geteuid() != 0:
        print('bench_agent: needs root')
        return 1
    if len(sys.argv) > 4 and sys.argv[4] == '--inner':
        inner()
        return 0
    return subprocess.run(['unshare', '--net', '/usr/bin/python3', os.path.abspath(__file__), BUILD,
                           str(RULES), str(REPEAT), '--inner']).returncode


if __name__ == '__main__':
    sys.exit(main())
