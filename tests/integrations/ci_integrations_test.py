#!/usr/bin/env python3
"""Tests for ci/integrations/: the entry script against sample git
repositories made here, and the GitHub, GitLab and pre-commit files.

    ci_integrations_test.py --ward BUILD/bin/ward --source-dir REPO

Cases (each prints PASS or SKIP; any failure exits 1):
  yaml        action.yml, the GitLab template and .pre-commit-hooks.yaml parse
              as YAML, and their steps call ci/integrations/ward-ci.sh
  widen       a commit that widens a policy fails `diff` (exit 1) with the
              widening in the summary file
  narrow      a commit that narrows one passes (exit 0)
  base-widen  widening an imported abstract base fails the policy that
              extends it, though that policy's file did not change
  new/broken  a new policy passes and is named; one that does not check fails
  fmt-check   `fmt-check` fails on a file not in canonical layout, passes on
              one that is
  lint        `lint` writes valid SARIF 2.1.0 (checked against the published
              schema in ../shared/schemas)
              and `codequality` turns it into a Code Quality report.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

FAILURES = []


def check(cond, what, detail=""):
    if not cond:
        FAILURES.append(what)
        print("FAIL: %s\n%s" % (what, detail), flush=True)
    return cond


def passed(case):
    """PASS unless a check of this case failed."""
    failed = len(FAILURES) - passed.before
    passed.before = len(FAILURES)
    print(("PASS %s" if failed == 0 else "FAIL %s") % case, flush=True)


passed.before = 0


def run(cmd, cwd, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def git(repo, *args):
    rc, out, err = run(["git", *args], repo)
    if rc != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), err))
    return out.strip()


BASE = """abstract policy base {
  filesystem {
    allow read "/usr"
  }
}
"""

AGENT = """import "./base.ward"

