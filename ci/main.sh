#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the bundled default
# policy: check it, then compile it for the targets built so far (enforcing
# joins with `ward run`).
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
echo "== ward compile policies/coding-agent.ward -t seccomp,oci,process"
out=build/release/coding-agent
rm -rf "$out"
"$ward" compile policies/coding-agent.ward -t seccomp,oci,process -o "$out"
