#!/usr/bin/python3
"""CLI tests of `tbench run --shard I/N` and `tbench merge`, printed as TAP.

Usage: test_cli_shard.py PATH/TO/tbench   (run from the repository root,
with Debian's /usr/bin/python3: jsonschema)

The central check: the merged file of a 3-shard run holds the same set of
case records as an unsharded run of the same config, timings aside (the
fields a measurement changes: stats, throughput, counters, timing,
roofline; and host/shard, which say where a case ran).  Then every
refusal of merge, each made by editing one field of a real shard file,
and compare, history, export, plot and report on the merged file.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-shard-")

# Unequal sizes, so the cost model has something to balance; cuda cases
# are "unavailable" on a machine without a GPU and still planned.
CONFIG = """// shard tests
{
  "name": "shardtest",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 5, "max_samples": 40,
              "ci_target": 0.05, "max_time_s": 0.05, "rounds": 2},
  "dtypes": ["f32", "f64"],
  "backends": ["cpu", "cuda"],
  "ops": [
    {"op": "add", "shapes": [[7, 13], [[3, 1, 5], [1, 4, 5]], [300, 300]]},
    {"op": "sum", "shapes": [[33, 5]], "params": [{}, {"axis": 0}]},
    {"op": "matmul", "shapes": [[[5, 7], [7, 3]], [64, 64]]},
    {"op": "relu", "shapes": [[1000]]},
    {"op": "log_softmax", "shapes": [[4, 10]]}
  ]
}
"""

TIMING = ("stats", "throughput", "counters", "timing", "roofline", "host",
          "shard")


def path(*p):
    return os.path.join(TMP, *p)


def write_text(name, text):
    with open(path(name), "w", encoding="utf-8") as f:
        f.write(text)
    return path(name)


def tb(*args, timeout=300):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=TMP)


def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def dump(doc, name):
    os.makedirs(os.path.dirname(path(name)), exist_ok=True)
    with open(path(name), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return path(name)


def expect_refusal(p, *needles, out=None):
    """exit 2, one line naming what is wrong, nothing written at out."""
    expect(p.returncode == 2, f"exit {p.returncode}, want 2: {p.stderr}")
    lines = [l for l in p.stderr.splitlines()
             if l.strip() and not l.startswith("Try 'tbench --help'")]
    expect(len(lines) == 1, f"want one line, got: {p.stderr}")
    expect(lines[0].startswith("tbench: "), f"bad message: {lines[0]}")
    for n in needles:
        expect(n in lines[0], f"'{n}' not in: {lines[0]}")
    if out:
        expect(not os.path.exists(out), f"{out} written by a refused merge")


CFG = write_text("shard.json", CONFIG)
N = 3
STATE = {}


def setup():
    full = tb("run", CFG, "-q", "-o", "full")
    STATE["full"] = full
    STATE["shards"] = [tb("run", CFG, "-q", "--shard", f"{i}/{N}", "-o",
                          f"s{i}") for i in range(1, N + 1)]


def shard_doc(i):
    return load(path(f"s{i}", "results.json"))


def merge(*args):
    return tb("merge", *args)


@case("unsharded run and 3 shards exit 0; every file valid against the schema")
def _():
    setup()
    expect(STATE["full"].returncode == 0, STATE["full"].stderr)
    for i, p in enumerate(STATE["shards"], 1):
        expect(p.returncode == 0, f"shard {i}: {p.stderr}")
        doc = shard_doc(i)
        jsonschema.validate(doc, SCHEMA)
        sh = doc["shard"]
        expect(sh["index"] == i and sh["count"] == N, f"shard {sh}")
        expect(sh["cases"] == len(doc["cases"]), f"{sh} vs records")
        for c in doc["cases"]:
            expect(c["shard"]["index"] == i and c["shard"]["count"] == N,
                   f"case shard {c['shard']}")
            expect(c["host"] == doc["env"]["hostname"], f"host {c['host']}")
    full = load(path("full", "results.json"))
    jsonschema.validate(full, SCHEMA)
    expect("shard" not in full, "an unsharded run has no top-level shard")
    expect(all(c["shard"] is None and c["host"] == full["env"]["hostname"]
               for c in full["cases"]), "unsharded records: shard null")


@case("shards partition the plan: each case in one shard, plan_index = "
      "its position in the unsharded run, same digest everywhere")
def _():
    full = load(path("full", "results.json"))
    ids = [c["id"] for c in full["cases"]]
    seen = {}
    for i in range(1, N + 1):
        doc = shard_doc(i)
        expect(doc["shard"]["plan_cases"] == len(ids), "plan_cases")
        expect(doc["shard"]["plan_digest"] ==
               shard_doc(1)["shard"]["plan_digest"], "digests differ")
        idx = [c["shard"]["plan_index"] for c in doc["cases"]]
        expect(idx == sorted(idx), f"shard {i} not in plan order: {idx}")
        for c in doc["cases"]:
            expect(c["id"] not in seen, f"{c['id']} in two shards")
            seen[c["id"]] = i
            expect(ids[c["shard"]["plan_index"]] == c["id"],
                   f"plan_index of {c['id']}")
    expect(set(seen) == set(ids), f"missing: {set(ids) - set(seen)}")
    sizes = [shard_doc(i)["shard"]["cases"] for i in range(1, N + 1)]
    expect(max(sizes) - min(sizes) <= 2, f"unbalanced counts {sizes}")


@case("--shard is deterministic: the same shard run again picks the same "
      "cases")
def _():
    p = tb("run", CFG, "-q", "--shard", f"2/{N}", "-o", "s2-again")
    expect(p.returncode == 0, p.stderr)
    a = [c["id"] for c in shard_doc(2)["cases"]]
    b = [c["id"] for c in load(path("s2-again", "results.json"))["cases"]]
    expect(a == b, f"{a} != {b}")


@case("merge of 3 shards == unsharded run: same case records, timings "
      "aside, in plan order; summary and merge object right")
def _():
    # the shards given out of order, as folders and as a file
    p = merge(f"s3", path("s1", "results.json"), "s2", "-o", "merged.json")
    expect(p.returncode == 0, p.stderr)
    expect("merged 3 shards" in p.stdout, p.stdout)
    m = load(path("merged.json"))
    jsonschema.validate(m, SCHEMA)
    full = load(path("full", "results.json"))

    def strip(c):
        return {k: v for k, v in c.items() if k not in TIMING}
    expect([c["id"] for c in m["cases"]] == [c["id"] for c in full["cases"]],
           "merged cases not in plan order")
    for a, b in zip(full["cases"], m["cases"]):
        expect(strip(a) == strip(b),
               f"{a['id']}: {json.dumps(strip(a))} != {json.dumps(strip(b))}")
        expect(set(a) == set(b), f"{a['id']}: fields differ")
    expect(m["summary"] == full["summary"], f"{m['summary']}")
    expect(m["complete"] is True and "shard" not in m, "merged top level")
    expect(m["config"] == shard_doc(1)["config"], "config")
    mg = m["merge"]
    expect([s["index"] for s in mg["shards"]] == [1, 2, 3], f"{mg}")
    expect(mg["plan_cases"] == len(full["cases"]) and not mg["mixed_hosts"],
           f"{mg}")
    # each record is the shard's record, unchanged
    for i in range(1, N + 1):
        for c in shard_doc(i)["cases"]:
            expect(m["cases"][c["shard"]["plan_index"]] == c,
                   f"{c['id']} changed by the merge")


@case("merge -o DIR/ writes DIR/results.json (no DIR when refused), -o "
      "NEW/SUB/FILE creates its folders; every command reads it")
def _():
    p = merge("s1", "s3", "-o", "mdir/")
    expect(p.returncode == 2 and not os.path.exists(path("mdir")),
           "a refused merge -o DIR/ left DIR")
    p = merge("s1", "s2", "s3", "-o", "mdir/")
    expect(p.returncode == 0, p.stderr)
    expect(os.path.exists(path("mdir", "results.json")), "no mdir/results.json")
    # missing folders of -o FILE are created, as run and report do
    p = merge("s1", "s2", "s3", "-o", "new/sub/m.json")
    expect(p.returncode == 0 and os.path.exists(path("new", "sub", "m.json")),
           f"merge -o new/sub/m.json: {p.returncode} {p.stderr}")
    p = tb("compare", "full", "mdir")
    expect(p.returncode in (0, 1), f"compare: {p.returncode} {p.stderr}")
    expect("regressed" in p.stdout or "no change" in p.stdout or
           "improved" in p.stdout, p.stdout[:500])
    p = tb("compare", "mdir", "full", "--format", "json")
    expect(p.returncode in (0, 1), f"compare json: {p.stderr}")
    json.loads(p.stdout)
    p = tb("history", "full", "mdir", "--format", "json")
    expect(p.returncode == 0, f"history: {p.stderr}")
    for fmt in ("gbench", "bmf", "gab"):
        p = tb("export", "mdir", "--format", fmt)
        expect(p.returncode == 0, f"export {fmt}: {p.stderr}")
        json.loads(p.stdout)
    p = tb("report", "mdir", "-o", "rep/R.md", "--no-charts", "-b", "full")
    expect(p.returncode == 0, f"report: {p.stderr}")
    expect(os.path.getsize(path("rep", "R.md")) > 0, "empty report")
    p = tb("plot", "mdir", "-o", "charts", "--no-render")
    expect(p.returncode == 0, f"plot: {p.stderr}")
    expect(any(n.endswith(".gp") for n in os.listdir(path("charts"))),
           "no chart script")


def edited(i, name, fn):
    """A copy of shard i's file with fn(doc) applied, as name/results.json."""
    doc = shard_doc(i)
    fn(doc)
    return dump(doc, os.path.join(name, "results.json"))


