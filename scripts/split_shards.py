#!/usr/bin/env python3
"""Split a finished run's result file into the shard files of that run.

    split_shards.py RESULTS K OUTDIR

RESULTS: the results.json of a run without --shard; OUTDIR/s1 .. sK get
each a results.json that `tbench merge` accepts as shard I/K of that run:
the cases in K consecutive slices of the file's order (the plan's order),
each record's "shard" {index, count, plan_index}, the file's "shard"
object (cases, plan_cases, the plan digest of tb_plan_digest's rule:
FNV-1a 64 of every id and a newline, in plan order; an empty selection)
and its summary counted again.  The slices are not the cost-balanced
ones run --shard would choose (merge never asks which case a shard ran,
only that every case of the plan is held once, tagged and in order).
For scripts/scale_bench.sh --split, where running the shards of a
large matrix would take as long as the run again.  Written as compact
JSON (the loader reads any layout).
"""
import json
import os
import sys

STATUSES = ["ok", "unsupported", "unavailable", "failed-check", "error",
            "skipped", "crashed", "timeout"]


def fnv1a(h, s):
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def main(argv):
    if len(argv) != 4 or not argv[2].isdigit() or int(argv[2]) < 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, k, out = argv[1], int(argv[2]), argv[3]
    with open(src) as f:
        doc = json.load(f)
    if doc.get("shard"):
        print(f"split_shards.py: {src} is already a shard", file=sys.stderr)
        return 2
    cases = doc["cases"]
    n = len(cases)
    h = 14695981039346656037
    for c in cases:
        h = fnv1a(fnv1a(h, c["id"]), "\n")
    digest = "%016x" % h
    at = 0
    for i in range(1, k + 1):
        part = cases[at:at + n * i // k - n * (i - 1) // k]
        for j, c in enumerate(part):
            c["shard"] = {"index": i, "count": k, "plan_index": at + j}
        at += len(part)
        summary = {"cases": len(part)}
        for s in STATUSES:
            summary[s] = sum(1 for c in part if c["status"] == s)
        shard = {"index": i, "count": k, "cases": len(part),
                 "plan_cases": n, "plan_digest": digest, "rule": "lpt",
                 "selection": {"filters": [], "excludes": [],
                               "backends": []}}
        d = dict(doc, cases=part, summary=summary, shard=shard)
        os.makedirs(os.path.join(out, "s%d" % i), exist_ok=True)
        with open(os.path.join(out, "s%d" % i, "results.json"), "w") as f:
            json.dump(d, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
