#!/usr/bin/env python3
"""Generates the CRUSH comparison corpus in tests/data/crush/generated/ with Ceph's crushtool.

Each case directory gets:
  map.txt      canonical text map (crushtool -c, then crushtool -d)
  args.txt     one crushtool --test argument list per line (without -i)
  expected.txt crushtool's stdout for each argument line, concatenated
The corpus covers every bucket algorithm, every tunables profile, rule shapes (choose and
chooseleaf, firstn and indep, nested choose, several take/emit blocks, negative counts,
set_* steps), device classes, choose_args weight sets and a 10,000-OSD map. The maps are
made here from a fixed seed, so re-running the script reproduces the corpus exactly (given
the same crushtool). Usage: tests/crush/make_corpus.py [OUTDIR]
"""
import os
import random
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data", "crush", "generated")

PROFILES = {
    "legacy": dict(choose_local_tries=2, choose_local_fallback_tries=5, choose_total_tries=19,
                   chooseleaf_descend_once=0, chooseleaf_vary_r=0, chooseleaf_stable=0,
                   straw_calc_version=0, allowed_bucket_algs=22),
    "bobtail": dict(choose_local_tries=0, choose_local_fallback_tries=0, choose_total_tries=50,
                    chooseleaf_descend_once=1, chooseleaf_vary_r=0, chooseleaf_stable=0,
                    straw_calc_version=0, allowed_bucket_algs=22),
    "firefly": dict(choose_local_tries=0, choose_local_fallback_tries=0, choose_total_tries=50,
                    chooseleaf_descend_once=1, chooseleaf_vary_r=1, chooseleaf_stable=0,
                    straw_calc_version=1, allowed_bucket_algs=22),
    "hammer": dict(choose_local_tries=0, choose_local_fallback_tries=0, choose_total_tries=50,
                   chooseleaf_descend_once=1, chooseleaf_vary_r=1, chooseleaf_stable=0,
                   straw_calc_version=1, allowed_bucket_algs=54),
    "jewel": dict(choose_local_tries=0, choose_local_fallback_tries=0, choose_total_tries=50,
                  chooseleaf_descend_once=1, chooseleaf_vary_r=1, chooseleaf_stable=1,
                  straw_calc_version=1, allowed_bucket_algs=54),
}
TYPES = ["osd", "host", "chassis", "rack", "row", "pdu", "pod", "room", "datacenter", "zone",
         "region", "root"]


class MapWriter:
    def __init__(self, profile="jewel", tunables=None):
        self.lines = []
        t = dict(PROFILES[profile])
        t.update(tunables or {})
        for k, v in t.items():
            self.lines.append("tunable %s %d" % (k, v))
        self.devices = []
        self.buckets = []
        self.rules = []
        self.extra = []
        self.next_bucket = -1

    def device(self, i, cls=None):
        self.devices.append("device %d osd.%d%s" % (i, i, " class " + cls if cls else ""))
        return "osd.%d" % i

    def bucket(self, typ, name, alg, items, class_ids=()):
        bid = self.next_bucket
        self.next_bucket -= 1
        body = ["%s %s {" % (typ, name), "\tid %d" % bid]
        for cls, cid in class_ids:
            body.append("\tid %d class %s" % (cid, cls))
        body += ["\talg %s" % alg, "\thash 0"]
        for it, w in items:
            body.append("\titem %s weight %.3f" % (it, w) if w is not None else "\titem %s" % it)
        body.append("}")
        self.buckets.append("\n".join(body))
        return name

    def rule(self, rid, name, typ, steps):
        body = ["rule %s {" % name, "\tid %d" % rid, "\ttype %s" % typ, "\tmin_size 1",
                "\tmax_size 20"] + ["\tstep " + s for s in steps] + ["}"]
        self.rules.append("\n".join(body))

    def text(self):
        types = ["type %d %s" % (i, t) for i, t in enumerate(TYPES)]
        return "\n".join(self.lines + self.devices + types + self.buckets + self.rules +
                         self.extra) + "\n"