@case("--list-cases --shard I/N prints that shard's cases, in plan order")
def _():
    whole = tb("run", CFG, "--list-cases")
    expect(whole.returncode == 0, whole.stderr)
    ids = whole.stdout.split()
    got = []
    for i in range(1, N + 1):
        p = tb("run", CFG, "--list-cases", "--shard", f"{i}/{N}")
        expect(p.returncode == 0, p.stderr)
        mine = p.stdout.split()
        recorded = [c["id"] for c in shard_doc(i)["cases"]]
        expect(mine == recorded, f"shard {i}/{N} lists {mine}, "
               f"ran {recorded}")
        got += mine
    expect(sorted(got) == sorted(ids) and len(ids) > len(mine),
           "the shards' lists are not a partition of the plan")


@case("merge refuses a missing shard, naming it")
def _():
    p = merge("s1", "s3", "-o", "x1.json")
    expect_refusal(p, "shard 2/3 is missing", out=path("x1.json"))


@case("merge refuses a shard given twice")
def _():
    p = merge("s1", "s2", "s2-again", "s3", "-o", "x2.json")
    expect_refusal(p, "shard 2/3 given twice", out=path("x2.json"))


@case("merge refuses an unsharded file and a shard of another count")
def _():
    p = merge("s1", "s2", "full", "-o", "x3.json")
    expect_refusal(p, "full/results.json", "not a shard", out=path("x3.json"))
    other = edited(3, "count4", lambda d: d["shard"].update(count=4))
    p = merge("s1", "s2", other, "-o", "x3.json")
    expect_refusal(p, "shard 3/4", "not shards of one run",
                   out=path("x3.json"))


