#!/usr/bin/python3
"""wardd's transport, driven by the stock python client (grpcio 1.51).

Generic calls only (channel.unary_unary(PATH, ...)) with messages built by
grpc_tools.protoc at test time from the checked-in proto, or raw protobuf
bytes (health, reflection): nothing depends on Ward's own client. Each call
runs in a child process (this file with --client), so that it can run under
another uid and groups, as a caller of wardd would.

  transport_test.py --wardd PATH --proto DIR [--fake]

--fake: PATH is wardd_transport_fake (fake_agent.cc), whose List echoes the
caller's identity and role and whose Get can block; the assertions that need
it are skipped against the real wardd. Needs root (exit 77 otherwise).
"""

import argparse
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

PY = "/usr/bin/python3"
UID_READER = 64124  # ids no account uses; nothing is added to /etc/group
UID_OTHER = 64125
GID_READERS = 64123
BAD_PATHS = [
    "//ward.agent.v1.Agent/List",
    "/ward.agent.v1.agent/List",
    "/ward.agent.v1.Agent/list",
    "/WARD.agent.v1.Agent/List",
    "/ward.agent.v1.Agent/List/",
    "/./ward.agent.v1.Agent/List",
    "/ward.agent.v1.Agent/./List",
    "/ward.agent.v1.Agent/%4Cist",
    "/ward.agent.v1.Agent%2FList",
    "/grpc.health.v1.Health/check",
]


# --------------------------------------------------------------------------
# The client (a child process): one call, its outcome as JSON on stdout.


def pb_varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def pb_field(num, data):
    """A length-delimited field."""
    return pb_varint(num << 3 | 2) + pb_varint(len(data)) + data


def pb_parse(data):
    """Raw protobuf: [(field, wire type, value)]; value bytes or int."""
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(data, i)
        elif wt == 2:
            n, i = _varint(data, i)
            v, i = data[i : i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, wt, v))
    return out


def _varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def client_watches(spec):
    """Opens spec["watches"] Watch streams (5 channels: 16 streams a
    connection), then calls List while they are open."""
    import grpc

    raw = lambda b: b
    chans = [grpc.insecure_channel(spec["target"], options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(5)]
    streams, opened, refused = [], 0, {}
    for i in range(spec["watches"]):
        call = chans[i % 5].unary_stream("/ward.agent.v1.Agent/Watch", request_serializer=raw, response_deserializer=raw)
        streams.append(call(b"", timeout=30))
    for s in streams:
        try:
            next(s)  # with the real service, a stream may send nothing: the fake's hello
            opened += 1
        except grpc.RpcError as e:
            key = "%s: %s" % (e.code().name, e.details())
            refused[key] = refused.get(key, 0) + 1
    try:
        chans[0].unary_unary("/ward.agent.v1.Agent/List", request_serializer=raw, response_deserializer=raw)(b"", timeout=10)
        listed = "OK"
    except grpc.RpcError as e:
        listed = e.code().name
    for s in streams:
        s.cancel()
    print(json.dumps({"opened": opened, "refused": refused, "List": listed}))


def client_main(spec):
    import grpc

    sys.path.insert(0, spec["py"])
    from google.protobuf import json_format
    from ward.agent.v1 import agent_pb2

    options = [("grpc.max_receive_message_length", 128 << 20)]
    if spec.get("tls"):
        t = spec["tls"]
        read = lambda p: open(p, "rb").read() if p else None
        creds = grpc.ssl_channel_credentials(
            root_certificates=read(t["ca"]),
            private_key=read(t.get("key")),
            certificate_chain=read(t.get("cert")),
        )
        channel = grpc.secure_channel(spec["target"], creds, options=options)
    else:
        channel = grpc.insecure_channel(spec["target"], options=options)
    kind = spec.get("kind", "agent")
    raw = lambda b: b
    result = {"code": "OK", "details": ""}
    try:
        if kind == "agent":
            name = spec["method"].rsplit("/", 1)[-1]
            req_type = {"Watch": "WatchRequest"}.get(name, name + "Request")
            req_cls = getattr(agent_pb2, req_type, agent_pb2.ListRequest)
            req = json_format.ParseDict(spec.get("request", {}), req_cls())
            if spec.get("pad"):
                req.bundle.ir_json = b"x" * spec["pad"]
            payload = bytes.fromhex(spec["raw"]) if "raw" in spec else req.SerializeToString()
            if name == "Watch":
                call = channel.unary_stream(spec["method"], request_serializer=raw, response_deserializer=raw)
                stream = call(payload, timeout=spec.get("timeout", 10))
                events = []
                for ev in stream:
                    events.append(json_format.MessageToDict(agent_pb2.Event.FromString(ev)))
                    if not spec.get("follow"):
                        stream.cancel()
                        break
                    print("event", flush=True)  # the driver waits for this line
                result["response"] = events[0] if events and not spec.get("follow") else {"events": events}
            else:
                call = channel.unary_unary(spec["method"], request_serializer=raw, response_deserializer=raw)
                resp = call(payload, timeout=spec.get("timeout", 10))
                resp_cls = getattr(agent_pb2, name + "Response", None)
                if resp_cls is not None:
                    result["response"] = json_format.MessageToDict(resp_cls.FromString(resp))
        elif kind == "health":
            call = channel.unary_unary(spec["method"], request_serializer=raw, response_deserializer=raw)
            resp = call(pb_field(1, spec.get("service", "").encode()), timeout=10)
            fields = pb_parse(resp)
            result["response"] = {"status": fields[0][2] if fields else 0}
        elif kind == "health_watch":
            call = channel.unary_stream(spec["method"], request_serializer=raw, response_deserializer=raw)
            stream = call(pb_field(1, spec.get("service", "").encode()), timeout=10)
            fields = pb_parse(next(stream))
            stream.cancel()
            result["response"] = {"status": fields[0][2] if fields else 0}
        elif kind == "reflection":
            call = channel.stream_stream(spec["method"], request_serializer=raw, response_deserializer=raw)
            # ServerReflectionRequest.list_services (7), then file_containing_symbol (4).
            reqs = [pb_field(7, b""), pb_field(4, b"ward.agent.v1.Agent")]
            services, files = [], []
            for resp in call(iter(reqs), timeout=10):
                for num, _, v in pb_parse(resp):
                    if num == 6:  # list_services_response
                        for _, _, svc in pb_parse(v):
                            services += [n.decode() for f, _, n in pb_parse(svc) if f == 1]
                    if num == 4:  # file_descriptor_response
                        from google.protobuf import descriptor_pb2

                        for _, _, fd in pb_parse(v):
                            d = descriptor_pb2.FileDescriptorProto.FromString(fd)
                            files.append([d.name, [s.name for s in d.service]])
                    if num == 7:  # error_response
                        result["reflection_error"] = [x[2] for x in pb_parse(v)][0]
            result["response"] = {"services": sorted(services), "files": files}
    except grpc.RpcError as e:
        result = {"code": e.code().name, "details": e.details() or ""}
    print(json.dumps(result), flush=True)


# --------------------------------------------------------------------------
# The test driver (root).


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


class Wardd:
    """A wardd process; its stderr goes to a file for log assertions."""

    def __init__(self, t, args, wait=True, prefix=None):
        self.log = os.path.join(t.tmp, "wardd-%d.log" % time.monotonic_ns())
        self.err = open(self.log, "w")
        # prefix: a command that ends by exec'ing wardd with the default state folder.
        self.state_dir = None if prefix else t.new_state_dir()
        cmd = prefix + [t.wardd] + args if prefix else [t.wardd, "--state-dir", self.state_dir] + args
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err)
        t.addCleanup(self.stop)
        self.endpoints = []
        if wait:
            n = sum(1 for a in args if a.startswith("--listen")) or 1
            self._read_endpoints(n)

    def _read_endpoints(self, n):
        deadline = time.monotonic() + 30
        fd, buf = self.proc.stdout.fileno(), b""
        while len(self.endpoints) < n:
            if b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.startswith(b"wardd: listening on "):
                    self.endpoints.append(line.decode().split(" on ", 1)[1])
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError("wardd did not start: " + self.stderr())
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError("wardd exited %s: %s" % (self.proc.wait(), self.stderr()))
            buf += chunk

    def target(self, i=0):
        e = self.endpoints[i]
        return e if e.startswith("unix:") else e[len("tcp://") :]

    def stderr(self):
        self.err.flush()
        with open(self.log) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        self.proc.stdout.close()
        return self.proc.returncode