def hosts_tree(w, rng, n_racks, hosts_per_rack, osds_per_host, host_alg, rack_alg="straw2",
               root_alg="straw2", weights=(1.0,), classes=None, zero_every=0, uniform_w=None):
    """Builds root default -> racks -> hosts -> osds. Returns the root name."""
    osd = 0
    racks = []
    for r in range(n_racks):
        hosts = []
        for h in range(hosts_per_rack):
            items = []
            for _ in range(osds_per_host):
                cls = classes[osd % len(classes)] if classes else None
                name = w.device(osd, cls)
                if host_alg == "uniform":
                    wt = uniform_w if uniform_w is not None else 1.0
                else:
                    wt = rng.choice(weights)
                    if zero_every and osd % zero_every == zero_every - 1:
                        wt = 0.0
                items.append((name, wt))
                osd += 1
            hosts.append((w.bucket("host", "host%d-%d" % (r, h), host_alg, items), None))
        racks.append((w.bucket("rack", "rack%d" % r, rack_alg, hosts), None))
    return w.bucket("root", "default", root_alg, racks)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def emit_case(name, text, arg_lines):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "gen.txt")
    with open(src, "w") as f:
        f.write(text)
    binp = os.path.join(d, "map.bin")
    txt = os.path.join(d, "map.txt")
    # Canonicalise: decompile, recompile, until the text is a fixed point (the first
    # decompile prints weights rounded to 3 decimals, so its compile differs slightly).
    run(["crushtool", "-c", src, "-o", binp])
    run(["crushtool", "-d", binp, "-o", txt])
    for _ in range(3):
        run(["crushtool", "-c", txt, "-o", binp])
        again = run(["crushtool", "-d", binp]).stdout
        if again == open(txt, "rb").read():
            break
        with open(txt, "wb") as f:
            f.write(again)
    else:
        raise SystemExit("map text of %s does not reach a fixed point" % name)
    expected = b""
    for args in arg_lines:
        expected += run(["crushtool", "-i", binp, "--test"] + args.split()).stdout
    with open(os.path.join(d, "args.txt"), "w") as f:
        f.write("\n".join(arg_lines) + "\n")
    with open(os.path.join(d, "expected.txt"), "wb") as f:
        f.write(expected)
    os.remove(src)
    os.remove(binp)
    print("%-28s %8d bytes expected" % (name, len(expected)))


