#!/usr/bin/python3
"""CLI tests of the CUPTI counts in result files (issue 12): `tbench
show`, compare's exact device-counter regressions and the report's
launches saved, printed as TAP.

Usage: test_cli_cupti.py PATH/TO/tbench   (run from the repository root)

There is no GPU here, so one tiny real CPU run gives a template result
document (every case "cupti": null with the reason, which the first case
checks) and the GPU runs are synthesized from it: each case relabelled
as the cuda backend with a "cupti" object of known counts (add: 1
launch, no copy; log_softmax: 1 launch; log_softmax_unfused: 6 launches
of 5 kernels, the names and counts an H200 gave for short rows),
validated against docs/results.schema.json first.  Needs
Debian's python3-jsonschema: run with /usr/bin/python3.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-cupti-")

TINY = """{
  "name": "tinycupti",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 10, "max_samples": 30,
              "ci_target": 0.05, "max_time_s": 0.5},
  "dtypes": ["f32"],
  "backends": ["cpu"],
  "ops": [
    {"op": "add", "shapes": [[7, 13]]},
    {"op": "log_softmax", "shapes": [[4, 10]]},
    {"op": "log_softmax_unfused", "shapes": [[4, 10]]}
  ]
}
"""


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args, cwd=None):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def expect_exit(p, code):
    expect(p.returncode == code,
           f"exit {p.returncode}, want {code}\nstdout: {p.stdout[-2000:]}\n"
           f"stderr: {p.stderr[-2000:]}")


def expect_error(p, *needles):
    """Exit 2 with exactly one line on stderr containing every needle."""
    expect_exit(p, 2)
    lines = [l for l in p.stderr.splitlines() if l.strip()
             and not l.startswith("Try ")]
    expect(len(lines) == 1, f"want one error line, got: {p.stderr!r}")
    expect(lines[0].startswith("tbench: "), f"bad message: {lines[0]}")
    for n in needles:
        expect(n in lines[0], f"'{n}' not in: {lines[0]}")


CONFIG = write("tiny.json", TINY)
TEMPLATE_DIR = os.path.join(TMP, "template")
_template = None


def template():
    """The result document of one real run of TINY (made once)."""
    global _template
    if _template is None:
        p = run("run", CONFIG, "-o", TEMPLATE_DIR, "-q")
        expect_exit(p, 0)
        _template = json.load(open(os.path.join(TEMPLATE_DIR,
                                                "results.json")))
        expect(all(c["status"] == "ok" for c in _template["cases"]),
               "template run: not every case ok")
    return copy.deepcopy(_template)


def cupti(launches, kernels, allocs=0.0, h2d=0.0, memsets=0.0):
    """A cupti object; kernels: [(name, count, device_ns)]."""
    def d(n):
        return {"count": n, "bytes": 64.0 * n}
    return {"iterations": 10, "kernel_launches": launches,
            "memcpy": {"h2d": d(h2d), "d2h": d(0), "d2d": d(0),
                       "other": d(0)},
            "memsets": memsets, "memset_bytes": 0.0,
            "device_allocs": allocs, "device_alloc_bytes": 512.0 * allocs,
            "device_frees": allocs, "device_free_bytes": 512.0 * allocs,
            "kernels": [{"name": n, "count": c, "device_ns": t}
                        for n, c, t in kernels],
            "kernels_unlisted": 0.0}


# Kernel names and counts as CUPTI reported them on an NVIDIA H200
# (docs/perf-data/gpu/NVIDIA-H200/gpu.json: add 256x256, log_softmax and
# log_softmax_unfused 256x10, whose sum takes one pass; on rows of 513
# it takes two, and the composition 7 launches); the times are made up.
ADD_K = "void k_binary_vec<float, B_add<float> >(float const*, float " \
    "const*, float*, long, B_add<float>)"
LSM_K = "void k_softmax_rows<float, true>(float const*, float*, " \
    "tb_reduce_plan)"
UNFUSED_K = [("void k_lanes<float, 0>", 1, 900.0),
             ("void k_binary_bcast<float, B_sub<float> >", 2, 1400.0),
             ("void k_unary_vec<float, U_exp<float> >", 1, 700.0),
             ("void k_sum_rows<float, float>", 1, 800.0),
             ("void k_unary_vec<float, U_log<float> >", 1, 650.0)]


def gpu_counts(op):
    if op == "add":
        return cupti(1.0, [(ADD_K, 1, 1234.5)])
    if op == "log_softmax":
        return cupti(1.0, [(LSM_K, 1, 2100.0)])
    return cupti(6.0, UNFUSED_K, allocs=4.0)


def gpu_doc(edit=None):
    """The template as a cuda run with known counts; edit(case) may
    change each case.  Written to a file, its path returned."""
    doc = template()
    for c in doc["cases"]:
        c["id"] = re.sub(r"/cpu\[[^]]*\]$", "/cuda", c["id"])
        c["backend"] = "cuda"
        c["backend_params"] = {"device": "0"}
        c["roofline"] = None
        c["cupti"] = gpu_counts(c["op"])
        c["cupti_reason"] = None
        if edit:
            edit(c)
    jsonschema.validate(doc, SCHEMA)
    return doc


def save(doc, name):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def ids(doc):
    return {c["op"]: c["id"] for c in doc["cases"]}


# ---- the real run: no counts here, and why -------------------------------


@case("a cpu run records cupti null with the reason on every case")
def t_cpu_run():
    doc = template()
    jsonschema.validate(doc, SCHEMA)
    for c in doc["cases"]:
        expect(c["cupti"] is None, f"{c['id']}: cupti {c['cupti']}")
        expect(c["cupti_reason"] == "backend cpu counts no device activity",
               f"{c['id']}: {c['cupti_reason']}")
    p = run("show", "add*", TEMPLATE_DIR)
    expect_exit(p, 0)
    expect("cupti: not measured: backend cpu counts no device activity"
           in p.stdout, p.stdout)


# ---- show --------------------------------------------------------------------


@case("show: a case's fields, the counts and the kernel breakdown")
def t_show():
    doc = gpu_doc()
    path = save(doc, "gpu.json")
    p = run("show", ids(doc)["log_softmax_unfused"], path)
    expect_exit(p, 0)
    out = p.stdout
    lines = out.splitlines()
    expect(lines[0] == ids(doc)["log_softmax_unfused"], lines[0])
    for needle in ["status                         ok",
                   "backend                        cuda",
                   "  device                       0",
                   "median_ns", "kernel_launches",
                   "cupti (per iteration, counted over 10 iterations):",
                   "kernel launches              6",
                   "memcpy h2d                   0 (0 bytes)",
                   "device allocs                4 (2048 bytes)",
                   "kernel breakdown:"]:
        expect(needle in out, f"'{needle}' not in:\n{out}")
    rows = [l.split(None, 3) for l in lines
            if re.match(r"^ +[0-9.]+ +[0-9.]+ [nu]s +\S", l)]
    expect([r[-1] for r in rows] == [k[0] for k in UNFUSED_K],
           f"breakdown rows {rows}")
    expect(rows[1][:3] == ["2", "1.40", "us"], f"sub_bcast row {rows[1]}")
    # one fused launch, the demangled name in full
    p = run("show", ids(doc)["log_softmax"], path)
    expect_exit(p, 0)
    expect(re.search(r"^ +1 +2\.10 us +" + re.escape(LSM_K) + "$",
                     p.stdout, re.M), p.stdout)


@case("show: a glob shows every match; --json the records as stored")
def t_show_glob_json():
    doc = gpu_doc()
    path = save(doc, "gpu.json")
    p = run("show", "log_softmax*", path)
    expect_exit(p, 0)
    heads = [l for l in p.stdout.splitlines() if l.startswith("log_softmax")]
    expect(len(heads) == 2, f"headers {heads}")
    p = run("show", "*", path, "--json")
    expect_exit(p, 0)
    expect(json.loads(p.stdout) == doc["cases"], "--json differs")


@case("show: without RESULTS the newest run under results/")
def t_show_default():
    cwd = os.path.join(TMP, "cwd")
    for name, launches in [("20260101-000000-a", 1.0),
                           ("20260102-000000-b", 7.0)]:
        d = os.path.join(cwd, "results", name)
        os.makedirs(d, exist_ok=True)
        doc = gpu_doc()
        for c in doc["cases"]:
            c["cupti"]["kernel_launches"] = launches
        save(doc, os.path.join(d, "results.json"))
        os.utime(os.path.join(d, "results.json"),
                 (1e9 + launches, 1e9 + launches))
    p = run("show", "add*", cwd=cwd)
    expect_exit(p, 0)
    expect("kernel launches              7" in p.stdout, p.stdout)
    empty = os.path.join(TMP, "empty")
    os.makedirs(empty, exist_ok=True)
    expect_error(run("show", "add*", cwd=empty), "show: no RESULTS given")


@case("show: no match, a malformed cupti, usage errors: exit 2, one line")
def t_show_errors():
    doc = gpu_doc()
    path = save(doc, "gpu.json")
    expect_error(run("show", "matmul*", path), "no case id matches",
                 "'matmul*'")

    def bad(c):
        c["cupti"]["memcpy"]["d2h"]["bytes"] = -1
    bdoc = template()
    for c in bdoc["cases"]:
        c["cupti"] = gpu_counts(c["op"])
        c["cupti_reason"] = None
        bad(c)
    bpath = save(bdoc, "bad.json")
    expect_error(run("show", "add*", bpath), "bad.json: cases[0]",
                 "cupti.memcpy.d2h")
    for c in bdoc["cases"]:
        c["cupti"] = None
        c["cupti_reason"] = None
    expect_error(run("show", "add*", save(bdoc, "bad2.json")),
                 "cupti is null but cupti_reason")
    expect_error(run("show"), "show: expected a CASE")
    expect_error(run("show", "a", "b", "c"), "unexpected argument 'c'")
    expect_error(run("show", "--bogus"), "unknown option '--bogus'")
    p = run("--help")
    expect_exit(p, 0)
    expect("  show CASE [RESULTS] [--json]" in p.stdout, p.stdout)


# ---- compare --------------------------------------------------------------


@case("compare: one more kernel launch per iteration fails (exit 1)")
def t_compare_launches():
    old = save(gpu_doc(), "old.json")

    def more(c):
        if c["op"] == "log_softmax":
            c["cupti"]["kernel_launches"] = 2.0
            c["cupti"]["kernels"].append({"name": "extra", "count": 1,
                                          "device_ns": 10.0})
    doc = gpu_doc(more)
    new = save(doc, "new.json")
    p = run("compare", old, new)
    expect_exit(p, 1)
    lsm = ids(doc)["log_softmax"]
    expect(f"{lsm}: cupti.kernel_launches 1 -> 2 (counter regression)"
           in p.stdout, p.stdout)
    p = run("compare", old, new, "--format", "json")
    expect_exit(p, 1)
    cmp = {c["id"]: c for c in json.loads(p.stdout)["cases"]}
    expect(cmp[lsm]["verdict"] == "counters", cmp[lsm]["verdict"])
    e = cmp[lsm]["counters"]["cupti.kernel_launches"]
    expect(e == {"old": 1, "new": 2, "verdict": "regressed"}, str(e))
    expect(cmp[lsm]["cupti_no_verdict"] is None, "no verdict?")
    add = cmp[ids(doc)["add"]]["counters"]
    expect(add["cupti.memcpys"]["verdict"] == "unchanged" and
           add["cupti.memcpys"]["new"] == 0, str(add))
    # --fail-on without counters: reported, not failing
    expect_exit(run("compare", old, new, "--fail-on", "time,status"), 0)
    # fewer launches (the fused kernel came back): an improvement, exit 0
    p = run("compare", new, old)
    expect_exit(p, 0)
    expect("cupti.kernel_launches 2 -> 1 (counter improvement)" in p.stdout,
           p.stdout)


@case("compare: cupti null on one side gives no verdict and says why")
def t_compare_null_side():
    old = save(gpu_doc(), "old.json")

    def null(c):
        c["cupti"] = None
        c["cupti_reason"] = ("CUPTI refused: cuptiActivityEnable("
                             "CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED"
                             " (error 15) (another profiler may be "
                             "attached)")
    doc = gpu_doc(null)
    new = save(doc, "new.json")
    p = run("compare", old, new)
    expect_exit(p, 0)
    expect("CUPTI counts not compared:" in p.stdout, p.stdout)
    want = (f"{ids(doc)['add']}: no CUPTI verdict: not measured in the new "
            "run: CUPTI refused: cuptiActivityEnable(CONCURRENT_KERNEL)")
    expect(want in p.stdout, p.stdout)
    p = run("compare", old, new, "--format", "json")
    cmp = {c["id"]: c for c in json.loads(p.stdout)["cases"]}
    c = cmp[ids(doc)["add"]]
    # the same timings on both sides: no time change found (unchanged,
    # or inconclusive when the run's own noise is above the threshold),
    # and no counter verdict
    expect(c["verdict"] in ("unchanged", "inconclusive"), c["verdict"])
    expect(c["cupti_no_verdict"].startswith("no CUPTI verdict: not measured "
                                            "in the new run: CUPTI refused"),
           c["cupti_no_verdict"])
    expect(c["counters"]["cupti.kernel_launches"] ==
           {"old": 1, "new": None, "verdict": "not-compared"},
           str(c["counters"]["cupti.kernel_launches"]))
    # the cpu template against itself: no cupti talk at all
    p = run("compare", TEMPLATE_DIR, TEMPLATE_DIR)
    expect_exit(p, 0)
    expect("CUPTI" not in p.stdout and "cupti." not in p.stdout, p.stdout)


# ---- report -------------------------------------------------------------------


def fusion_row(md, op="log_softmax"):
    """The cells of the fused-vs-unfused row of op."""
    expect("\n## Fused vs unfused\n" in md, "no fusion section")
    sec = md.split("\n## Fused vs unfused\n", 1)[1].split("\n## ", 1)[0]
    rows = [l for l in sec.splitlines() if l.startswith(f"| {op}[")]
    expect(len(rows) == 1, f"rows for {op}: {rows}\n{md[-3000:]}")
    return [c.strip() for c in rows[0].strip("|").split("|")]


def report(path, name):
    out = os.path.join(TMP, name + ".md")
    p = run("report", path, "--no-charts", "-o", out)
    expect_exit(p, 0)
    with open(out, encoding="utf-8") as f:
        return f.read()


@case("report: fused vs unfused shows the launches saved, or why not")
def t_report():
    md = report(save(gpu_doc(), "gpu.json"), "gpu")
    expect("| Launches saved (CUPTI) |" in md, md[-3000:])
    cells = fusion_row(md)
    expect(cells[-1] == "5 of 6 (83%)", f"launches saved {cells[-1]}")

    def fewer(c):  # the unfused form recorded 3 launches
        if c["op"] == "log_softmax_unfused":
            c["cupti"]["kernel_launches"] = 3.0
    cells = fusion_row(report(save(gpu_doc(fewer), "g3.json"), "g3"))
    expect(cells[-1] == "2 of 3 (67%)", f"launches saved {cells[-1]}")

    def null_unfused(c):
        if c["op"] == "log_softmax_unfused":
            c["cupti"] = None
            c["cupti_reason"] = "CUPTI dropped 12 activity records | x"
    cells = fusion_row(report(save(gpu_doc(null_unfused), "gn.json"), "gn"))
    expect(cells[-1] == "not measured: CUPTI dropped 12 activity records "
           "/ x", f"launches saved {cells[-1]}")
    # the real cpu run: the backend's reason
    cells = fusion_row(report(TEMPLATE_DIR, "cpu"))
    expect(cells[-1] == "not measured: backend cpu counts no device "
           "activity", f"launches saved {cells[-1]}")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)


sys.exit(run_cases(cleanup))
