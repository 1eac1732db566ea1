#!/usr/bin/env python3
"""Validates SARIF files against the OASIS SARIF 2.1.0 schema (draft-04).

  lint_validate_sarif.py SCHEMA.json FILE...

Also checks what GitHub code scanning needs beyond the schema: every result
names a rule of the driver, and has a location with a relative URI and a
region. Prints one line per problem; exits 1 when any file is invalid.
"""
import json
import sys
import warnings

import jsonschema

warnings.filterwarnings("ignore", category=DeprecationWarning)


def extra_checks(doc):
    problems = []
    for run in doc.get("runs", []):
        rules = [r["id"] for r in run["tool"]["driver"].get("rules", [])]
        for i, result in enumerate(run.get("results", [])):
            if result.get("ruleId") not in rules:
                problems.append(f"results/{i}: ruleId {result.get('ruleId')} not in the driver's rules")
            elif rules[result.get("ruleIndex", -1)] != result["ruleId"]:
                problems.append(f"results/{i}: ruleIndex does not point at {result['ruleId']}")
            for loc in result.get("locations", []):
                phys = loc["physicalLocation"]
                uri = phys["artifactLocation"]["uri"]
                if uri.startswith("/") or ".." in uri.split("/"):
                    problems.append(f"results/{i}: uri {uri} is not relative")
                if "startLine" not in phys.get("region", {}):
                    problems.append(f"results/{i}: no region")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        validator = jsonschema.Draft4Validator(json.load(f))
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        problems = [f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]
        problems += extra_checks(doc)
        for p in problems:
            print(f"{path}: {p}")
        bad += bool(problems)
        if not problems:
            print(f"{path}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