@case("merge refuses another config text, commit or build")
def _():
    def cfg(d):
        d["config"][0]["text"] += "\n// edited"
    p = merge("s1", "s2", edited(3, "cfg", cfg), "-o", "x4.json")
    expect_refusal(p, "shard 3/3 ran another config", out=path("x4.json"))

    def commit(d):
        d["env"]["build"]["git_commit"] = "0123456789ab"
    p = merge("s1", edited(2, "commit", commit), "s3", "-o", "x4.json")
    expect_refusal(p, "shard 2/3 ran tbench commit 0123456789ab",
                   out=path("x4.json"))

    def build(d):
        d["env"]["build"]["c_args"] = "-O0"
    p = merge("s1", edited(2, "build", build), "s3", "-o", "x4.json")
    expect_refusal(p, "another build", "c_args", out=path("x4.json"))


@case("merge refuses a shard that planned other cases (digest)")
def _():
    p = tb("run", CFG, "-q", "--shard", "3/3", "-x", "relu*", "-o", "sx")
    expect(p.returncode == 0, p.stderr)
    p = merge("s1", "s2", "sx", "-o", "x5.json")
    expect_refusal(p, "shard 3/3 planned other cases", out=path("x5.json"))


@case("merge refuses a shard that did not finish or misses cases")
def _():
    p = merge("s1", edited(2, "incomplete",
                           lambda d: d.update(complete=False)), "s3",
              "-o", "x6.json")
    expect_refusal(p, "shard 2/3 did not finish", out=path("x6.json"))

    def drop(d):
        d["cases"].pop()
    p = merge("s1", edited(2, "short", drop), "s3", "-o", "x6.json")
    expect_refusal(p, "shard 2/3 has", "its plan gave it",
                   out=path("x6.json"))


