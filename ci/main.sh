#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the bundled default
# policy (today: `ward check`; compile and enforce join as their issues land).
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