def main():
    rng = random.Random(20261202)
    mixed = (1.819, 3.638, 0.873, 7.277)

    # ---- every bucket algorithm, under legacy and jewel tunables
    for alg in ("uniform", "list", "tree", "straw", "straw2"):
        for prof in ("legacy", "jewel"):
            w = MapWriter(prof)
            root = hosts_tree(w, rng, 3, 3, 5 if alg == "tree" else 4, alg, rack_alg=alg if alg != "uniform" else "straw2",
                              root_alg=alg if alg not in ("uniform",) else "list", weights=mixed,
                              zero_every=7 if alg in ("straw", "straw2", "list") else 0)
            w.rule(0, "rep_host", "replicated", ["take " + root, "chooseleaf firstn 0 type host", "emit"])
            w.rule(1, "ec_host", "erasure", ["set_chooseleaf_tries 5", "set_choose_tries 100", "take " + root,
                                              "chooseleaf indep 0 type host", "emit"])
            w.rule(2, "osd_only", "replicated", ["take " + root, "choose firstn 0 type osd", "emit"])
            emit_case("alg-%s-%s" % (alg, prof), w.text(), [
                "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 --show-mappings",
                "--rule 1 --num-rep 6 --min-x 0 --max-x 511 --weight 2 0 --weight 5 0.5 --show-mappings",
                "--rule 2 --num-rep 4 --min-x 0 --max-x 511 --weight 1 0.25 --show-mappings",
                "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 --show-utilization --show-statistics",
            ])

    # straw with straw_calc_version 0 and 1 on duplicate and zero weights
    for scv in (0, 1):
        w = MapWriter("hammer", {"straw_calc_version": scv})
        root = hosts_tree(w, rng, 2, 4, 6, "straw", rack_alg="straw", root_alg="straw",
                          weights=(1.0, 1.0, 2.0, 0.5, 3.638), zero_every=5)
        w.rule(0, "rep", "replicated", ["take " + root, "chooseleaf firstn 0 type host", "emit"])
        emit_case("straw-calc-v%d" % scv, w.text(), [
            "--rule 0 --num-rep 3 --min-x 0 --max-x 2047 --show-mappings"])

    # ---- every tunables profile, with out and partially reweighted devices
    for prof in PROFILES:
        w = MapWriter(prof)
        root = hosts_tree(w, rng, 4, 3, 4, "straw2" if prof in ("hammer", "jewel") else "straw",
                          rack_alg="straw2" if prof in ("hammer", "jewel") else "straw",
                          root_alg="straw2" if prof in ("hammer", "jewel") else "straw", weights=mixed)
        w.rule(0, "rack_then_host", "replicated",
               ["take " + root, "choose firstn 0 type rack", "chooseleaf firstn 1 type host", "emit"])
        w.rule(1, "leaf_host", "replicated", ["take " + root, "chooseleaf firstn 0 type host", "emit"])
        w.rule(2, "ec_rack", "erasure", ["set_chooseleaf_tries 5", "set_choose_tries 100", "take " + root,
                                         "choose indep 3 type rack", "chooseleaf indep 2 type host", "emit"])
        outs = " ".join("--weight %d 0" % o for o in (0, 1, 2, 3, 9, 17, 18, 30)) + " --weight 12 0.6 --weight 25 0.3"
        emit_case("tunables-%s" % prof, w.text(), [
            "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
            "--rule 1 --num-rep 4 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
            "--rule 2 --num-rep 6 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
            "--rule 1 --num-rep 3 --min-x 0 --max-x 1023 --pool-id 7 --show-mappings",
        ])

    # legacy local retries and the permutation fallback: many devices out in few hosts
    w = MapWriter("legacy")
    root = hosts_tree(w, rng, 1, 3, 12, "straw", rack_alg="straw", root_alg="straw", weights=(1.0, 2.0))
    w.rule(0, "leaf", "replicated", ["take " + root, "chooseleaf firstn 0 type host", "emit"])
    w.rule(1, "osds", "replicated", ["take " + root, "choose firstn 0 type osd", "emit"])
    w.rule(2, "local", "replicated", ["set_choose_local_tries 3", "set_choose_local_fallback_tries 2",
                                      "set_chooseleaf_vary_r 1", "take " + root, "chooseleaf firstn 0 type host", "emit"])
    outs = " ".join("--weight %d 0" % o for o in range(0, 36, 2) if o % 12 < 10)
    emit_case("legacy-fallback", w.text(), [
        "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
        "--rule 1 --num-rep 5 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
        "--rule 2 --num-rep 3 --min-x 0 --max-x 1023 %s --show-mappings" % outs,
    ])

    # ---- rule shapes: several take/emit blocks, negative counts, stable/vary_r steps
    w = MapWriter("jewel")
    root = hosts_tree(w, rng, 3, 4, 3, "straw2", weights=mixed)
    w.rule(0, "two_blocks", "replicated", ["take rack0", "chooseleaf firstn 1 type host", "emit",
                                           "take default", "chooseleaf firstn -1 type host", "emit"])
    w.rule(1, "neg_count", "replicated", ["take default", "choose firstn -1 type rack",
                                          "chooseleaf firstn 2 type host", "emit"])
    w.rule(2, "unstable", "replicated", ["set_chooseleaf_stable 0", "set_chooseleaf_vary_r 0",
                                         "take default", "chooseleaf firstn 0 type host", "emit"])
    w.rule(4, "indep_nested", "erasure", ["set_choose_tries 100", "take default", "choose indep 0 type rack",
                                          "choose indep 2 type host", "choose indep 1 type osd", "emit"])
    w.rule(5, "take_device", "replicated", ["take osd.3", "emit"])
    emit_case("rule-shapes", w.text(), [
        "--rule 0 --num-rep 4 --min-x 0 --max-x 1023 --weight 4 0 --show-mappings",
        "--rule 1 --num-rep 5 --min-x 0 --max-x 1023 --show-mappings",
        "--rule 2 --num-rep 3 --min-x 0 --max-x 1023 --weight 7 0 --weight 8 0.5 --show-mappings",
        "--rule 4 --num-rep 6 --min-x 0 --max-x 1023 --weight 0 0 --weight 13 0 --show-mappings",
        "--rule 5 --num-rep 2 --min-x 0 --max-x 15 --show-mappings",
        "--num-rep 3 --min-x 0 --max-x 63 --show-mappings",
        "--min-x 0 --max-x 9 --show-mappings --show-statistics --show-bad-mappings",
    ])

    # ---- device classes: shadow hierarchies, class takes, explicit and allocated ids
    w = MapWriter("jewel")
    hosts_tree(w, rng, 3, 3, 6, "straw2", weights=mixed, classes=("hdd", "ssd", "hdd", "nvme", "hdd", "ssd"))
    # give the root explicit shadow ids for two classes; nvme ids and all host/rack shadows are allocated
    w.buckets[-1] = w.buckets[-1].replace("\tid -%d\n" % (len(w.buckets)),
                                          "\tid -%d\n\tid -100 class ssd\n\tid -101 class hdd\n" % (len(w.buckets)))
    w.rule(0, "ssd_hosts", "replicated", ["take default class ssd", "chooseleaf firstn 0 type host", "emit"])
    w.rule(1, "hdd_ec", "erasure", ["set_chooseleaf_tries 5", "take default class hdd",
                                    "chooseleaf indep 0 type host", "emit"])
    w.rule(2, "nvme_then_hdd", "replicated", ["take default class nvme", "chooseleaf firstn 1 type host", "emit",
                                              "take default class hdd", "chooseleaf firstn -1 type rack", "emit"])
    w.rule(3, "any", "replicated", ["take default", "chooseleaf firstn 0 type host", "emit"])
    emit_case("device-classes", w.text(), [
        "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 --show-mappings",
        "--rule 1 --num-rep 5 --min-x 0 --max-x 1023 --weight 0 0 --show-mappings",
        "--rule 2 --num-rep 3 --min-x 0 --max-x 1023 --show-mappings",
        "--rule 3 --num-rep 3 --min-x 0 --max-x 1023 --show-utilization",
    ])

    # ---- choose_args: weight sets with one and several positions, replacement ids
    w = MapWriter("jewel")
    root = hosts_tree(w, rng, 2, 3, 4, "straw2", weights=mixed)
    # buckets: hosts -1..-3 (rack0), rack0 = -4, hosts -5..-7, rack1 = -8, root = -9
    w.extra.append("choose_args 0 {\n {\n  bucket_id -9\n  weight_set [\n   [ 1.0 3.0 ]\n   [ 2.0 1.0 ]\n   [ 1.5 1.5 ]\n  ]\n }\n"
                   " {\n  bucket_id -1\n  weight_set [\n   [ 0.5 1.0 2.0 4.0 ]\n  ]\n  ids [ 100 101 102 103 ]\n }\n"
                   " {\n  bucket_id -4\n  ids [ -11 -12 -13 ]\n }\n}")
    w.extra.append("choose_args 18446744073709551615 {\n {\n  bucket_id -9\n  weight_set [\n   [ 3.0 1.0 ]\n  ]\n }\n}")
    w.rule(0, "rep", "replicated", ["take " + root, "chooseleaf firstn 0 type host", "emit"])
    w.rule(1, "ec", "erasure", ["take " + root, "chooseleaf indep 0 type host", "emit"])
    emit_case("choose-args", w.text(), [
        "--rule 0 --num-rep 3 --min-x 0 --max-x 1023 --show-mappings",
        "--rule 1 --num-rep 4 --min-x 0 --max-x 1023 --show-mappings",
    ])

    # ---- scale: 10,000 OSDs (20 racks x 25 hosts x 20 OSDs), mixed weights
    w = MapWriter("jewel")
    hosts_tree(w, rng, 20, 25, 20, "straw2", weights=(1.819, 3.638, 7.277))
    w.rule(0, "rep_host", "replicated", ["take default", "chooseleaf firstn 0 type host", "emit"])
    w.rule(1, "ec83_rack", "erasure", ["set_chooseleaf_tries 5", "set_choose_tries 100", "take default",
                                       "chooseleaf indep 0 type rack", "emit"])
    outs = " ".join("--weight %d 0" % o for o in range(7, 10000, 97))
    emit_case("scale-10000-osds", w.text(), [
        "--rule 0 --num-rep 3 --min-x 0 --max-x 4095 %s --show-mappings" % outs,
        "--rule 1 --num-rep 11 --min-x 0 --max-x 2047 %s --show-mappings" % outs,
    ])


if __name__ == "__main__":
    main()
