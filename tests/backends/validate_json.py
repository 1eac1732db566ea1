#!/usr/bin/env python3
"""Validates what the backends write against published or documented schemas.

  validate_json.py --schema SCHEMA.json FILE...   each FILE against SCHEMA (draft-07)
  validate_json.py --oci SCHEMA_DIR FILE...       OCI runtime-spec (draft-04): a
      *.seccomp.json as linux.seccomp, a *.runtime.json merged into a minimal
      config.json, each validated against SCHEMA_DIR/config-schema.json
  validate_json.py --openapi API.yaml#/definitions/NAME FILE...
      each FILE against one definition of a Swagger 2.0 / OpenAPI document
      (YAML; its definitions are draft-04 schemas), e.g. Firecracker's
      firecracker-api.yaml#/definitions/FullVmConfiguration

Prints one line per error and exits 1 when any file is invalid.
"""
import json
import os
import sys
import warnings

import jsonschema

warnings.filterwarnings("ignore", category=DeprecationWarning)


def minimal_config():
    return {"ociVersion": "1.2.0", "root": {"path": "rootfs"},
            "process": {"cwd": "/", "args": ["/bin/sh"]}, "linux": {}}


def merge(base, fragment):
    for key, value in fragment.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def oci_validator(schema_dir):
    store = {}
    for name in os.listdir(schema_dir):
        if name.endswith(".json"):
            with open(os.path.join(schema_dir, name)) as f:
                store[name] = json.load(f)
    root = {"$ref": "config-schema.json"}
    try:  # jsonschema >= 4.18
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT4
        registry = Registry().with_resources(
            (name, Resource.from_contents(s, default_specification=DRAFT4))
            for name, s in store.items())
        return jsonschema.Draft4Validator(root, registry=registry)
    except ImportError:  # Debian 12's 4.10
        resolver = jsonschema.RefResolver(base_uri="", referrer=root, store=store)
        return jsonschema.Draft4Validator(root, resolver=resolver)


def openapi_validator(spec):
    import yaml
    path, _, pointer = spec.partition("#")
    with open(path) as f:
        document = yaml.safe_load(f)
    if not pointer.startswith("/definitions/"):
        raise SystemExit("--openapi needs FILE#/definitions/NAME")
    name = pointer[len("/definitions/"):]
    if name not in document.get("definitions", {}):
        raise SystemExit(f"{path}: no definition {name}")
    # The definitions travel with the root, so every #/definitions/X inside
    # them resolves against the same document.
    root = {"$ref": "#/definitions/" + name, "definitions": document["definitions"]}
    return jsonschema.Draft4Validator(root)


def main(argv):
    if len(argv) < 4 or argv[1] not in ("--schema", "--oci", "--openapi"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "--oci":
        validator = oci_validator(argv[2])
    elif argv[1] == "--openapi":
        validator = openapi_validator(argv[2])
    else:
        with open(argv[2]) as f:
            validator = jsonschema.Draft7Validator(json.load(f))
    bad = 0
    for path in argv[3:]:
        with open(path) as f:
            doc = json.load(f)
        if argv[1] == "--oci":
            if path.endswith(".seccomp.json"):
                doc = merge(minimal_config(), {"linux": {"seccomp": doc}})
            else:
                doc = merge(minimal_config(), doc)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}: /{where}: {e.message}")
        bad += bool(errors)
        if not errors:
            print(f"{path}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
