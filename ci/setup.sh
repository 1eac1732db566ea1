#!/usr/bin/env bash
# Installs every Debian 12 package Ward needs to build and test. Idempotent;
# run as root. Later issues add their libraries here.
set -euo pipefail

packages=(
  # toolchain
  g++ clang libclang-rt-14-dev cmake ninja-build pkg-config python3
  # the language front end (the ANTLR runtime's archive links libuuid, and
  # the launcher, linked -static-pie, needs its archive: uuid-dev)
  antlr4 libantlr4-runtime-dev uuid-dev
  # facts and the command line
  libseccomp-dev libcli11-dev nlohmann-json3-dev
  # the compiler (IDN domains to punycode)
  libidn2-dev
  # `ward compile` manifests (SHA-256)
  libssl-dev
  # `ward lint` configuration (.ward-lint.yaml)
  libyaml-cpp-dev
  # tests: Catch2; OCI profiles loaded for real by runc and crun in a
  # busybox root; published JSON schemas checked with python3-jsonschema
  catch2 runc crun busybox-static python3-jsonschema python3-yaml
  # ebpf: BPF programs (clang, above), their skeleton and loader; the tests
  # use ip(8) for namespaces and routes
  libbpf-dev bpftool linux-libc-dev libelf-dev zlib1g-dev iproute2
  # nftables: the backend's library and nft(8) for the tests' read-back; the
  # tests' namespaces and cgroups (iproute2, util-linux: setpriv)
  libnftables-dev nftables util-linux
  # domain grants: the tests resolve against a dnsmasq they run (libresolv,
  # the resolver itself, is part of libc6-dev)
  dnsmasq-base
  # `ward learn`: the DNS replies it records are parsed with ldns
  libldns-dev
  # the CI integrations' tests create git repositories
  git
  # the README tour (ci/readme_tour.py) shows a manifest through jq
  jq
  # ward's man pages (help2man, at build time); their test renders them with
  # man -l (man-db) and groff; ward completion's test runs the zsh and fish
  # scripts in those shells
  help2man man-db groff-base zsh fish
  # wardd and the remote commands: gRPC 1.51 and protobuf (libgrpc++-dev
  # pulls in neither the compiler nor the plugin; without the plugin
  # find_package(gRPC) fails), and the stock client the tests use
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc python3-grpcio
  python3-grpc-tools
  # the transport tests make their CA and certificates with openssl(1)
  openssl
  # wardd --metrics: libmicrohttpd serves it; the tests parse it with
  # prometheus_client's parser
  libmicrohttpd-dev python3-prometheus-client
  # `ward import --from firejail`: its test reads every profile Debian ships
  # (firejail-profiles) and the firejail package's own .inc files
  firejail firejail-profiles
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "ci/setup.sh: all ${#packages[@]} packages present"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