@case("merge refuses a case recorded by two shards")
def _():
    extra = copy.deepcopy(shard_doc(1)["cases"][0])

    def dup(d):
        extra["shard"] = d["cases"][0]["shard"]
        d["cases"][0] = extra
    p = merge("s1", edited(2, "dupcase", dup), "s3", "-o", "x7.json")
    expect_refusal(p, f"'{extra['id']}'", "recorded twice",
                   out=path("x7.json"))


@case("merge refuses a record of another config (the ids in plan order "
      "must give the plan_digest), a renamed id and a record whose fields "
      "contradict its id")
def _():
    other = write_text("other.json", """{"name": "other",
      "warmup": {"min_time_ms": 1, "min_iters": 1},
      "measure": {"sample_time_ms": 0.2, "min_samples": 3,
                  "max_samples": 10, "max_time_s": 0.02},
      "ops": [{"op": "neg", "shapes": [[17]]}]}""")
    p = tb("run", other, "-q", "-o", "other")
    expect(p.returncode == 0, p.stderr)
    foreign = load(path("other", "results.json"))["cases"][0]

    def swap(d):
        foreign["shard"] = d["cases"][0]["shard"]
        d["cases"][0] = foreign
    p = merge("s1", edited(2, "foreign", swap), "s3", "-o", "x9.json")
    expect_refusal(p, "not one of the plan's cases", out=path("x9.json"))

    def rename(d):
        d["cases"][0]["id"] += "-renamed"
    p = merge("s1", edited(2, "renamed", rename), "s3", "-o", "x9.json")
    expect_refusal(p, "-renamed", "the id does not spell the record",
                   out=path("x9.json"))

    def dtype(d):
        c = d["cases"][0]
        c["dtype"] = "f64" if c["dtype"] == "f32" else "f32"
    p = merge("s1", edited(2, "dtype", dtype), "s3", "-o", "x9.json")
    expect_refusal(p, "the id does not spell the record",
                   out=path("x9.json"))


def fnv1a_digest(ids):
    """tb_plan_digest's rule: FNV-1a 64 over each id and a newline."""
    h = 0xcbf29ce484222325
    for i in ids:
        for byte in (i + "\n").encode():
            h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return f"{h:016x}"


@case("merge builds the plan again from the recorded configs and "
      "selection: shards whose records and digest were both forged, or "
      "whose recorded selection was edited, are refused; a filtered run "
      "merges")
def _():
    docs = [shard_doc(i) for i in range(1, N + 1)]
    expect(all(d["shard"]["selection"] == {"filters": [], "excludes": [],
                                            "backends": []} for d in docs),
           docs[0]["shard"])
    # a record swapped for another op's, and every shard's digest made to
    # agree with the forged ids: the old checks pass, the rebuild does not
    other = write_text("other2.json", """{"name": "other2",
      "warmup": {"min_time_ms": 1, "min_iters": 1},
      "measure": {"sample_time_ms": 0.2, "min_samples": 3,
                  "max_samples": 10, "max_time_s": 0.02},
      "ops": [{"op": "neg", "shapes": [[17]]}]}""")
    p = tb("run", other, "-q", "-o", "other2")
    expect(p.returncode == 0, p.stderr)
    foreign = load(path("other2", "results.json"))["cases"][0]
    foreign["shard"] = docs[1]["cases"][0]["shard"]
    docs[1]["cases"][0] = foreign
    ids = sorted(((c["shard"]["plan_index"], c["id"]) for d in docs
                  for c in d["cases"]))
    dg = fnv1a_digest([i for _, i in ids])
    for k, d in enumerate(docs):
        d["shard"]["plan_digest"] = dg
        dump(d, os.path.join(f"forged{k + 1}", "results.json"))
    p = merge("forged1", "forged2", "forged3", "-o", "x10.json")
    expect_refusal(p, "the plan built again from its recorded configs",
                   out=path("x10.json"))
    # a filtered sharded run merges; its selection edited does not
    for i in (1, 2):
        p = tb("run", CFG, "-q", "--shard", f"{i}/2", "-f", "add*", "-x",
               "*/f64/*", "-b", "cpu", "-o", f"f{i}")
        expect(p.returncode == 0, p.stderr)
    sel = load(path("f1", "results.json"))["shard"]["selection"]
    expect(sel == {"filters": ["add*"], "excludes": ["*/f64/*"],
                   "backends": ["cpu"]}, sel)
    p = merge("f1", "f2", "-o", "f.json")
    expect(p.returncode == 0, p.stderr)
    for i in (1, 2):
        d = load(path(f"f{i}", "results.json"))
        d["shard"]["selection"]["excludes"] = []
        dump(d, os.path.join(f"fe{i}", "results.json"))
    p = merge("fe1", "fe2", "-o", "x11.json")
    expect_refusal(p, "the plan built again", out=path("x11.json"))


