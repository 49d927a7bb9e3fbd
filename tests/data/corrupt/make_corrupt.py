#!/usr/bin/python3
"""Writes the corrupt result files of tests/test_cli_corrupt.py.

Each file is tests/data/report/mixed.json with one thing wrong (issue 15:
files that compare rejected but report and plot rendered, or crashed on).
expect.json maps each file to the start of the message every command
must print after "tbench: FILE: ".  The files are committed; run this
script again (from the repository root) only to change them.  They are
also seeds of the result-loader fuzzer (tests/fuzz/meson.build).
mixed.json has changed since most of them were written, so running it
rewrites them too: commit only the new files (and expect.json), keep the
others as committed.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "report", "mixed.json")

with open(BASE, encoding="utf-8") as f:
    TEXT = f.read()
DOC = json.loads(TEXT)
ID0 = DOC["cases"][0]["id"]
C0 = "cases[0] (%s): " % ID0

out = {}


def edit(name, want, fn):
    d = copy.deepcopy(DOC)
    fn(d)
    out[name] = (json.dumps(d), want)


def raw(name, want, body):
    out[name] = (body, want)


def setc(path, value, case=0):
    """A function that sets cases[case].PATH (dot separated) to value."""
    def fn(d):
        o = d["cases"][case]
        keys = path.split(".")
        for k in keys[:-1]:
            o = o[k]
        o[keys[-1]] = value
    return fn


raw("empty.json", "empty file, not a result file", "")
raw("blank.json", "only white space", " \n\t\n")
raw("nul.json", "corrupt: contains a NUL byte at offset 10",
    TEXT[:10] + "\0" + TEXT[10:])
raw("truncated.json", "truncated: ", TEXT[:len(TEXT) // 2])
raw("garbage.json", "corrupt: not valid JSON at line 1, column 1",
    "this is not JSON\n")
raw("array.json", "not a tbench result file (the JSON is not an object)",
    "[1, 2, 3]\n")
edit("noschema.json", 'not a tbench result file (no "schema" string',
     lambda d: d.pop("schema"))
edit("schema.json", 'schema is "tbench.results/0"',
     lambda d: d.__setitem__("schema", "tbench.results/0"))
edit("cases-object.json", '"cases": expected an array',
     lambda d: d.__setitem__("cases", {}))
edit("case-number.json", "cases[1]: expected an object",
     lambda d: d["cases"].__setitem__(1, 7))
edit("no-id.json", 'cases[0]: no "id" string', setc("id", 5))
edit("dup-id.json", "cases[1]: id '%s' already used by cases[0]" % ID0,
     setc("id", ID0, 1))
edit("status.json", C0 + 'unknown status "fine"', setc("status", "fine"))
edit("no-op.json", C0 + 'no "op" string', setc("op", ""))
edit("no-stats.json", C0 + "status is ok but stats is missing",
     lambda d: d["cases"][0].pop("stats"))
edit("n-samples.json", C0 + "stats.n is 3 but samples_ns has",
     setc("stats.n", 3))
# 1e999 parses as infinity: written by hand below
edit("median-negative.json", C0 + "stats.median_ns: expected a positive",
     setc("stats.median_ns", -5))
edit("median-ci.json", C0 + "stats: median_ns is outside",
     setc("stats.ci_high_ns", 1))
edit("sample-string.json", C0 + "stats.samples_ns[2]: expected a number",
     lambda d: d["cases"][0]["stats"]["samples_ns"].__setitem__(2, "x"))
edit("iters-zero.json", C0 + "stats.iters_per_sample: expected >= 1",
     setc("stats.iters_per_sample", 0))
edit("throughput.json", C0 + "throughput: expected an object of numbers",
     setc("throughput.gb_s", "fast"))
edit("counters.json", C0 + "counters: expected an object",
     setc("counters", [1, 2]))
edit("rounds-empty.json", C0 + "stats.round_medians_ns: expected a "
     "non-empty array", setc("stats.round_medians_ns", []))
# new checks (report and plot read these members)
edit("backend-params-array.json", C0 + "backend_params: not of the type",
     setc("backend_params", [1, 2]))
edit("backend-params-number.json", C0 + "backend_params: not of the type",
     setc("backend_params.threads", 1))
edit("params-array.json", C0 + "params: not of the type",
     setc("params", [1]))
edit("out-shapes.json", C0 + "out_shapes: not of the type",
     setc("out_shapes", [["x"]]))
edit("env-array.json", '"env": expected an object or null',
     lambda d: d.__setitem__("env", [1, 2]))
edit("ci-overflow.json", C0 + "stats: the CI [ci_low_ns, ci_high_ns] is "
     "not finite", lambda d: (setc("stats.ci_low_ns", 0)(d),
                              setc("stats.ci_high_ns", 1.7e308)(d),
                              setc("stats.median_ns", 1e-300)(d),
                              setc("stats.min_ns", 1e-300)(d)))
edit("min-negative.json", C0 + "stats.min_ns: expected a number >= 0",
     setc("stats.min_ns", -1))
edit("mad-string.json", C0 + "stats.mad_ns: expected a number or null",
     setc("stats.mad_ns", "x"))


def inf(name, key, want):
    """cases[0].stats.KEY (or a top-level path) written as 1e999."""
    d = copy.deepcopy(DOC)
    marker = 12345.678912345
    if key.startswith("env."):
        d["env"]["memory"]["total_bytes"] = marker
    else:
        d["cases"][0]["stats"][key] = marker
    body = json.dumps(d).replace(repr(marker), "1e999", 1)
    assert "1e999" in body
    out[name] = (body, want)


inf("median-inf.json", "median_ns",
    C0 + "stats.median_ns: expected a finite number, got inf")
inf("mad-inf.json", "mad_ns",
    C0 + "stats.mad_ns: expected a finite number, got inf")
inf("p95-inf.json", "p95_ns",
    C0 + "stats.p95_ns: expected a finite number, got inf")
inf("env-inf.json", "env.memory.total_bytes",
    "env.memory.total_bytes: expected a finite number, got inf")

# what docs/results.schema.json forbids beyond types (reliability
# review D11: files every reader accepted)
edit("sample-negative.json", C0 + "stats.samples_ns[0]: expected a number "
     ">= 0", lambda d: d["cases"][0]["stats"]["samples_ns"].__setitem__(
         0, -1e9))
edit("samples-zero.json", C0 + "stats.median_ns ", lambda d: d["cases"][0][
    "stats"].__setitem__("samples_ns", [0] * d["cases"][0]["stats"]["n"]))
edit("crashed-stats.json", C0 + "status is crashed but stats is not null",
     lambda d: (setc("status", "crashed")(d),
                setc("message", "worker killed by SIGSEGV (Segmentation "
                     "fault) during sampling")(d)))
edit("complete-string.json", '"complete": expected true or false',
     lambda d: d.__setitem__("complete", "yes"))
edit("model-negative.json", C0 + "model.flops: expected a number >= 0",
     setc("model.flops", -1000))
edit("model-bytes-negative.json", C0 + "model.bytes: expected a number >= 0",
     setc("model.bytes", -1))
# a byte that is not UTF-8 in an id (written through surrogateescape)
edit("id-utf8.json", "corrupt: invalid UTF-8 (byte 0xff) at line 1",
     setc("id", ID0 + "\udcff"))
out["id-utf8.json"] = (out["id-utf8.json"][0].replace("\\udcff", "\udcff"),
                       out["id-utf8.json"][1])

for name in os.listdir(HERE):
    if name.endswith(".json") and name != "expect.json":
        os.remove(os.path.join(HERE, name))
for name, (body, _) in out.items():
    with open(os.path.join(HERE, name), "w", encoding="utf-8",
              errors="surrogateescape") as f:
        f.write(body)
with open(os.path.join(HERE, "expect.json"), "w", encoding="utf-8") as f:
    json.dump({k: w for k, (_, w) in sorted(out.items())}, f, indent=1)
    f.write("\n")
print(f"{len(out)} files")
