#!/bin/sh
# Regenerate Ward's kafel data from the real kafel:
#   importers/kafel/tables/*.tsv + LICENSE.kafel
#   tests/importers/testdata/kafel/{LICENSE,SOURCE.md,policies/,random/,
#       random_argarg/,cases.json,random_cases.json,random_argarg_cases.json}
# Run from anywhere; builds in a scratch directory under /tmp (never in the
# repository). Single-threaded. Needs cc, make, flex, bison, python3, git.
#
# Inputs (override with environment variables):
#   KAFEL_GIT / NSJAIL_GIT   bare git dirs of google/kafel and google/nsjail
#   KAFEL_REV / NSJAIL_REV   commits (default: the ones this data was made from)
set -eu

HERE=$(cd "$(dirname "$0")/.." && pwd)          # tests/importers/testdata/kafel
ROOT=$(cd "$HERE/../../../.." && pwd)            # repository root
TABLES=$ROOT/importers/kafel/tables
KAFEL_GIT=${KAFEL_GIT:-/work/.mirror/google+kafel/repo}
NSJAIL_GIT=${NSJAIL_GIT:-/work/.mirror/google+nsjail/repo}
KAFEL_REV=${KAFEL_REV:-18f207428068a50f2c35706c5d0b21f53c769016}
NSJAIL_REV=${NSJAIL_REV:-d6454b4640b6d8699b532a8afa37e4d67e477078}
WORK=$(mktemp -d /tmp/ward_kafel_oracle.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "== kafel $KAFEL_REV, nsjail $NSJAIL_REV, scratch $WORK"
mkdir -p "$WORK/kafel" "$WORK/nsjail" "$WORK/dump"
git --git-dir="$KAFEL_GIT" archive "$KAFEL_REV" | tar -x -C "$WORK/kafel"
git --git-dir="$NSJAIL_GIT" archive "$NSJAIL_REV" configs | tar -x -C "$WORK/nsjail"
NSJAIL_PIN=$(git --git-dir="$NSJAIL_GIT" ls-tree "$NSJAIL_REV" kafel | awk '{print $3}')
KAFEL_DATE=$(git --git-dir="$KAFEL_GIT" log -1 --format=%cI "$KAFEL_REV")
NSJAIL_DATE=$(git --git-dir="$NSJAIL_GIT" log -1 --format=%cI "$NSJAIL_REV")

echo "== build kafel"
make -C "$WORK/kafel" -j1 >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; exit 1; }
K=$WORK/kafel

echo "== syscall tables"
python3 "$TABLES/extract.py" "$K" "$TABLES"
cp "$K/LICENSE" "$TABLES/LICENSE.kafel"
cp "$K/LICENSE" "$HERE/LICENSE"

echo "== dump kafel test policies"
cp -r "$HERE/tools/dump_tests/." "$WORK/dump/"
cp "$K/test/basic.c" "$K/test/broken.c" "$K/test/includes.c" "$WORK/dump/"
cc -O1 -w -I"$WORK/dump" -I"$K/include" "$WORK/dump/main.c" "$WORK/dump/basic.c" \
  "$WORK/dump/broken.c" "$WORK/dump/includes.c" "$K/libkafel.a" -o "$WORK/dump/dump"
"$WORK/dump/dump" >"$WORK/dump.out"

echo "== collect policies"
python3 "$HERE/tools/collect_policies.py" --kafel "$K" --nsjail "$WORK/nsjail" \
  --dump "$WORK/dump.out" --out "$HERE" --provenance "$WORK/prov.json" \
  --manifest "$WORK/cases.manifest"

echo "== random policies"
python3 "$HERE/tools/gen_random.py" --table "$TABLES/amd64.tsv" --out "$HERE"

echo "== oracle"
cc -O1 -std=gnu11 -Wall -Wextra -I"$K/include" -I"$K/test/runner" "$HERE/gen_oracle.c" \
  "$K/test/runner/interpreter.c" "$K/libkafel.a" -o "$WORK/gen_oracle"
cd "$HERE"
for d in random random_argarg; do
  ls "$d"/*.policy | LC_ALL=C sort | sed 's/$/\t-\t-/' >"$WORK/$d.manifest"
done
"$WORK/gen_oracle" "$TABLES/amd64.tsv" "$WORK/cases.manifest" cases.json
"$WORK/gen_oracle" "$TABLES/amd64.tsv" "$WORK/random.manifest" random_cases.json
"$WORK/gen_oracle" "$TABLES/amd64.tsv" "$WORK/random_argarg.manifest" random_argarg_cases.json

echo "== SOURCE.md"
TOOLS="$(flex --version | head -1), $(bison --version | head -1), $(cc --version | head -1), $(python3 --version)"
python3 "$HERE/tools/write_source_md.py" --dir "$HERE" --provenance "$WORK/prov.json" \
  --kafel-rev "$KAFEL_REV" --kafel-date "$KAFEL_DATE" --nsjail-rev "$NSJAIL_REV" \
  --nsjail-date "$NSJAIL_DATE" --nsjail-kafel-pin "$NSJAIL_PIN" --tools "$TOOLS"
echo "== done"
