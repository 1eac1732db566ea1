#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the bundled default
# policy: check it, compile it for every Linux target, then run a demo
# command under it with `ward run` that shows an allowed and a denied action
# of each kind.
set -euo pipefail
cd "$(dirname "$0")/.."

ci/setup.sh
cmake --preset release >/dev/null
cmake --build build/release
ward=build/release/bin/ward

echo "== ward check policies/coding-agent.ward"
"$ward" check policies/coding-agent.ward
echo "== ward check policies/"
"$ward" check policies/
echo "== ward compile policies/coding-agent.ward -t linux,oci,nftables"
out=build/release/coding-agent
rm -rf "$out"
"$ward" compile policies/coding-agent.ward -t linux,oci,nftables -o "$out"
ls "$out"

echo "== ward run policies/coding-agent.ward -- sh -c ..."
# Allowed: write and read /tmp, run the toolchain. Denied: a file outside
# the grants, a loopback port not granted (the policy allows only 53), a
# user namespace. Each denied line prints the error the kernel returned.
"$ward" run policies/coding-agent.ward -- /usr/bin/sh -c '
  echo "allowed: $(echo hello > /tmp/ward-demo && cat /tmp/ward-demo) from /tmp"
  echo "allowed: $(ls /usr/bin | wc -l) programs listed in /usr/bin"
  cat /etc/shadow 2>&1 | sed "s/^/denied:  /"
  python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 22))" 2>&1 | tail -1 | sed "s/^/denied:  /"
  unshare -U true 2>&1 | sed "s/^/denied:  /"
  exit 0'
