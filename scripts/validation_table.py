#!/usr/bin/env python3
"""Runs every comparison of Granary with a published figure and writes the table of
docs/validation.md ("Every comparison with a published figure").

The comparisons:
  - tests/data/validation/mlperf-v1.0-*.json: one MLPerf Storage v1.0 result each. Granary's
    supported accelerators per host (what `granary plan accelerators` finds: the largest count
    keeping AU at the workload's threshold; searched here from the published count outwards,
    which takes a few runs where plan's doubling and bisection from 1 takes ten) against the
    published count, within the data file's tolerance (or, for client-bound submissions, at
    least the published count); and Granary's throughput at the published accelerator count
    (samples per second over the epoch x the record length, as MLPerf reports MB/s, in MiB/s),
    a reported figure.
  - tests/data/validation/ceph-recovery.json: published Ceph recovery rates against
    recovery.bytes_moved / (recovery_finished_at_s - recovery_started_at_s) of the named
    scenario as the comparison sets it up (the file's "about"), within its tolerance (a factor
    of 2).
A comparison outside its tolerance needs an outside_tolerance_reason in its data file; the
table shows it. tests/cli/published_validation_test.cc checks the MLPerf tolerances in ctest,
tests/cli/recovery_validation_test.cc the recovery ones, from the same data files.

Usage (from the repository root, after a build):
  scripts/validation_table.py                # print the table
  scripts/validation_table.py --write        # and replace it in docs/validation.md
  scripts/validation_table.py --check        # exit 1 if docs/validation.md's table differs
  scripts/validation_table.py --check-listed # quick (no runs): every comparison of the data
                                             # files has its rows in docs/validation.md's table
Options: --granary PATH (default build/cli/granary), --jobs N (simulations at once, default 1),
--only SUBSTRING (comparisons whose data file or scenario contains it; not with --write/--check),
--results FILE (also write the figures as JSON). `make validation-table` runs --write.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "validation.md")
BEGIN = "<!-- validation-table:begin (scripts/validation_table.py --write) -->"
END = "<!-- validation-table:end -->"


def run_report(granary, scenario_path, tmp):
    out = os.path.join(tmp, os.path.basename(scenario_path) + ".report.json")
    t0 = time.time()
    subprocess.run([granary, "run", scenario_path, "--quiet", "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f), time.time() - t0


def au_at(granary, scenario_path, per_host, tmp, cache):
    """AU of the scenario run with per_host accelerators per client host."""
    if per_host in cache:
        return cache[per_host]
    with open(scenario_path) as f:
        s = json.load(f)
    s["cluster"]["clients"]["accelerators_per_node"] = per_host
    name = "%s-%d" % (os.path.basename(scenario_path)[:-5], per_host)
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(s, f)
    report, _ = run_report(granary, path, tmp)
    cache[per_host] = report["summary"]["accelerator_utilization"]["mean"]
    return cache[per_host]


def supported_per_host(granary, scenario_path, published, threshold, lower_bound, tmp, au_published):
    """The largest accelerators per host keeping AU >= threshold, searched from the published
    count outwards one at a time (the answer of `granary plan accelerators`, which doubles and
    bisects from 1, when AU falls as accelerators are added), within the window that decides
    the comparison: [0.85 P - 1, 1.15 P + 1] (P alone for a lower bound). Returns (count,
    qualifier) with qualifier "" (exact), ">=" or "<" (the search window's edge), and the
    probes. au_published: the AU of the scenario as it stands (the published count)."""
    cache = {published: au_published}
    if lower_bound:
        # Only whether Granary supports the published count is compared.
        if au_published < threshold:
            n = published - 1
            while n >= 1 and au_at(granary, scenario_path, n, tmp, cache) < threshold:
                n -= 1
            return n, "", cache
        return published, ">=", cache
    lo = max(1, int(math.floor(0.85 * published)) - 1)
    hi = int(math.ceil(1.15 * published)) + 1
    if au_at(granary, scenario_path, published, tmp, cache) >= threshold:
        n = published
        while n < hi:
            if au_at(granary, scenario_path, n + 1, tmp, cache) < threshold:
                return n, "", cache
            n += 1
        return hi, ">=", cache
    n = published - 1
    while n >= lo:
        if au_at(granary, scenario_path, n, tmp, cache) >= threshold:
            return n, "", cache
        n -= 1
    return lo, "<", cache


def mlperf_row(granary, data_path, tmp):
    with open(data_path) as f:
        d = json.load(f)
    pub = d["published"]
    scenario = os.path.join(ROOT, d["scenario"])
    report, run_s = run_report(granary, scenario, tmp)
    s = report["summary"]
    samples = s["steps_per_epoch"] * pub["batch_size"] * pub["accelerators"]
    mibps = samples / s["epoch_seconds"] * pub["record_length_bytes"] / 2**20
    v = d["validation"]["supported_accelerators"]
    p = pub["accelerators_per_host"]
    hosts = pub["client_hosts"]
    t0 = time.time()
    per_host, qualifier, probes = supported_per_host(
        granary, scenario, p, d["au_threshold"], v["kind"] == "lower_bound", tmp,
        s["accelerator_utilization"]["mean"])
    plan_s = time.time() - t0
    if v["kind"] == "lower_bound":
        ok = per_host >= p
        tolerance = "lower bound: >= published"
    else:
        t = v["tolerance"]
        ok = qualifier == "" and abs(per_host / p - 1) <= t + 1e-9
        tolerance = "±%d%%" % round(100 * t)
    return {
        "data": os.path.relpath(data_path, ROOT),
        "system": d["submitter"] + " " + d["system"],
        "workload": "%s / %s" % (d["workload"], d["accelerator"].upper()),
        "published_per_host": p,
        "published_accelerators": pub["accelerators"],
        "hosts": hosts,
        "granary_per_host": per_host,
        "granary_qualifier": qualifier,
        "au_by_per_host": {str(k): round(v, 4) for k, v in sorted(probes.items())},
        "supported_ok": ok,
        "supported_tolerance": tolerance,
        "reason": v.get("outside_tolerance_reason") or ("" if ok else None),
        "published_mib_per_s": pub["throughput_mib_per_s"],
        "published_au": pub["au_percent_mean"] / 100,
        "granary_mib_per_s": mibps,
        "granary_au": s["accelerator_utilization"]["mean"],
        "seconds": round(run_s + plan_s, 1),
    }


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (null removes a key), as nlohmann::json::merge_patch."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


def recovery_scenario(c, tmp):
    """The comparison's run, as tests/cli/recovery_validation_test.cc sets it up: the shipped
    scenario with scenario_patch, files, append_workloads and recovery applied, its
    expectations (regression pins) dropped and its CRUSH map path made absolute."""
    shipped = os.path.join(ROOT, "scenarios", "validation", c["scenario"] + ".json")
    with open(shipped) as f:
        s = json.load(f)
    if "scenario_patch" in c:
        s = merge_patch(s, c["scenario_patch"])
    if "files" in c:
        s["workloads"][0]["files"] = c["files"]
    s["workloads"].extend(c.get("append_workloads", []))
    rados = s["storage"]["rados"]
    rados["recovery"] = merge_patch(rados.get("recovery", {}), c["recovery"])
    if "crush_map" in rados:
        rados["crush_map"] = os.path.normpath(
            os.path.join(os.path.dirname(shipped), rados["crush_map"]))
    s["expect"] = []
    path = os.path.join(tmp, c["name"] + ".json")
    with open(path, "w") as f:
        json.dump(s, f, indent=2)
    return path


def recovery_row(granary, c, tolerance_factor, tmp):
    report, run_s = run_report(granary, recovery_scenario(c, tmp), tmp)
    r = report["recovery"]
    span = r["recovery_finished_at_s"] - r["recovery_started_at_s"]
    rate = r["bytes_moved"] / span / 2**20
    ratio = rate / c["published_mib_per_s"]
    ok = 1 / tolerance_factor <= ratio <= tolerance_factor
    return {
        "data": c["name"],
        "system": "Ceph %s (source %s)" % (c["system"], c["source"]),
        "workload": "recovery, " + c["setting"],
        "published_mib_per_s": c["published_mib_per_s"],
        "granary_mib_per_s": rate,
        "ratio": ratio,
        "ok": ok,
        "tolerance": "x%g" % tolerance_factor,
        "reason": c.get("outside_tolerance_reason") or ("" if ok else None),
        "seconds": round(run_s, 1),
    }


def fmt_int(x):
    return "{:,}".format(int(round(x)))


def verdict(ok, reason):
    if ok and not reason:
        return "within"
    if ok and reason:
        return "within (stale outside_tolerance_reason: remove it)"
    if reason:
        return "outside: " + reason
    return "**outside, no reason given (fails)**"


def table(mlperf, recovery):
    lines = [
        "| system | workload | figure | published | Granary | error | tolerance | within, or why not |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in mlperf:
        p, g, h, q = r["published_per_host"], r["granary_per_host"], r["hosts"], r["granary_qualifier"]
        q = q + " " if q else ""
        au = ", ".join("%s: %.3f" % kv for kv in r["au_by_per_host"].items())
        lines.append("| %s | %s | supported accelerators | %d (%d x %d) | %s%d (%d x %s%d; AU per host count %s) | %s%+.0f%% | %s | %s |" % (
            r["system"], r["workload"], p * h, h, p, q, g * h, h, q, g, au, q,
            100 * (g / p - 1), r["supported_tolerance"], verdict(r["supported_ok"], r["reason"])))
        lines.append("| | | throughput at %d accelerators, MiB/s (AU) | %s (%.3f) | %s (%.3f) | %+.1f%% | reported | — |" % (
            r["published_accelerators"], fmt_int(r["published_mib_per_s"]), r["published_au"],
            fmt_int(r["granary_mib_per_s"]), r["granary_au"],
            100 * (r["granary_mib_per_s"] / r["published_mib_per_s"] - 1)))
    for r in recovery:
        lines.append("| %s | %s | recovery rate, MiB/s | %s | %s | x%.2f | %s | %s |" % (
            r["system"], r["workload"], fmt_int(r["published_mib_per_s"]),
            fmt_int(r["granary_mib_per_s"]), r["ratio"], r["tolerance"],
            verdict(r["ok"], r["reason"])))
    return "\n".join(lines) + "\n"


def rerender(results_path, rec):
    """The rows of an earlier run, with the verdicts re-derived from today's data files."""
    with open(results_path) as f:
        res = json.load(f)
    for r in res["mlperf"]:
        with open(os.path.join(ROOT, r["data"])) as f:
            v = json.load(f)["validation"]["supported_accelerators"]
        p, g, q = r["published_per_host"], r["granary_per_host"], r["granary_qualifier"]
        if v["kind"] == "lower_bound":
            r["supported_ok"] = g >= p
        else:
            r["supported_ok"] = q == "" and abs(g / p - 1) <= v["tolerance"] + 1e-9
        r["reason"] = v.get("outside_tolerance_reason") or ("" if r["supported_ok"] else None)
    by_name = {c["name"]: c for c in rec["comparisons"]}
    for r in res["recovery"]:
        c = by_name[r["data"]]
        r["reason"] = c.get("outside_tolerance_reason") or ("" if r["ok"] else None)
    return res["mlperf"], res["recovery"]


def doc_table():
    with open(DOC) as f:
        doc = f.read()
    i, j = doc.find(BEGIN), doc.find(END)
    if i < 0 or j < i:
        return None
    return doc[i + len(BEGIN):j]


def check_listed():
    """Every comparison in the data files has its rows in the doc's table (no runs)."""
    t = doc_table()
    if t is None:
        return "docs/validation.md has no table markers"
    rows = [r for r in t.splitlines() if r.startswith("| ")]
    missing = []
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "validation", "mlperf-v1.0-*.json"))):
        with open(p) as f:
            d = json.load(f)
        name = d["submitter"] + " " + d["system"]
        want = "%s / %s" % (d["workload"], d["accelerator"].upper())
        if not any(r.startswith("| %s | %s | supported accelerators |" % (name, want)) for r in rows):
            missing.append(os.path.relpath(p, ROOT))
    with open(os.path.join(ROOT, "tests", "data", "validation", "ceph-recovery.json")) as f:
        rec = json.load(f)
    for c in rec["comparisons"]:
        head = "| Ceph %s (source %s) | recovery, %s |" % (c["system"], c["source"], c["setting"])
        if not any(r.startswith(head) for r in rows):
            missing.append(c["name"])
    if any("no reason given" in r or "stale outside_tolerance_reason" in r for r in rows):
        return "docs/validation.md's table has a comparison outside tolerance without a reason"
    if missing:
        return ("not in docs/validation.md's table (run scripts/validation_table.py --write): " +
                ", ".join(missing))
    print("docs/validation.md lists every comparison (%d rows)" % len(rows))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--granary", default=os.path.join(ROOT, "build", "cli", "granary"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--results")
    ap.add_argument("--check-listed", action="store_true")
    ap.add_argument("--from-results", help="render the table from a --results file of an "
                    "earlier run (no runs; reasons and tolerances re-read from the data files)")
    a = ap.parse_args()
    if a.check_listed:
        sys.exit(check_listed())
    if a.only and (a.write or a.check):
        ap.error("--only makes a partial table: not with --write or --check")
    data = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "validation", "mlperf-v1.0-*.json")))
    with open(os.path.join(ROOT, "tests", "data", "validation", "ceph-recovery.json")) as f:
        rec = json.load(f)
    data = [p for p in data if a.only in p]
    comps = [c for c in rec["comparisons"] if a.only in c["scenario"] or a.only in c["name"]]
    if a.from_results:
        mlperf, recovery = rerender(a.from_results, rec)
    else:
        with tempfile.TemporaryDirectory() as tmp, \
                concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            m = [pool.submit(mlperf_row, a.granary, p, tmp) for p in data]
            r = [pool.submit(recovery_row, a.granary, c, rec["tolerance"], tmp)
                 for c in comps]
            mlperf = [x.result() for x in m]
            recovery = [x.result() for x in r]
    text = table(mlperf, recovery)
    if a.results:
        with open(a.results, "w") as f:
            json.dump({"mlperf": mlperf, "recovery": recovery}, f, indent=2)
    sys.stdout.write(text)
    for row in mlperf + recovery:
        sys.stderr.write("%s: %.1f s\n" % (row["data"], row["seconds"]))
    failed = [row["data"] for row in mlperf + recovery if row["reason"] is None]
    if a.write or a.check:
        with open(DOC) as f:
            doc = f.read()
        i, j = doc.find(BEGIN), doc.find(END)
        if i < 0 or j < i:
            sys.exit("docs/validation.md has no table markers")
        new = doc[:i + len(BEGIN)] + "\n" + text + doc[j:]
        if a.check and new != doc:
            sys.exit("docs/validation.md's table is not what the code gives now: run "
                     "scripts/validation_table.py --write (make validation-table)")
        if a.write:
            with open(DOC, "w") as f:
                f.write(new)
    if failed:
        sys.exit("outside tolerance without an outside_tolerance_reason: " + ", ".join(failed))


if __name__ == "__main__":
    main()