class TransportTest(unittest.TestCase):
    wardd = None
    proto = None
    fake = False
    unit = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ward-transport-")
        os.chmod(cls.tmp, 0o755)  # the unprivileged clients read the generated code
        cls.py = os.path.join(cls.tmp, "py")
        os.makedirs(cls.py)
        argv = ["protoc", "-I" + cls.proto, "--python_out=" + cls.py, "ward/agent/v1/agent.proto"]
        try:
            from grpc_tools import protoc  # python3-grpc-tools

            assert protoc.main(argv) == 0, "grpc_tools.protoc failed"
        except ImportError:  # protobuf-compiler's protoc writes the same module
            subprocess.run(argv, check=True)
        for d in ("ward", "ward/agent", "ward/agent/v1"):
            open(os.path.join(cls.py, d, "__init__.py"), "a").close()
        sh("chmod", "-R", "a+rX", cls.py)
        cls.pki = make_pki(os.path.join(cls.tmp, "pki"))
        cls.host_endpoints = os.path.lexists("/run/ward/agent/endpoints.json")
        cls.counter = 0

    @classmethod
    def tearDownClass(cls):
        # Private state folders: the host's endpoints file is never written.
        assert os.path.lexists("/run/ward/agent/endpoints.json") == cls.host_endpoints
        os.environ.get("KEEP") or shutil.rmtree(cls.tmp, ignore_errors=True)

    def audit_tail(self, w, n):
        """The last n records of w's audit log (checkpoints left out) as (who, method, result)."""
        with open(os.path.join(w.state_dir, "audit.log")) as f:
            records = [json.loads(line) for line in f if line.strip()]
        records = [r for r in records if r["what"]["method"] != "checkpoint"]
        return [(r["who"], r["what"]["method"], r["result"]) for r in records[-n:]]

    def new_state_dir(self):
        TransportTest.counter += 1
        d = os.path.join(self.tmp, "state-%d" % self.counter)
        os.mkdir(d, 0o700)
        return d

    def sock(self, name):
        return os.path.join(self.tmp, name, "agent.sock")

    def call(self, target, method, request=None, user=None, groups=None, gid=None, caps=None, **spec):
        spec.update(target=target, method=method, request=request or {}, py=self.py)
        cmd = [PY, __file__, "--client", json.dumps(spec)]
        kw = {}
        if caps:  # a non-root caller with CAP_DAC_OVERRIDE reaches a 0600 socket
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % (gid or user), "--clear-groups",
                   "--inh-caps=+dac_override", "--ambient-caps=+dac_override"] + cmd
        elif user is not None:
            kw = dict(user=user, group=gid if gid is not None else user, extra_groups=groups or [])
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout.splitlines()[-1])

    def assertCode(self, result, code, details=None):
        self.assertEqual(result["code"], code, result)
        if details is not None:
            self.assertEqual(result["details"], details, result)

    # ---- unix socket

    def test_unix_default_modes_operator_and_shutdown(self):
        path = self.sock("u1")
        w = Wardd(self, ["--listen", "unix://" + path])
        self.assertEqual(w.endpoints, ["unix://" + path])
        d, s = os.stat(os.path.dirname(path)), os.lstat(path)
        self.assertEqual((stat.S_IMODE(d.st_mode), d.st_uid), (0o700, 0))
        self.assertTrue(stat.S_ISSOCK(s.st_mode))
        self.assertEqual((stat.S_IMODE(s.st_mode), s.st_uid), (0o600, 0))
        r = self.call(w.target(), "/ward.agent.v1.Agent/List")
        self.assertCode(r, "OK")
        if self.fake:
            self.assertEqual(r["response"]["unmanaged"], [{"enforcer": "fake", "policy": "uid:0", "what": "operator"}])
            r = self.call(w.target(), "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p", "sha256": "ab"}})
            self.assertCode(r, "OK")
            self.assertEqual(r["response"]["generation"], "1")
            self.assertEqual(r["response"]["warnings"], ["applied by uid:0"])
            r = self.call(w.target(), "/ward.agent.v1.Agent/Apply", {"bundle": {}})
            self.assertCode(r, "INVALID_ARGUMENT", "bundle.policy: empty")
        else:
            r = self.call(w.target(), "/ward.agent.v1.Agent/Apply", {"bundle": {}})
            self.assertCode(r, "INVALID_ARGUMENT")
        self.assertEqual(w.stop(), 0)
        self.assertFalse(os.path.lexists(path), "the socket is removed at shutdown")

    def test_shutdown_ends_watch_streams(self):
        path = self.sock("u7")
        w = Wardd(self, ["--listen", "unix://" + path])
        spec = dict(target=w.target(), method="/ward.agent.v1.Agent/Watch", follow=True, timeout=60, py=self.py)
        child = subprocess.Popen([PY, __file__, "--client", json.dumps(spec)], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (child.poll() is None and child.kill(), child.wait(), child.stdout.close()))
        if self.fake:
            self.assertEqual(child.stdout.readline(), "event\n")  # the fake's first event
        else:
            time.sleep(1)
        start = time.monotonic()
        self.assertEqual(w.stop(signal.SIGINT), 0)
        self.assertLess(time.monotonic() - start, 10)  # 2 s of grace, and a loaded machine
        out = json.loads(child.stdout.read().splitlines()[-1])
        # The stream ends with OK (wardd ended it), not at the client's deadline.
        self.assertEqual(out["code"], "OK", out)
        if self.fake:
            self.assertEqual([e["error"] for e in out["response"]["events"]], ["hello uid:0"])
        self.assertFalse(os.path.lexists(path))

    def test_watch_streams_are_capped(self):
        """At most 32 Watch streams, so that they cannot take every server
        thread (64) from Apply and the rest."""
        if not self.fake:
            self.skipTest("counts the fake service's first event of each stream")
        path = self.sock("u8")
        w = Wardd(self, ["--listen", "unix://" + path])
        spec = dict(target=w.target(), py=self.py, watches=40)
        out = subprocess.run([PY, __file__, "--client-watches", json.dumps(spec)], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout), {
            "opened": 32, "refused": {"RESOURCE_EXHAUSTED: wardd serves at most 32 Watch streams": 8}, "List": "OK"})

    def test_unix_non_root_without_group_is_closed(self):
        path = self.sock("u2")
        w = Wardd(self, ["--listen", "unix://" + path])
        # Without privileges the folder (0700) stops it before wardd sees it.
        self.assertCode(self.call(w.target(), "/ward.agent.v1.Agent/List", user=UID_OTHER), "UNAVAILABLE")
        # With CAP_DAC_OVERRIDE it reaches the socket: wardd closes it at accept.
        self.assertCode(self.call(w.target(), "/ward.agent.v1.Agent/List", user=UID_OTHER, caps=True), "UNAVAILABLE")
        self.assertIn("refused a connection from uid %d (pid " % UID_OTHER, w.stderr())
        self.assertIn("): not root\n", w.stderr())

    def test_unix_reader_group(self):
        path = self.sock("u3")
        w = Wardd(self, ["--listen", "unix://" + path, "--reader-group", str(GID_READERS)])
        d, s = os.stat(os.path.dirname(path)), os.lstat(path)
        self.assertEqual((stat.S_IMODE(d.st_mode), d.st_uid, d.st_gid), (0o710, 0, GID_READERS))
        self.assertEqual((stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid), (0o660, 0, GID_READERS))
        member = dict(user=UID_READER, groups=[GID_READERS])  # a supplementary group (SO_PEERGROUPS)
        r = self.call(w.target(), "/ward.agent.v1.Agent/List", **member)
        self.assertCode(r, "OK")
        if self.fake:
            self.assertEqual(r["response"]["unmanaged"][0]["policy"], "uid:%d" % UID_READER)
            self.assertEqual(r["response"]["unmanaged"][0]["what"], "reader")
        deny = "uid:%d (reader) may not call " % UID_READER
        r = self.call(w.target(), "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, **member)
        self.assertCode(r, "PERMISSION_DENIED", deny + "/ward.agent.v1.Agent/Apply")
        r = self.call(w.target(), "/ward.agent.v1.Agent/Remove", {"policy": "p"}, **member)
        self.assertCode(r, "PERMISSION_DENIED", deny + "/ward.agent.v1.Agent/Remove")
        if not self.fake:
            # Refused calls that would change state are audited, by who made them.
            self.assertEqual(self.audit_tail(w, 2), [
                ("uid:%d" % UID_READER, "apply", "refused: " + deny + "/ward.agent.v1.Agent/Apply"),
                ("uid:%d" % UID_READER, "remove", "refused: " + deny + "/ward.agent.v1.Agent/Remove")])
        self.assertCode(self.call(w.target(), "/ward.agent.v1.Agent/Check", **member), "OK")
        r = self.call(w.target(), "/ward.agent.v1.Agent/Get", {"policy": "absent"}, **member)
        self.assertCode(r, "OK" if self.fake else "NOT_FOUND")
        r = self.call(w.target(), "/grpc.health.v1.Health/Check", kind="health", **member)
        self.assertEqual(r, {"code": "OK", "details": "", "response": {"status": 1}})
        if self.fake:
            r = self.call(w.target(), "/ward.agent.v1.Agent/Watch", **member)
            self.assertCode(r, "OK")
            self.assertEqual(r["response"]["error"], "hello uid:%d" % UID_READER)
        # The effective gid (SO_PEERCRED) counts too.
        r = self.call(w.target(), "/ward.agent.v1.Agent/List", user=UID_READER, gid=GID_READERS)
        self.assertCode(r, "OK")
        # Anyone else is closed before it is served (CAP_DAC_OVERRIDE passes the modes).
        r = self.call(w.target(), "/ward.agent.v1.Agent/List", user=UID_OTHER, caps=True)
        self.assertCode(r, "UNAVAILABLE")
        self.assertIn("refused a connection from uid %d (pid " % UID_OTHER, w.stderr())
        self.assertIn("): not root, not in group %d\n" % GID_READERS, w.stderr())

    def test_unix_descriptor_outlives_its_calls(self):
        """Role by "fd:N" is race-free: a connection's descriptor is not closed
        (and its number not reused by a new caller) while a call on it runs,
        even after the client went away."""
        if not self.fake:
            self.skipTest("needs the fake service's blocking Get")
        path = self.sock("u4")
        w = Wardd(self, ["--listen", "unix://" + path, "--reader-group", str(GID_READERS)])
        gate = os.path.join(self.tmp, "gate-u4")
        before = socket_fds(w.proc.pid, path)
        spec = dict(target=w.target(), method="/ward.agent.v1.Agent/Get", request={"policy": "block:" + gate}, py=self.py)
        child = subprocess.Popen([PY, __file__, "--client", json.dumps(spec)], user=UID_READER,
                                 group=UID_READER, extra_groups=[GID_READERS], stdout=subprocess.DEVNULL)
        self.addCleanup(lambda: (child.poll() is None and child.kill(), child.wait()))
        wait_for(lambda: os.path.exists(gate + ".entered"))
        with open(gate + ".entered") as f:
            self.assertEqual(f.read(), "uid:%d\n" % UID_READER)
        held = {fd: ino for fd, ino in socket_fds(w.proc.pid, path).items() if before.get(fd) != ino}
        self.assertEqual(len(held), 1, held)
        child.kill()
        child.wait()
        time.sleep(0.5)
        # The operator connects while the reader's call still runs: the
        # reader's descriptor is still open, the new caller gets another.
        r = self.call(w.target(), "/ward.agent.v1.Agent/List")
        self.assertEqual(r["response"]["unmanaged"][0]["policy"], "uid:0")
        now = socket_fds(w.proc.pid, path)
        for fd, ino in held.items():
            self.assertEqual(now.get(fd), ino, "the descriptor of a running call was closed")
        open(gate, "w").close()
        wait_for(lambda: all(socket_fds(w.proc.pid, path).get(fd) != ino for fd, ino in held.items()))

    def test_unix_stale_live_and_shared_folders(self):
        path = self.sock("u5")
        w = Wardd(self, ["--listen", "unix://" + path])
        w2 = Wardd(self, ["--listen", "unix://" + path], wait=False)
        self.assertEqual(w2.proc.wait(timeout=30), 1)
        self.assertEqual(w2.stderr(), "wardd: %s: another process listens on it (is wardd running already?)\n" % path)
        w.stop(signal.SIGKILL)
        self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode), "kill -9 leaves the socket")
        w3 = Wardd(self, ["--listen", "unix://" + path])  # the stale socket is replaced
        self.assertCode(self.call(w3.target(), "/ward.agent.v1.Agent/List"), "OK")
        # A folder that is not the socket's own is refused, never re-moded.
        shared = os.path.join(self.tmp, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        w4 = Wardd(self, ["--listen", "unix://%s/agent.sock" % shared], wait=False)
        self.assertEqual(w4.proc.wait(timeout=30), 1)
        self.assertEqual(
            w4.stderr(),
            "wardd: %s: owner uid 0, mode 1777; the socket needs a folder of its own (root's, mode 0700)\n" % shared)
        self.assertEqual(stat.S_IMODE(os.stat(shared).st_mode), 0o1777)
        w5 = Wardd(self, ["--listen", "unix-abstract:ward"], wait=False)
        self.assertEqual(w5.proc.wait(timeout=30), 2)
        self.assertEqual(w5.stderr(), "wardd: --listen unix-abstract:ward: expected unix:///PATH or tcp://HOST:PORT\n")

    def test_unix_health_reflection_size_and_paths(self):
        path = self.sock("u6")
        w = Wardd(self, ["--listen", "unix://" + path])
        t = w.target()
        for service, status in (("", 1), ("ward.agent.v1.Agent", 1)):
            r = self.call(t, "/grpc.health.v1.Health/Check", kind="health", service=service)
            self.assertEqual(r, {"code": "OK", "details": "", "response": {"status": status}})
        r = self.call(t, "/grpc.health.v1.Health/Check", kind="health", service="nope")
        self.assertCode(r, "NOT_FOUND")
        r = self.call(t, "/grpc.health.v1.Health/Watch", kind="health_watch", service="ward.agent.v1.Agent")
        self.assertEqual(r, {"code": "OK", "details": "", "response": {"status": 1}})
        r = self.call(t, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", kind="reflection")
        self.assertCode(r, "OK")
        self.assertIn("ward.agent.v1.Agent", r["response"]["services"])
        self.assertIn("grpc.health.v1.Health", r["response"]["services"])
        self.assertEqual(r["response"]["files"], [["ward/agent/v1/agent.proto", ["Agent"]]])
        # 64 MiB is the limit: a larger message is gRPC's own RESOURCE_EXHAUSTED.
        r = self.call(t, "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, pad=65 << 20)
        self.assertCode(r, "RESOURCE_EXHAUSTED")
        self.assertIn("larger than max", r["details"])
        if self.fake:
            r = self.call(t, "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, pad=60 << 20)
            self.assertCode(r, "OK")
        # Not the table's exact paths: gRPC has no such method.
        for p in BAD_PATHS:
            r = self.call(t, p)
            self.assertCode(r, "UNIMPLEMENTED")
            self.assertEqual(r["details"], "", p)

    def test_default_socket_and_endpoints_file(self):
        """With the default state folder, in a private mount namespace (tmpfs
        on /run and /var/lib): the default socket, and the endpoints file the
        implicit denies read (compiler/agent_guard.h), removed at shutdown."""
        k = self.pki
        setup = ("mount -t tmpfs -o mode=0755 tmpfs /run && mount -t tmpfs -o mode=0755 tmpfs /var/lib && "
                 "mkdir -m 0700 /var/lib/ward && \"$0\" \"$@\"; rc=$?; "
                 "echo left: $(ls -A /run/ward/agent) >&2; exit $rc")
        prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c", setup]
        w = Wardd(self, ["--listen=unix:///run/ward/agent/agent.sock", "--listen=tcp://127.0.0.1:0",
                         "--tls-cert", k["server.crt"], "--tls-key", k["server.key"], "--client-ca", k["ca.crt"]],
                  prefix=prefix)
        root = "/proc/%d/root" % w.proc.pid
        port = int(w.endpoints[1].rsplit(":", 1)[1])
        with open(root + "/run/ward/agent/endpoints.json") as f:
            self.assertEqual(json.load(f), {"version": 1, "unix": ["/run/ward/agent/agent.sock"],
                                            "tcp": [{"address": "127.0.0.1", "port": port}]})
        st = os.stat(root + "/run/ward/agent/endpoints.json")
        self.assertEqual((stat.S_IMODE(st.st_mode), st.st_uid), (0o644, 0))
        d, s = os.stat(root + "/run/ward/agent"), os.lstat(root + "/run/ward/agent/agent.sock")
        self.assertEqual((stat.S_IMODE(d.st_mode), stat.S_IMODE(s.st_mode)), (0o700, 0o600))
        r = self.call("unix://" + root + "/run/ward/agent/agent.sock", "/ward.agent.v1.Agent/List")
        self.assertCode(r, "OK")
        with open("/proc/%d/task/%d/children" % (w.proc.pid, w.proc.pid)) as f:
            wardd = int(f.read().split()[0])  # sh's child
        os.kill(wardd, signal.SIGTERM)
        self.assertEqual(w.proc.wait(timeout=30), 0)
        # What the shell found in the folder after wardd exited: nothing.
        self.assertTrue(w.stderr().endswith("left:\n"), w.stderr())

    # ---- packaging

    def test_systemd_unit(self):
        if not self.unit:
            self.skipTest("no --unit")
        with open(self.unit) as f:
            text = f.read()
        directives = [l.split("=", 1)[0] for l in text.splitlines() if l and l[0].isalpha() and "=" in l]
        # Each is a seccomp filter, under which PTRACE_SECCOMP_GET_FILTER is EACCES.
        seccomp = {"SystemCallFilter", "SystemCallArchitectures", "SystemCallLog", "RestrictAddressFamilies",
                   "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "MemoryDenyWriteExecute",
                   "LockPersonality", "PrivateDevices", "ProtectKernelModules", "ProtectKernelLogs", "ProtectClock",
                   "ProtectHostname", "PrivateUsers", "NoExecPaths"}
        self.assertEqual(sorted(seccomp & set(directives)), [])
        caps = [l for l in text.splitlines() if l.startswith("CapabilityBoundingSet=")]
        self.assertEqual(caps, ["CapabilityBoundingSet=CAP_NET_ADMIN CAP_BPF CAP_PERFMON CAP_SYS_ADMIN "
                                "CAP_SYS_PTRACE CAP_CHOWN CAP_DAC_READ_SEARCH"])
        copy = os.path.join(self.tmp, "wardd.service")
        with open(copy, "w") as f:
            f.write("\n".join("ExecStart=" + os.path.abspath(self.wardd) if l.startswith("ExecStart=") else l
                              for l in text.splitlines()) + "\n")
        if shutil.which("systemd-analyze"):
            out = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
            self.assertEqual((out.returncode, out.stderr), (0, ""))

    # ---- TCP

    def test_tcp_needs_tls_flags(self):
        w = Wardd(self, ["--listen", "tcp://127.0.0.1:0"], wait=False)
        self.assertEqual(w.proc.wait(timeout=30), 2)
        self.assertEqual(w.stderr(), "wardd: --listen tcp://127.0.0.1:0: TCP is served with mutual TLS only; "
                         "missing --tls-cert, --tls-key, --client-ca\n")
        w = Wardd(self, ["--listen", "unix://" + self.sock("t0"), "--listen", "tcp://127.0.0.1:0",
                         "--tls-cert", self.pki["server.crt"]], wait=False)
        self.assertEqual(w.proc.wait(timeout=30), 2)
        self.assertEqual(w.stderr(), "wardd: --listen tcp://127.0.0.1:0: TCP is served with mutual TLS only; "
                         "missing --tls-key, --client-ca\n")
        self.assertFalse(os.path.lexists(self.sock("t0")), "nothing opened")
        # Bad flags stop it before anything is opened (exit 2), each named.
        bad_roles = os.path.join(self.tmp, "bad-roles.yaml")
        with open(bad_roles, "w") as f:
            f.write("operators:\n  - x\n")
        tls = ["--tls-cert", self.pki["server.crt"], "--tls-key", self.pki["server.key"]]
        for args, message in (
            (["--roles", bad_roles], "%s: unknown key 'operators' (expected operator, reader)" % bad_roles),
            (["--reader-group", "no-such-group-ward"], "--reader-group no-such-group-ward: no such group"),
            (["--listen", "tcp://127.0.0.1:0"] + tls + ["--client-ca", "/nonexistent/ca.pem"],
             "--client-ca /nonexistent/ca.pem: cannot read it"),
            (["--listen", "tcp://127.0.0.1:0"] + tls + ["--client-ca", self.pki["ca.crt"], "--crl-dir", bad_roles],
             "--crl-dir %s: not a folder" % bad_roles),
        ):
            w = Wardd(self, ["--listen", "unix://" + self.sock("t0")] + args, wait=False)
            self.assertEqual(w.proc.wait(timeout=30), 2, args)
            self.assertEqual(w.stderr(), "wardd: " + message + "\n")
            self.assertFalse(os.path.lexists(self.sock("t0")), "nothing opened")
        # A port in use: exit 1, the socket opened before it removed again.
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        self.addCleanup(busy.close)
        port = busy.getsockname()[1]
        w = Wardd(self, ["--listen", "unix://" + self.sock("t0"), "--listen", "tcp://127.0.0.1:%d" % port] + tls
                  + ["--client-ca", self.pki["ca.crt"]], wait=False)
        self.assertEqual(w.proc.wait(timeout=30), 1)
        self.assertIn("wardd: cannot start the gRPC server", w.stderr())
        self.assertFalse(os.path.lexists(self.sock("t0")))

    def test_tcp_mutual_tls(self):
        k = self.pki
        path = self.sock("t1")
        w = Wardd(self, ["--listen", "tcp://127.0.0.1:0", "--listen", "unix://" + path, "--tls-cert", k["server.crt"],
                         "--tls-key", k["server.key"], "--client-ca", k["ca.crt"], "--crl-dir", k["crl"],
                         "--roles", k["roles.yaml"]])
        self.assertTrue(w.endpoints[0].startswith("tcp://127.0.0.1:"), w.endpoints)
        self.assertEqual(w.endpoints[1], "unix://" + path)
        self.assertCode(self.call(w.target(1), "/ward.agent.v1.Agent/List"), "OK")
        t = w.target()
        # TLS 1.2 or later: 1.1 gets no session (s_client, for the version).
        for version, want in (("-tls1_1", "New, (NONE), Cipher is (NONE)"), ("-tls1_2", "New, TLSv1.2, Cipher is "),
                              ("-tls1_3", "New, TLSv1.3, Cipher is ")):
            out = subprocess.run(["openssl", "s_client", "-connect", t, version, "-cipher", "DEFAULT@SECLEVEL=0",
                                  "-cert", k["operator.crt"], "-key", k["operator.key"], "-CAfile", k["ca.crt"],
                                  "-alpn", "h2"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            lines = out.stdout.decode("latin-1").splitlines()
            self.assertTrue(any(l.startswith(want) for l in lines), (version, lines))
        tls = lambda who: {"ca": k["ca.crt"], "cert": k.get(who + ".crt"), "key": k.get(who + ".key")}
        # operator (URI SAN)
        r = self.call(t, "/ward.agent.v1.Agent/List", tls=tls("operator"))
        self.assertCode(r, "OK")
        if self.fake:
            self.assertEqual(r["response"]["unmanaged"][0], {"enforcer": "fake", "policy": "spiffe://ward.test/ops", "what": "operator"})
            r = self.call(t, "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, tls=tls("operator"))
            self.assertCode(r, "OK")
        r = self.call(t, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", kind="reflection", tls=tls("operator"))
        self.assertIn("ward.agent.v1.Agent", r["response"]["services"])
        # reader (CN only)
        r = self.call(t, "/ward.agent.v1.Agent/List", tls=tls("reader"))
        self.assertCode(r, "OK")
        if self.fake:
            self.assertEqual(r["response"]["unmanaged"][0]["policy"], "monitor")
        r = self.call(t, "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, tls=tls("reader"))
        self.assertCode(r, "PERMISSION_DENIED", "monitor (reader) may not call /ward.agent.v1.Agent/Apply")
        if not self.fake:  # refused before any handler (the TLS gate), and audited
            self.assertEqual(self.audit_tail(w, 1), [
                ("monitor", "apply", "refused: monitor (reader) may not call /ward.agent.v1.Agent/Apply")])
        r = self.call(t, "/grpc.health.v1.Health/Check", kind="health", tls=tls("reader"))
        self.assertEqual(r["response"], {"status": 1})
        # a verified certificate of an identity the roles file does not name
        for method, kind in (("/ward.agent.v1.Agent/List", "agent"), ("/grpc.health.v1.Health/Check", "health"),
                             ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", "reflection")):
            r = self.call(t, method, kind=kind, tls=tls("stranger"))
            self.assertCode(r, "PERMISSION_DENIED", "spiffe://ward.test/stranger (none) may not call " + method)
        # revoked (named operator in the roles file), expired (the operator's
        # identity), another CA's, none: no handshake
        for who in ("revoked", "expired", "foreign", "none"):
            r = self.call(t, "/ward.agent.v1.Agent/List", tls=tls(who))
            self.assertCode(r, "UNAVAILABLE")
        # Not the table's exact paths: refused before any handler, path not echoed.
        for p in BAD_PATHS + ["/ward.agent.v1.Agent/List\x7f"]:
            r = self.call(t, p, tls=tls("operator"))
            self.assertCode(r, "PERMISSION_DENIED", "spiffe://ward.test/ops (operator) may not call this method")
        r = self.call(t, "/ward.agent.v1.Agent/Apply", {"bundle": {"policy": "p"}}, pad=65 << 20, tls=tls("operator"))
        self.assertCode(r, "RESOURCE_EXHAUSTED")
        # A second wardd on the same port fails (no SO_REUSEPORT sharing).
        w2 = Wardd(self, ["--listen", w.endpoints[0], "--tls-cert", k["server.crt"], "--tls-key", k["server.key"],
                          "--client-ca", k["ca.crt"]], wait=False)
        self.assertEqual(w2.proc.wait(timeout=30), 1)
        self.assertIn("wardd: cannot start the gRPC server", w2.stderr())
        self.assertEqual(w.stop(signal.SIGINT), 0)
        # The control: without --crl-dir the revoked certificate is an operator's.
        w = Wardd(self, ["--listen", "tcp://127.0.0.1:0", "--tls-cert", k["server.crt"], "--tls-key", k["server.key"],
                         "--client-ca", k["ca.crt"], "--roles", k["roles.yaml"]])
        self.assertCode(self.call(w.target(), "/ward.agent.v1.Agent/List", tls=tls("revoked")), "OK")

    # ---- signed bundles

    def test_signed_bundles_over_the_wire(self):
        """With --bundle-key, an unsigned or stripped Apply and an unsigned
        Remove get their exact status from a stock client; they, an
        oversized and a malformed request change nothing."""
        if self.fake:
            self.skipTest("the fake service checks no signatures")
        d = os.path.join(self.tmp, "bundle-keys")
        os.makedirs(d)
        key, pub = os.path.join(d, "bundle.key"), os.path.join(d, "bundle.pub")
        sh("openssl", "genpkey", "-algorithm", "ed25519", "-out", key)
        sh("openssl", "pkey", "-in", key, "-pubout", "-out", pub)
        der = subprocess.run(["openssl", "pkey", "-pubin", "-in", pub, "-outform", "DER"], check=True,
                             capture_output=True).stdout
        key_id = hashlib.sha256(der).hexdigest()[:16]
        path = self.sock("s1")
        w = Wardd(self, ["--listen", "unix://" + path, "--bundle-key", pub])
        t = w.target()

        def state():
            """The state folder's files but the audit log, and the log's last line."""
            files, last = {}, None
            for name in sorted(os.listdir(w.state_dir)):
                with open(os.path.join(w.state_dir, name), "rb") as f:
                    data = f.read()
                if name.startswith("audit"):
                    if name == "audit.log" and data.strip():
                        last = json.loads(data.strip().splitlines()[-1])
                    continue
                files[name] = data
            return files, last

        before, _ = state()
        in_a_week = str(int(time.time() * 1000) + 7 * 86400 * 1000)
        apply, remove = "/ward.agent.v1.Agent/Apply", "/ward.agent.v1.Agent/Remove"
        for method, request, code, details in (
            (apply, {"bundle": {"policy": "agenttest"}}, "PERMISSION_DENIED",
             "bundle.signature: missing: this wardd takes only signed bundles"),
            # Stripped to an empty message, or to all but the signature bytes.
            (apply, {"bundle": {"policy": "agenttest", "scope": {"uid": 4242}, "signature": {}}}, "PERMISSION_DENIED",
             "bundle.signature.key_id: missing"),
            (apply, {"bundle": {"policy": "agenttest", "scope": {"uid": 4242}, "signature": {"keyId": key_id, "sequence": "5",
                                                                     "notAfter": in_a_week}}},
             "INVALID_ARGUMENT", "bundle.signature.ed25519: 0 bytes, not the 64 of an Ed25519 signature"),
            (apply, {"bundle": {"policy": "agenttest", "scope": {"uid": 4242}, "signature": {
                "keyId": key_id, "sequence": "5", "notAfter": in_a_week, "ed25519": "A" * 86 + "=="}}},
             "PERMISSION_DENIED", "bundle.signature: does not verify with key %s over this bundle's policy, "
             "scope, content, sequence and not_after" % key_id),
            (remove, {"policy": "agenttest"}, "PERMISSION_DENIED",
             "remove.signature: missing: this wardd takes only signed removals"),
        ):
            r = self.call(t, method, request)
            self.assertCode(r, code, details)
            files, last = state()
            self.assertEqual(files, before, details)
            self.assertEqual(last["result"], "refused: " + details)
        def audit_log():
            with open(os.path.join(w.state_dir, "audit.log"), "rb") as f:
                return f.read()

        audited = audit_log()
        # Oversized (over the 64 MiB limit) and malformed (an ApplyRequest
        # whose bundle is no protobuf message): refused by gRPC before the
        # service sees them, so not even audited.
        r = self.call(t, apply, {"bundle": {"policy": "agenttest"}}, pad=65 << 20)
        self.assertCode(r, "RESOURCE_EXHAUSTED")
        for raw in (pb_field(1, b"\xff\xff\xff\xff"), b"\xff" * 16):
            r = self.call(t, apply, raw=raw.hex())
            self.assertCode(r, "INTERNAL")
        self.assertEqual(state()[0], before)
        self.assertEqual(audit_log(), audited)
        # wardd is still serving.
        self.assertCode(self.call(t, "/ward.agent.v1.Agent/List"), "OK")


def socket_fds(pid, path=None):
    """{fd: "socket:[inode]"} of a process; with `path`, only the unix
    sockets on it (accepted ones carry the listener's path)."""
    inodes = None
    if path is not None:
        with open("/proc/net/unix") as f:
            inodes = {l.split()[6] for l in f.read().splitlines()[1:] if l.split()[-1] == path}
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:") and (inodes is None or link[len("socket:[") : -1] in inodes):
            out[int(fd)] = link
    return out


def wait_for(pred, timeout=20):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def make_pki(d):
    """A CA, a server certificate for 127.0.0.1, client certificates
    (operator: URI SAN; reader: CN only; stranger: URI SAN the roles file
    does not name; revoked: in the CRL), one of another CA, the CRL by hash
    name in crl/, and the roles file."""
    os.makedirs(os.path.join(d, "crl"))
    open(os.path.join(d, "index.txt"), "w").close()
    with open(os.path.join(d, "crlnumber"), "w") as f:
        f.write("01\n")
    cnf = os.path.join(d, "ca.cnf")
    with open(cnf, "w") as f:
        f.write("[ca]\ndefault_ca=tca\n[tca]\ndatabase=%s/index.txt\ncrlnumber=%s/crlnumber\n"
                "certificate=%s/ca.crt\nprivate_key=%s/ca.key\ndefault_md=sha256\ndefault_crl_days=2\n"
                "new_certs_dir=%s\nserial=%s/serial\npolicy=any\n[any]\ncommonName=supplied\n" % ((d,) * 6))
    with open(os.path.join(d, "serial"), "w") as f:
        f.write("1000\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("ca", "foreign-ca"):
        sh("openssl", "req", "-x509", *ec, "-keyout", "%s/%s.key" % (d, ca), "-out", "%s/%s.crt" % (d, ca),
           "-days", "2", "-subj", "/CN=ward test " + ca, "-addext", "basicConstraints=critical,CA:TRUE",
           "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def issue(name, cn, ext, ca="ca"):
        sh("openssl", "req", *ec, "-keyout", "%s/%s.key" % (d, name), "-out", "%s/%s.csr" % (d, name), "-subj", "/CN=" + cn)
        with open("%s/%s.ext" % (d, name), "w") as f:
            f.write(ext)
        sh("openssl", "x509", "-req", "-in", "%s/%s.csr" % (d, name), "-CA", "%s/%s.crt" % (d, ca),
           "-CAkey", "%s/%s.key" % (d, ca), "-CAcreateserial", "-days", "2", "-sha256",
           "-extfile", "%s/%s.ext" % (d, name), "-out", "%s/%s.crt" % (d, name))

    client = "extendedKeyUsage=clientAuth\n"
    issue("server", "wardd", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    issue("operator", "ops-cn-unused", client + "subjectAltName=URI:spiffe://ward.test/ops\n")
    issue("reader", "monitor", client)
    issue("stranger", "stranger", client + "subjectAltName=URI:spiffe://ward.test/stranger\n")
    issue("revoked", "revoked", client + "subjectAltName=URI:spiffe://ward.test/revoked\n")
    issue("foreign", "foreign", client + "subjectAltName=URI:spiffe://ward.test/ops\n", ca="foreign-ca")
    # Expired: `openssl x509 -days` cannot go back in time, `openssl ca`
    # takes any start and end date.
    sh("openssl", "req", *ec, "-keyout", "%s/expired.key" % d, "-out", "%s/expired.csr" % d, "-subj", "/CN=expired")
    with open("%s/expired.ext" % d, "w") as f:
        f.write(client + "subjectAltName=URI:spiffe://ward.test/ops\n")
    sh("openssl", "ca", "-config", cnf, "-batch", "-notext", "-in", "%s/expired.csr" % d, "-out", "%s/expired.crt" % d,
       "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-extfile", "%s/expired.ext" % d)
    sh("openssl", "ca", "-config", cnf, "-revoke", "%s/revoked.crt" % d)
    sh("openssl", "ca", "-config", cnf, "-gencrl", "-out", "%s/crl.pem" % d)
    h = sh("openssl", "crl", "-hash", "-noout", "-in", "%s/crl.pem" % d).strip()
    shutil.copy("%s/crl.pem" % d, "%s/crl/%s.r0" % (d, h))
    with open(os.path.join(d, "roles.yaml"), "w") as f:
        f.write("operator:\n  - spiffe://ward.test/ops\n  - spiffe://ward.test/revoked\nreader:\n  - monitor\n")
    sh("chmod", "-R", "a+rX", d)
    out = {n: os.path.join(d, n) for n in os.listdir(d)}
    return out


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--client":
        client_main(json.loads(sys.argv[2]))
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "--client-watches":
        client_watches(json.loads(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--wardd", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--unit", help="the configured wardd.service")
    args, rest = ap.parse_known_args()
    if os.geteuid() != 0:
        print("skipped: wardd's transport tests: needs root")
        return 77
    TransportTest.wardd, TransportTest.proto, TransportTest.fake = args.wardd, args.proto, args.fake
    TransportTest.unit = args.unit
    prog = unittest.main(argv=[sys.argv[0], "-v"] + rest, exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
