#!/bin/sh
# ward-ci.sh: the logic behind Ward's CI integrations (GitHub Action, GitLab
# template, pre-commit), kept in one POSIX sh script so it runs and is tested
# the same everywhere. See ci/integrations/README.md.
#
#   ward-ci.sh lint [PATH...]                 ward lint --format sarif > $WARD_SARIF
#   ward-ci.sh fmt-check [PATH...]            ward fmt --check
#   ward-ci.sh diff BASE_REF HEAD_REF [PATH...]
#                                             ward diff --fail-on widen, every policy
#                                             of BASE_REF against HEAD_REF
#   ward-ci.sh codequality SARIF OUT          SARIF to a GitLab Code Quality report
#
# PATHs are files or folders, relative to the repository root (default: .).
# Environment:
#   WARD           the ward binary (default: ward on $PATH)
#   WARD_SARIF     where `lint` writes SARIF (default: ward.sarif)
#   WARD_FAIL_ON   `ward lint --fail-on` (default: error)
#   WARD_SUMMARY   Markdown summary appended here (default: $GITHUB_STEP_SUMMARY;
#                  without either, no summary is written)
#   WARD_STD       passed through to ward (the standard library)
#
# Exit codes follow ward's: 0 nothing found, 1 found (lint findings at
# --fail-on level, a widening, a file that would be reformatted, a policy
# that does not check), 2 usage or operational error.
set -eu

WARD=${WARD:-ward}
WARD_SARIF=${WARD_SARIF:-ward.sarif}
WARD_FAIL_ON=${WARD_FAIL_ON:-error}
WARD_SUMMARY=${WARD_SUMMARY:-${GITHUB_STEP_SUMMARY:-}}

die() {
  echo "ward-ci: $*" >&2
  exit 2
}

