#!/usr/bin/python3
"""packaging/kubernetes/*.yaml: every document valid for its kind, and wardd's pod as designed.

Each document is validated against its kind's Kubernetes v1.31.0 JSON schema
(schemas/, standalone-strict: an unknown or misplaced field fails), then the
properties the DaemonSet exists for are asserted (packaging/kubernetes/README.md):
hostPID, hostNetwork, the host's cgroup2, state and socket folders on
hostPath, /sys/fs/bpf with HostToContainer propagation, maxUnavailable 1,
system-node-critical, exactly the systemd unit's capabilities and no
privilege beyond them, no seccomp profile, the bundle folder from a
ConfigMap, a service account without a token and a Role that grants nothing.
Negative controls: the same checks fail on documents broken on purpose.
Usage: manifests_test.py SOURCE_DIR
"""
import copy
import json
import os
import re
import sys

import jsonschema
import yaml

SRC = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
MANIFESTS = os.path.join(SRC, 'packaging', 'kubernetes')
SCHEMAS = os.path.join(SRC, 'tests', 'packaging', 'kubernetes', 'schemas')
UNIT = os.path.join(SRC, 'packaging', 'systemd', 'wardd.service.in')

# (apiVersion, kind) -> schema file
KINDS = {
    ('apps/v1', 'DaemonSet'): 'k8s-v1.31.0-daemonset-apps-v1.json',
    ('v1', 'ServiceAccount'): 'k8s-v1.31.0-serviceaccount-v1.json',
    ('v1', 'Namespace'): 'k8s-v1.31.0-namespace-v1.json',
    ('v1', 'ConfigMap'): 'k8s-v1.31.0-configmap-v1.json',
    ('rbac.authorization.k8s.io/v1', 'Role'): 'k8s-v1.31.0-role-rbac-v1.json',
    ('rbac.authorization.k8s.io/v1', 'RoleBinding'): 'k8s-v1.31.0-rolebinding-rbac-v1.json',
}
_validators = {}


def validator(doc):
    key = (doc.get('apiVersion'), doc.get('kind'))
    if key not in KINDS:
        raise AssertionError('no schema vendored for %s %s' % key)
    if key not in _validators:
        with open(os.path.join(SCHEMAS, KINDS[key])) as f:
            _validators[key] = jsonschema.Draft7Validator(json.load(f))
    return _validators[key]


def schema_errors(doc):
    return ['%s: %s' % ('/'.join(str(p) for p in e.absolute_path), e.message)
            for e in validator(doc).iter_errors(doc)]


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print('ok:', what)


def unit_capabilities():
    with open(UNIT) as f:
        m = re.search(r'^CapabilityBoundingSet=(.*)$', f.read(), re.M)
    return sorted(c[len('CAP_'):] for c in m.group(1).split())