@case("merge counts the summary from the records, never copies a shard's")
def _():
    def lie(d):
        d["summary"]["ok"] += 100
        d["summary"]["cases"] += 100
    p = merge("s1", edited(2, "lying", lie), "s3", "-o", "x10.json")
    expect(p.returncode == 0, p.stderr)
    m = load(path("x10.json"))
    jsonschema.validate(m, SCHEMA)
    want = {"cases": len(m["cases"])}
    for c in m["cases"]:
        want[c["status"]] = want.get(c["status"], 0) + 1
    got = {k: v for k, v in m["summary"].items() if v or k == "cases"}
    expect(got == want, f"summary {m['summary']}, records say {want}")


@case("merge refuses shards run with other measure overrides")
def _():
    p = tb("run", CFG, "-q", "--shard", "3/3", "--rounds", "1", "-o",
           "s3-rounds")
    expect(p.returncode == 0, p.stderr)
    p = merge("s1", "s2", "s3-rounds", "-o", "x11.json")
    expect_refusal(p, "shard 3/3 ran another config", "measure",
                   out=path("x11.json"))


@case("merge refuses mixed hosts unless --allow-mixed-hosts; each case "
      "keeps its host")
def _():
    def host(d):
        d["env"]["hostname"] = "other-node"
        for c in d["cases"]:
            c["host"] = "other-node"
    other = edited(2, "host", host)
    p = merge("s1", other, "s3", "-o", "x8.json")
    expect_refusal(p, "other-node", "mixed machines", "--allow-mixed-hosts",
                   out=path("x8.json"))
    p = merge("s1", other, "s3", "-o", "x8.json", "--allow-mixed-hosts")
    expect(p.returncode == 0, p.stderr)
    m = load(path("x8.json"))
    jsonschema.validate(m, SCHEMA)
    expect(m["merge"]["mixed_hosts"] is True, "mixed_hosts not set")
    hosts = {c["host"] for c in m["cases"]}
    expect("other-node" in hosts and len(hosts) == 2, f"hosts {hosts}")


@case("merge and --shard usage errors: one line, exit 2")
def _():
    expect_refusal(merge("s1"), "-o OUT is required")
    expect_refusal(merge("-o", "y.json"), "no shard result file")
    expect_refusal(merge("s1", "nope", "-o", "y.json"), "nope")
    before = open(path("s1", "results.json"), "rb").read()
    expect_refusal(merge("s1", "s2", "s3", "-o", "s1"), "would replace it")
    expect(open(path("s1", "results.json"), "rb").read() == before,
           "shard 1 changed")
    for bad, needle in (("0/3", "1 <= I <= N"), ("4/3", "1 <= I <= N"),
                        ("1/x", "expected I/N"), ("2", "expected I/N"),
                        ("1/3/", "expected I/N"), ("-1/3", "expected I/N"),
                        ("1/999999", "at most")):
        p = tb("run", CFG, "--shard", bad, "-o", "never")
        expect_refusal(p, "--shard", needle, out=path("never"))
    p = tb("run", CFG, "--shard", "1/1000", "-o", "never")
    expect_refusal(p, "the plan has only", out=path("never"))


if __name__ == "__main__":
    sys.exit(run_cases())
