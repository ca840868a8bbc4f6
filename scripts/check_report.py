#!/usr/bin/env python3
"""Checks Granary run reports against docs/report.schema.json, and what a JSON Schema cannot
say: every series array has the length of the time axis beside it, a time axis ascends, and a
latency CDF has a figure per percent.

Usage: scripts/check_report.py [--schema FILE] REPORT.json...
Prints one line per problem (the file, the JSON path, what was expected and what was found)
and exits 1 when there is any; exits 0 when every report is valid.
"""
import argparse
import json
import os
import sys

try:
    import jsonschema
except ImportError:  # the Debian package python3-jsonschema (scripts/install-deps.sh test)
    sys.exit("check_report.py: the Python module jsonschema is missing "
             "(apt-get install python3-jsonschema)")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "docs", "report.schema.json")


def path_text(parts):
    return "".join("[%d]" % p if isinstance(p, int) else "." + p for p in parts).lstrip(".") or "(top)"


def time_axes(report):
    """(path, object) of every object holding a time axis "t_s" and the arrays aligned with it."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            if isinstance(node.get("t_s"), list):
                found.append((path, node))
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + [i])

    walk(report, [])
    return found


def aligned_arrays(path, node):
    """The arrays that must have the time axis's length: a series object's arrays of numbers;
    for the utilisation, each kind's series and each resource's."""
    if path and path[-1] == "utilization":
        for kind, k in node.get("kinds", {}).items():
            for key in ("series_mean", "series_max"):
                yield ["kinds", kind, key], k.get(key)
        for i, r in enumerate(node.get("resources", [])):
            yield ["resources", i, "series"], r.get("series")
        return
    for key, v in node.items():
        if key != "t_s" and isinstance(v, list):
            yield [key], v


def check(report, schema_validator):
    problems = []
    for e in sorted(schema_validator.iter_errors(report), key=lambda e: list(e.absolute_path)):
        problems.append("%s: %s" % (path_text(list(e.absolute_path)), e.message))
    for path, node in time_axes(report):
        t = node["t_s"]
        if any(b < a for a, b in zip(t, t[1:])):
            problems.append("%s: the time axis does not ascend" % path_text(path + ["t_s"]))
        for rel, arr in aligned_arrays(path, node):
            if isinstance(arr, list) and len(arr) != len(t):
                problems.append("%s: %d figures, expected %d (the length of %s)" % (
                    path_text(path + rel), len(arr), len(t), path_text(path + ["t_s"])))
    def cdfs(node, p):
        if isinstance(node, dict):
            if isinstance(node.get("cdf"), dict):
                c = node["cdf"]
                if len(c.get("percent", [])) != len(c.get("ms", [])):
                    problems.append("%s: percent and ms differ in length" % path_text(p + ["cdf"]))
                if any(b < a for a, b in zip(c.get("ms", []), c.get("ms", [])[1:])):
                    problems.append("%s: the quantiles do not ascend" % path_text(p + ["cdf", "ms"]))
            for k, v in node.items():
                cdfs(v, p + [k])
    cdfs(report, [])
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("reports", nargs="+")
    args = ap.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for name in args.reports:
        try:
            with open(name) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: cannot read a JSON report: %s" % (name, e))
            bad += 1
            continue
        for p in check(report, validator):
            print("%s: %s" % (name, p))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