def daemonset_problems(ds):
    """What is wrong with wardd's DaemonSet, as the README promises it; [] when nothing."""
    p = []
    spec = ds['spec']
    pod = spec['template']['spec']
    if spec.get('updateStrategy', {}).get('type') != 'RollingUpdate' or \
            spec['updateStrategy'].get('rollingUpdate', {}).get('maxUnavailable') != 1:
        p.append('updateStrategy: not RollingUpdate with maxUnavailable 1')
    for field, want in (('hostPID', True), ('hostNetwork', True),
                        ('priorityClassName', 'system-node-critical'),
                        ('automountServiceAccountToken', False), ('serviceAccountName', 'wardd')):
        if pod.get(field) != want:
            p.append('%s: %r, want %r' % (field, pod.get(field), want))
    if pod.get('hostIPC'):
        p.append('hostIPC: wardd needs none')
    if pod.get('securityContext', {}).get('seccompProfile', {}).get('type') != 'Unconfined':
        p.append('pod seccompProfile: not Unconfined')
    volumes = {v['name']: v for v in pod['volumes']}
    containers = pod['containers']
    wardd = [c for c in containers if c['name'] == 'wardd']
    if len(containers) != 1 or not wardd:
        return p + ['containers: want wardd alone']
    c = wardd[0]
    sc = c.get('securityContext', {})
    caps = sc.get('capabilities', {})
    if caps.get('drop') != ['ALL']:
        p.append('capabilities.drop: %r, want [ALL]' % caps.get('drop'))
    if sorted(caps.get('add', [])) != unit_capabilities():
        p.append('capabilities.add: %r, want the unit\'s %r' % (sorted(caps.get('add', [])),
                                                               unit_capabilities()))
    if sc.get('privileged') is not False:
        p.append('privileged: %r, want false' % sc.get('privileged'))
    if sc.get('allowPrivilegeEscalation') is not False:
        p.append('allowPrivilegeEscalation: %r, want false' % sc.get('allowPrivilegeEscalation'))
    if sc.get('seccompProfile', {}).get('type') != 'Unconfined':
        p.append('container seccompProfile: not Unconfined')
    if sc.get('procMount') not in (None, 'Default'):
        p.append('procMount: %r' % sc.get('procMount'))
    for init in pod.get('initContainers', []):
        isc = init.get('securityContext', {})
        if isc.get('capabilities', {}).get('add') or isc.get('privileged') or \
                isc.get('capabilities', {}).get('drop') != ['ALL']:
            p.append('init container %s: capabilities beyond none' % init['name'])
    mounts = {m['mountPath']: m for m in c['volumeMounts']}

    def host_mount(path, host, propagation=None, read_only=False):
        m = mounts.get(path)
        if not m:
            p.append('%s: not mounted' % path)
            return
        v = volumes.get(m['name'], {})
        if v.get('hostPath', {}).get('path') != host:
            p.append('%s: not the host\'s %s' % (path, host))
        if m.get('mountPropagation') != propagation:
            p.append('%s: mountPropagation %r, want %r' % (path, m.get('mountPropagation'), propagation))
        if bool(m.get('readOnly')) != read_only:
            p.append('%s: readOnly %r' % (path, m.get('readOnly')))

    host_mount('/sys/fs/bpf', '/sys/fs/bpf', 'HostToContainer')
    host_mount('/sys/fs/cgroup', '/sys/fs/cgroup')
    host_mount('/var/lib/ward', '/var/lib/ward')
    host_mount('/run/ward', '/run/ward')  # the socket folder /run/ward/agent in it
    args = dict(a[2:].split('=', 1) for a in c.get('args', []))
    bundle_dir = args.get('bundle-dir')
    m = mounts.get(bundle_dir)
    v = volumes.get(m['name'], {}) if m else {}
    sources = v.get('projected', {}).get('sources', [])
    if not m or not m.get('readOnly') or not (v.get('configMap') or
                                              (sources and all('configMap' in s for s in sources))):
        p.append('--bundle-dir %r: not a read-only ConfigMap volume' % bundle_dir)
    key = args.get('bundle-key', '')
    if not any(key.startswith(path + '/') and mounts[path].get('readOnly') for path in mounts):
        p.append('--bundle-key %r: not in a read-only volume' % key)
    for name, vol in volumes.items():
        if 'hostPath' in vol and vol['hostPath']['path'] not in (
                '/sys/fs/bpf', '/sys/fs/cgroup', '/var/lib/ward', '/run/ward'):
            p.append('volume %s: host path %s beyond the four wardd uses' % (name, vol['hostPath']['path']))
    return p