policy agent extends base {
  network {
    allow tcp to "registry.npmjs.org" port 443
    allow tcp to "pypi.org" port 443
  }
  filesystem {
    allow read write "/workspace"
  }
}
"""


class Repo:
    def __init__(self, root, script, env):
        self.root = root
        self.script = script
        self.env = env
        os.makedirs(os.path.join(root, "policies"))
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "ci@example.com")
        git(root, "config", "user.name", "ci")
        git(root, "config", "commit.gpgsign", "false")

    def write(self, path, text):
        with open(os.path.join(self.root, path), "w") as f:
            f.write(text)

    def commit(self, message):
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def checkout(self, ref):
        git(self.root, "checkout", "-q", ref)

    def ci(self, *args, summary=None):
        env = dict(self.env)
        if summary:
            env["WARD_SUMMARY"] = summary
        env.pop("GITHUB_STEP_SUMMARY", None)
        return run(["sh", self.script, *args], self.root, env)


def read(path):
    with open(path) as f:
        return f.read()


def test_yaml(src):
    action = yaml.safe_load(read(os.path.join(src, "ci/integrations/github/action.yml")))
    check(action["runs"]["using"] == "composite", "action.yml is a composite action")
    steps = action["runs"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    check("ward-ci.sh" in runs, "action.yml points WARD_CI at ward-ci.sh")
    for sub in ("lint", "diff"):
        check('sh "$WARD_CI" %s' % sub in runs, "action.yml runs ward-ci.sh %s" % sub)
    uses = [s.get("uses", "") for s in steps]
    check(any(u.startswith("github/codeql-action/upload-sarif@") for u in uses),
          "action.yml uploads SARIF with codeql-action/upload-sarif")
    diff_step = [s for s in steps if '"$WARD_CI" diff' in s.get("run", "")][0]
    check("pull_request" in diff_step.get("if", ""), "the diff step runs on pull requests")
    check(os.path.isfile(os.path.join(src, "ci/integrations/github/../ward-ci.sh")),
          "ward-ci.sh sits where action.yml looks for it")

    gitlab = yaml.safe_load(read(os.path.join(src, "ci/integrations/gitlab/ward.gitlab-ci.yml")))
    for job in ("ward-lint", "ward-diff", "ward-fmt"):
        check(job in gitlab, "the GitLab template has job %s" % job)
        script = "\n".join(gitlab[job]["script"])
        check('"$WARD_CI_SCRIPT"' in script, "GitLab job %s runs ward-ci.sh" % job)
    check("CI_MERGE_REQUEST_DIFF_BASE_SHA" in "\n".join(gitlab["ward-diff"]["script"]),
          "the GitLab diff job compares against the merge request's base")
    check(gitlab["ward-lint"]["artifacts"]["reports"]["codequality"]
          == "gl-code-quality-report.json", "the GitLab lint job reports Code Quality")

    hooks = yaml.safe_load(read(os.path.join(src, ".pre-commit-hooks.yaml")))
    by_id = {h["id"]: h for h in hooks}
    check(by_id.get("ward-fmt", {}).get("entry") == "ward fmt --check",
          "pre-commit hook ward-fmt runs ward fmt --check")
    check(by_id.get("ward-lint", {}).get("entry") == "ward lint",
          "pre-commit hook ward-lint runs ward lint")
    for h in hooks:
        check(h.get("files") == r"\.ward$" and h.get("language") == "system",
              "pre-commit hook %s runs on .ward files" % h["id"])
    passed("yaml")


def test_diff(repo, tmp):
    repo.write("policies/base.ward", BASE)
    repo.write("policies/agent.ward", AGENT)
    a = repo.commit("initial")

    # widen: a new destination
    repo.write("policies/agent.ward", AGENT.replace(
        '    allow tcp to "pypi.org" port 443\n',
        '    allow tcp to "pypi.org" port 443\n    allow tcp to "evil.example" port 443\n'))
    b = repo.commit("widen")
    summary = os.path.join(tmp, "widen.md")
    rc, out, err = repo.ci("diff", a, b, summary=summary)
    text = read(summary) if os.path.exists(summary) else ""
    check(rc == 1, "a widening fails the diff (exit 1)", out + err)
    check("**widens**" in text and "evil.example" in text and "policies/agent.ward" in text,
          "the summary shows the widening", text)
    passed("widen")

    # narrow: a destination and a right removed
    repo.checkout(a)
    git(repo.root, "checkout", "-q", "-b", "narrow")
    repo.write("policies/agent.ward", AGENT.replace(
        '    allow tcp to "pypi.org" port 443\n', "").replace("read write", "read"))
    c = repo.commit("narrow")
    summary = os.path.join(tmp, "narrow.md")
    rc, out, err = repo.ci("diff", a, c, summary=summary)
    text = read(summary)
    check(rc == 0, "a narrowing passes the diff (exit 0)", out + err + text)
    check("changed, no widening" in text and "pypi.org" in text,
          "the summary lists the narrowing as no widening", text)
    passed("narrow")

    # the base widens: agent.ward itself is unchanged
    repo.checkout(a)
    git(repo.root, "checkout", "-q", "-b", "base-widen")
    repo.write("policies/base.ward", BASE.replace('"/usr"', '"/usr", "/etc"'))
    d = repo.commit("base widens")
    summary = os.path.join(tmp, "base.md")
    rc, out, err = repo.ci("diff", a, d, summary=summary)
    text = read(summary)
    check(rc == 1 and "policies/agent.ward" in text and "/etc" in text,
          "widening an imported base fails the policy extending it", out + err + text)
    passed("base-widen")

    # a new policy passes; one that does not check fails
    repo.checkout(a)
    git(repo.root, "checkout", "-q", "-b", "new")
    repo.write("policies/new.ward", 'policy fresh {\n  filesystem {\n    allow read "/srv"\n  }\n}\n')
    e = repo.commit("new policy")
    summary = os.path.join(tmp, "new.md")
    rc, out, err = repo.ci("diff", a, e, summary=summary)
    text = read(summary)
    check(rc == 0 and "`fresh` is **new**" in text, "a new policy passes and is named",
          out + err + text)
    repo.write("policies/new.ward", "policy fresh {\n  filesystem {\n    allow read nowhere\n  }\n}\n")
    f = repo.commit("broken policy")
    summary = os.path.join(tmp, "broken.md")
    rc, out, err = repo.ci("diff", a, f, summary=summary)
    text = read(summary)
    check(rc == 1 and "does not check" in text, "a policy that does not check fails",
          out + err + text)
    rc, out, err = repo.ci("diff", a, "no-such-ref")
    check(rc == 2, "an unknown ref is a usage error (exit 2)", out + err)
    passed("new/broken")


def test_fmt_check(repo):
    repo.checkout(git(repo.root, "rev-list", "--max-parents=0", "HEAD"))
    rc, out, err = repo.ci("fmt-check", "policies")
    check(rc == 0, "fmt-check passes on canonical files", out + err)
    repo.write("policies/agent.ward", AGENT.replace("  network {", "  network   {"))
    rc, out, err = repo.ci("fmt-check", "policies")
    check(rc == 1 and "would reformat policies/agent.ward" in out,
          "fmt-check fails on a file not in canonical layout", out + err)
    git(repo.root, "checkout", "-q", "--", "policies/agent.ward")
    passed("fmt-check")


def test_lint(repo, tmp, ward, src):
    sarif_path = os.path.join(tmp, "ward.sarif")
    env_repo = Repo.__new__(Repo)
    env_repo.__dict__.update(repo.__dict__)
    env_repo.env = dict(repo.env, WARD_SARIF=sarif_path)
    rc, out, err = env_repo.ci("lint", "policies")
    check(rc in (0, 1), "lint runs (exit 0 or 1)", out + err)
    try:
        sarif = json.loads(read(sarif_path))
    except (OSError, ValueError) as e:
        check(False, "lint writes JSON SARIF", str(e))
        return
    check(sarif.get("version") == "2.1.0" and sarif.get("runs"), "SARIF 2.1.0 with runs")
    schema_path = os.path.join(src, "..", "shared", "schemas", "sarif-schema-2.1.0.json")
    import jsonschema  # python3-jsonschema (ci/setup.sh)
    try:
        if not check(os.path.exists(schema_path), "the SARIF schema is at ../shared/schemas",
                     schema_path):
            raise FileNotFoundError(schema_path)
        jsonschema.validate(sarif, json.loads(read(schema_path)))
        print("  SARIF valid against %s" % os.path.normpath(schema_path))
    except FileNotFoundError:
        pass
    except jsonschema.ValidationError as e:
        check(False, "SARIF valid against the 2.1.0 schema", str(e)[:2000])
    report = os.path.join(tmp, "codequality.json")
    rc, out, err = env_repo.ci("codequality", sarif_path, report)
    check(rc == 0 and isinstance(json.loads(read(report)), list),
          "codequality writes a Code Quality list", out + err)
    passed("lint")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    src = os.path.abspath(args.source_dir)
    ward = os.path.abspath(args.ward)
    if shutil.which("git") is None:
        print("SKIP: git is not installed")
        return 77
    test_yaml(src)
    tmp = tempfile.mkdtemp(prefix="ward-ci-test.")
    try:
        env = dict(os.environ, WARD=ward, WARD_STD=os.path.join(src, "policies", "std"),
                   GIT_CONFIG_NOSYSTEM="1", HOME=tmp)
        repo = Repo(os.path.join(tmp, "repo"), os.path.join(src, "ci/integrations/ward-ci.sh"), env)
        test_diff(repo, tmp)
        test_fmt_check(repo)
        test_lint(repo, tmp, ward, src)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