usage() {
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

summary() {
  if [ -n "$WARD_SUMMARY" ]; then printf '%s\n' "$@" >>"$WARD_SUMMARY"; fi
}

need_ward() {
  command -v "$WARD" >/dev/null 2>&1 || die "ward not found (set WARD or put ward on PATH)"
}

# The Markdown fence around tool output, long enough for any backticks in it.
fence='~~~~'

cmd_lint() {
  need_ward
  # Only the real `ward lint` will do: never a stand-in.
  "$WARD" help lint >/dev/null 2>&1 || die "this ward has no 'lint' subcommand"
  [ $# -gt 0 ] || set -- .
  rc=0
  "$WARD" lint --format sarif --fail-on "$WARD_FAIL_ON" "$@" >"$WARD_SARIF" || rc=$?
  if [ "$rc" -ge 2 ]; then
    summary "## Ward lint" "" "ward lint failed (exit $rc); see the job log."
    return "$rc"
  fi
  results=$(grep -c '"ruleId"' "$WARD_SARIF" || true)
  echo "ward-ci: lint: SARIF written to $WARD_SARIF ($results results)"
  summary "## Ward lint" "" "$results finding(s); SARIF in \`$WARD_SARIF\`." ""
  return "$rc"
}

cmd_fmt_check() {
  need_ward
  [ $# -gt 0 ] || set -- .
  rc=0
  out=$("$WARD" fmt --check --color never "$@") || rc=$?
  [ -z "$out" ] || printf '%s\n' "$out"
  if [ "$rc" -eq 1 ] && [ -n "$out" ]; then
    summary "## Ward fmt" "" "Files not in canonical layout (run \`ward fmt\`):" "" \
      "$fence diff" "$out" "$fence" ""
  fi
  return "$rc"
}

# The non-abstract policy names defined in a file, one a line.
policy_names() {
  sed -n 's/^[[:space:]]*policy[[:space:]]\{1,\}\([A-Za-z0-9_-]\{1,\}\).*/\1/p' "$1" | sort -u
}

# Materialises the tree of a commit into a folder.
export_tree() {
  mkdir -p "$2"
  git archive --format=tar "$1" | (cd "$2" && tar -xf -)
}

cmd_diff() {
  [ $# -ge 2 ] || usage
  base=$1
  head=$2
  shift 2
  need_ward
  git rev-parse --git-dir >/dev/null 2>&1 || die "not inside a git repository"
  for ref in "$base" "$head"; do
    if ! git cat-file -e "$ref^{commit}" 2>/dev/null; then
      # Shallow clones (CI checkouts) may lack the base: fetch it.
      git fetch --quiet --no-tags --depth=1 origin "$ref" >/dev/null 2>&1 || true
      git cat-file -e "$ref^{commit}" 2>/dev/null || die "unknown commit $ref"
    fi
  done
  [ $# -gt 0 ] || set -- .
  work=$(mktemp -d "${TMPDIR:-/tmp}/ward-ci.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
  export_tree "$base" "$work/base"
  export_tree "$head" "$work/head"
  base_short=$(git rev-parse --short "$base")
  head_short=$(git rev-parse --short "$head")

  # A change to an imported base can widen a policy whose own file did not
  # change, so every policy file of HEAD under the paths is compared.
  (cd "$work/head" && find "$@" -type f -name '*.ward' 2>/dev/null | sed 's|^\./||' | sort) \
    >"$work/files"
  changed=$(git diff --name-only "$base" "$head" -- '*.ward' | wc -l | tr -d ' ')

  summary "## Ward policy diff ($base_short → $head_short)" ""
  widened=0
  invalid=0
  broken=0
  compared=0
  while IFS= read -r file; do
    new="$work/head/$file"
    old="$work/base/$file"
    [ -n "$(policy_names "$new")" ] || continue
    # A policy that does not check cannot be compared: HEAD's is a failure,
    # BASE's is noted and skipped.
    if ! "$WARD" check --color never "$new" >/dev/null 2>"$work/err"; then
      invalid=$((invalid + 1))
      err=$(sed "s|$work/head/||g" "$work/err")
      echo "ward-ci: $file does not check:" >&2
      printf '%s\n' "$err" >&2
      summary "- \`$file\`: **does not check**:" "" "$fence" "$err" "$fence" ""
      continue
    fi
    if [ -f "$old" ] && ! "$WARD" check --color never "$old" >/dev/null 2>&1; then
      echo "ward-ci: $file: the $base_short version does not check; not compared"
      summary "- \`$file\`: the $base_short version does not check; not compared."
      continue
    fi
    for name in $(policy_names "$new"); do
      if [ ! -f "$old" ] || ! policy_names "$old" | grep -qx "$name"; then
        echo "ward-ci: $file: policy $name is new"
        summary "- \`$file\`: policy \`$name\` is **new**: review it in full."
        continue
      fi
      compared=$((compared + 1))
      rc=0
      out=$("$WARD" diff --color never --fail-on widen --policy "$name" "$old" "$new" 2>"$work/err") ||
        rc=$?
      out=$(printf '%s\n' "$out" | sed "s|$work/head/||g; s|$work/base/|$base_short:|g")
      case $rc in
        0)
          if [ "$out" != "no changes" ]; then
            echo "ward-ci: $file: policy $name: changed, no widening"
            summary "- \`$file\`: policy \`$name\` changed, no widening." "" \
              "$fence" "$out" "$fence" ""
          fi
          ;;
        1)
          widened=$((widened + 1))
          echo "ward-ci: $file: policy $name WIDENS:"
          printf '%s\n' "$out"
          summary "- \`$file\`: policy \`$name\` **widens**:" "" "$fence diff" "$out" "$fence" ""
          ;;
        *)
          broken=$((broken + 1))
          err=$(sed "s|$work/head/||g; s|$work/base/|$base_short:|g" "$work/err")
          echo "ward-ci: $file: policy $name: ward diff failed (exit $rc):" >&2
          printf '%s\n' "$err" >&2
          summary "- \`$file\`: policy \`$name\`: **ward diff failed** (exit $rc):" "" \
            "$fence" "$err" "$fence" ""
          ;;
      esac
    done
  done <"$work/files"
  echo "ward-ci: diff: $changed policy file(s) changed, $compared polic(ies) compared," \
    "$widened widening, $invalid not checking, $broken error(s)"
  if [ "$widened" -eq 0 ] && [ "$invalid" -eq 0 ] && [ "$broken" -eq 0 ]; then
    summary "No policy widens ($compared compared, $changed file(s) changed)."
  fi
  [ "$broken" -eq 0 ] || return 2
  [ "$widened" -eq 0 ] && [ "$invalid" -eq 0 ] || return 1
  return 0
}

# SARIF 2.1.0 to GitLab's Code Quality JSON (a list of issues).
cmd_codequality() {
  [ $# -eq 2 ] || usage
  command -v python3 >/dev/null 2>&1 || die "codequality needs python3"
  python3 - "$1" "$2" <<'PY'
import hashlib, json, sys
sarif = json.load(open(sys.argv[1]))
severity = {"error": "major", "warning": "minor", "note": "info", "none": "info"}
issues = []
for run in sarif.get("runs", []):
    for r in run.get("results", []):
        loc = (r.get("locations") or [{}])[0].get("physicalLocation", {})
        path = loc.get("artifactLocation", {}).get("uri", "")
        line = loc.get("region", {}).get("startLine", 1)
        text = r.get("message", {}).get("text", "")
        rule = r.get("ruleId", "ward")
        key = "%s:%s:%s:%s" % (rule, path, line, text)
        issues.append({
            "description": "%s: %s" % (rule, text),
            "check_name": rule,
            "fingerprint": hashlib.sha256(key.encode()).hexdigest(),
            "severity": severity.get(r.get("level", "warning"), "minor"),
            "location": {"path": path, "lines": {"begin": line}},
        })
json.dump(issues, open(sys.argv[2], "w"), indent=2)
print("ward-ci: codequality: %d issue(s) written to %s" % (len(issues), sys.argv[2]))
PY
}

[ $# -gt 0 ] || usage
sub=$1
shift
case $sub in
  lint) cmd_lint "$@" ;;
  fmt-check) cmd_fmt_check "$@" ;;
  diff) cmd_diff "$@" ;;
  codequality) cmd_codequality "$@" ;;
  -h | --help | help) usage ;;
  *) die "unknown subcommand '$sub' (lint, fmt-check, diff, codequality)" ;;
esac