def main():
    docs = []
    for name in sorted(os.listdir(MANIFESTS)):
        if name.endswith('.yaml'):
            with open(os.path.join(MANIFESTS, name)) as f:
                docs += [(name, d) for d in yaml.safe_load_all(f) if d is not None]
    check(sorted({d['kind'] for _, d in docs}) ==
          ['DaemonSet', 'Namespace', 'Role', 'RoleBinding', 'ServiceAccount'],
          'the manifests: a Namespace, a ServiceAccount, a Role, a RoleBinding and the DaemonSet')
    for name, d in docs:
        errors = schema_errors(d)
        check(errors == [], '%s: %s %s valid against the v1.31.0 schema %s' %
              (name, d['kind'], d['metadata']['name'], errors or ''))
        check(d['kind'] == 'Namespace' or d['metadata'].get('namespace') == 'ward-system',
              '%s: %s in ward-system' % (name, d['kind']))
    by_kind = {d['kind']: d for _, d in docs}
    ds = by_kind['DaemonSet']
    problems = daemonset_problems(ds)
    check(problems == [], 'the DaemonSet as designed %s' % (problems or ''))
    check(unit_capabilities() == sorted(['NET_ADMIN', 'BPF', 'PERFMON', 'SYS_ADMIN', 'SYS_PTRACE',
                                         'CHOWN', 'DAC_READ_SEARCH']),
          'the unit\'s capabilities, read from wardd.service.in')
    sa = by_kind['ServiceAccount']
    check(sa['metadata']['name'] == 'wardd' and sa.get('automountServiceAccountToken') is False,
          'ServiceAccount wardd: no token mounted')
    check(by_kind['Role']['rules'] == [], 'Role wardd grants nothing (wardd calls the API server for nothing)')
    rb = by_kind['RoleBinding']
    check(rb['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': 'wardd'} and
          rb['subjects'] == [{'kind': 'ServiceAccount', 'name': 'wardd', 'namespace': 'ward-system'}],
          'RoleBinding: that Role to that ServiceAccount only')
    check(not any(d['kind'] in ('ClusterRole', 'ClusterRoleBinding') for _, d in docs),
          'no cluster-wide role')
    check(by_kind['Namespace']['metadata']['labels'].get('pod-security.kubernetes.io/enforce') ==
          'privileged', 'the namespace admits the pod (Pod Security: privileged)')

    # Negative controls: the schemas and the checks reject what they should.
    bad = copy.deepcopy(ds)
    bad['spec']['template']['spec']['hostPid'] = True
    check(any('hostPid' in e for e in schema_errors(bad)), 'control: a misspelt field fails the schema')
    bad = copy.deepcopy(ds)
    bad['spec']['updateStrategy']['rollingUpdate']['maxUnavailable'] = []
    check(schema_errors(bad) != [], 'control: a wrongly typed field fails the schema')
    bad = copy.deepcopy(by_kind['Role'])
    bad['rules'] = [{'verbs': 'get'}]
    check(schema_errors(bad) != [], 'control: a malformed Role rule fails the schema')
    for what, change, want in (
            ('maxUnavailable 2', lambda s: s['updateStrategy']['rollingUpdate'].update(maxUnavailable=2),
             'updateStrategy'),
            ('privileged', lambda s: s['template']['spec']['containers'][0]['securityContext'].update(
                privileged=True), 'privileged'),
            ('a capability more', lambda s: s['template']['spec']['containers'][0]['securityContext']
             ['capabilities']['add'].append('SYS_MODULE'), 'capabilities.add'),
            ('no propagation', lambda s: [m.pop('mountPropagation') for m in s['template']['spec']
                                          ['containers'][0]['volumeMounts'] if m['mountPath'] == '/sys/fs/bpf'],
             '/sys/fs/bpf: mountPropagation'),
            ('RuntimeDefault seccomp', lambda s: s['template']['spec']['containers'][0]['securityContext']
             .update(seccompProfile={'type': 'RuntimeDefault'}), 'container seccompProfile'),
            ('hostNetwork off', lambda s: s['template']['spec'].update(hostNetwork=False), 'hostNetwork'),
            ('the host root', lambda s: s['template']['spec']['volumes'].append(
                {'name': 'root', 'hostPath': {'path': '/'}}), 'beyond the four')):
        bad = copy.deepcopy(ds)
        change(bad['spec'])
        found = daemonset_problems(bad)
        check(any(want in x for x in found), 'control: %s is caught (%s)' % (what, found))
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
