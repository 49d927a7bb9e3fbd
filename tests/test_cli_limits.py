#!/usr/bin/python3
"""CLI tests of scripts/op_limits.py (issue 18's table of every op against
its roofline bound and the peers), printed as TAP.

Usage: test_cli_limits.py PATH/TO/tbench   (run from the repository root,
with Debian's /usr/bin/python3: numpy; PyTorch is switched off with
TBENCH_NO_TORCH so the test does not depend on it)

The failure paths (each a one-line error and exit 2, never a traceback),
the config generated from configs/quick.json (checked against the file
read here), and the table of a tiny run: its ratios and peer columns are
recomputed here from the run's own result files, and its flags from a
peak cache made here, whose bandwidths make every bound far below or far
above any time this machine can measure.  Timings are never asserted.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
SCRIPT = os.path.abspath("scripts/op_limits.py")
QUICK = os.path.abspath("configs/quick.json")
TMP = tempfile.mkdtemp(prefix="tbench-limits-")
TINY = ["--elements", "1024", "--ops",
        "add,exp,sum,zeros,matmul,relu_,copy",
        "--max-time", "0.02", "--peaks", "cached"]

sys.path.insert(0, os.path.abspath("scripts"))
from compare_numpy import strip_comments  # noqa: E402


def script(args, env=None, timeout=600):
    e = dict(os.environ, TBENCH_NO_TORCH="1",
             TBENCH_PEAK_CACHE=os.path.join(TMP, "no-cache.json"))
    e.update(env or {})
    return subprocess.run(["/usr/bin/python3", SCRIPT, "--tbench", TBENCH,
                           *args], capture_output=True, text=True, env=e,
                          timeout=timeout)


def one_line_error(p, *words):
    expect(p.returncode == 2, f"exit {p.returncode}, expected 2; "
           f"stderr: {p.stderr}")
    lines = p.stderr.strip().splitlines()
    expect(len(lines) == 1 and lines[0].startswith("op_limits.py: "),
           f"not one 'op_limits.py: ' line: {p.stderr!r}")
    for w in words:
        expect(w in lines[0], f"'{w}' missing from: {lines[0]}")


def write(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    return p


def load_config(path):
    with open(path, encoding="utf-8") as f:
        return json.loads(strip_comments(f.read()))


# ---- failure paths ----------------------------------------------------------

@case("no tbench executable: one line naming --tbench, exit 2")
def t_no_tbench():
    p = subprocess.run(["/usr/bin/python3", SCRIPT, "--tbench",
                        os.path.join(TMP, "nope"), "--config-only", "-o",
                        os.path.join(TMP, "x")], capture_output=True,
                       text=True)
    one_line_error(p, "--tbench", "nope", "not an executable")


@case("bad option values: one line naming the option, exit 2")
def t_bad_values():
    for args, word in [(["--elements", "1000"], "--elements"),
                       (["--elements", "8"], "--elements"),
                       (["--elements", "1e6"], "--elements"),
                       (["--max-ratio", "0.5"], "--max-ratio"),
                       (["--max-ratio", "nan"], "--max-ratio"),
                       (["--peers", "numpy,jax"], "--peers"),
                       (["--peaks", "maybe"], "--peaks"),
                       (["--max-time", "0"], "--max-time"),
                       (["--ops", "no_such_op*"], "no_such_op*")]:
        p = script(args + ["--config-only", "-o", os.path.join(TMP, "bv")])
        one_line_error(p, word)


@case("bad quick config: missing, not JSON, unknown op, no ops")
def t_bad_quick():
    p = script(["--quick", os.path.join(TMP, "missing.json"),
                "--config-only", "-o", os.path.join(TMP, "bq")])
    one_line_error(p, "missing.json", "cannot open")
    bad = write("bad.json", '{"name": "x",\n "ops": [\n  {"op": "add",}\n]}')
    p = script(["--quick", bad, "--config-only", "-o",
                os.path.join(TMP, "bq")])
    one_line_error(p, "bad.json", "line 3")
    unk = write("unknown.json", '{"name": "x", "ops": [{"op": "add", '
                '"shapes": [[4]]}, {"op": "frobnicate", "shapes": [[4]]}]}')
    p = script(["--quick", unk, "--config-only", "-o",
                os.path.join(TMP, "bq")])
    one_line_error(p, "unknown.json", "ops[1]", "frobnicate")
    noops = write("noops.json", '{"name": "x"}')
    p = script(["--quick", noops, "--config-only", "-o",
                os.path.join(TMP, "bq")])
    one_line_error(p, "noops.json", "'ops'")


@case("--from: a missing folder, a corrupt result file")
def t_bad_from():
    p = script(["--from", os.path.join(TMP, "nowhere")])
    one_line_error(p, "--from", "nowhere")
    d = os.path.join(TMP, "corrupt")
    os.makedirs(os.path.join(d, "run"))
    with open(os.path.join(d, "run", "results.json"), "w") as f:
        f.write('{"schema": "tbench.results/1", "cases": [')
    p = script(["--from", d])
    one_line_error(p, os.path.join(d, "run", "results.json"),
                   "not valid JSON")
    with open(os.path.join(d, "run", "results.json"), "w") as f:
        f.write('[1, 2]')
    p = script(["--from", d])
    one_line_error(p, "results.json", "not a tbench result file")


@case("an output folder that cannot be made: one line, exit 2")
def t_bad_output():
    f = write("plainfile", "x")
    p = script(["--config-only", "-o", os.path.join(f, "sub")])
    one_line_error(p, "plainfile")


# ---- the generated config ---------------------------------------------------

@case("config from quick.json: every f32 op, element-wise ones at 2^20")
def t_config():
    d = os.path.join(TMP, "cfg")
    p = script(["--config-only", "-o", d])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    cfg = load_config(os.path.join(d, "config.json"))
    q = load_config(QUICK)
    want = {e["op"] for e in q["ops"]
            if "f32" in e.get("dtypes", q.get("dtypes", ["f32"]))}
    got = {e["op"] for e in cfg["ops"]}
    expect(got == want, f"ops differ: missing {sorted(want - got)}, "
           f"extra {sorted(got - want)}")
    expect(cfg["dtypes"] == ["f32"] and
           all("dtypes" not in e for e in cfg["ops"]), "not f32 only")
    expect(cfg["backends"] == [{"name": "cpu", "isa": "auto",
                                "threads": 1}], f"{cfg['backends']}")
    expect(cfg["measure"] == q["measure"] and cfg["seed"] == q["seed"],
           "measure/seed not quick.json's")
    byop = {}
    for e in cfg["ops"]:
        byop.setdefault(e["op"], []).append(e)

    def numel(s):
        n = 1
        for x in s:
            n *= x
        return n
    # element-wise kinds: 2^20 elements in the quick entry's rank
    for op, rank in [("neg", 1), ("add", 2), ("softplus", 1),
                     ("max", 2), ("zeros", 2), ("permute", 3),
                     ("relu_backward", 2), ("adam", 1), ("sub_", 1)]:
        for e in byop[op]:
            for s in e["shapes"]:
                expect(len(s) == rank and numel(s) == 1 << 20,
                       f"{op}: {s}")
    # per-input broadcast: [256x256, 256] -> [1024x1024, 1024]
    expect(byop["maximum"][0]["shapes"] == [[[1024, 1024], [1024]]],
           f"maximum: {byop['maximum']}")
    # add's two quick sizes become one; its alloc entry stays apart
    expect([e.get("alloc", False) for e in byop["add"]] == [False, True]
           and byop["add"][0]["shapes"] == [[1024, 1024]],
           f"add: {byop['add']}")
    # not element-wise: the quick sizes, verbatim
    qop = {}
    for e in q["ops"]:
        qop.setdefault(e["op"], e)
    for op in ("matmul", "conv2d", "max_pool2d", "svd", "log_softmax",
               "matmul_backward", "log_softmax_unfused", "linear",
               "mlp_train_step", "calib_spin"):
        expect(byop[op][0]["shapes"] == qop[op]["shapes"],
               f"{op}: {byop[op][0]['shapes']} != {qop[op]['shapes']}")
    # the params come along
    expect(byop["div_scalar"][0]["params"] == {"scalar": 3}, "params lost")


# ---- a tiny run -------------------------------------------------------------

def cases_of(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rows_of(md):
    lines = md.splitlines()
    i = next(i for i, x in enumerate(lines) if x.startswith("| case |"))
    rows = []
    for x in lines[i + 2:]:
        if not x.startswith("|"):
            break
        rows.append([c.strip() for c in x.strip("|").split("|")])
    return lines[i], rows


def peak_cache(env, gb_s):
    """A peak cache for this machine whose every bandwidth is gb_s."""
    key = {"cpu_model": env["cpu"]["model"],
           "logical_cpus": env["cpu"]["logical_cpus"],
           "tbench_version": env["build"]["tbench_version"]}
    bw = [{"kernel": k, "level": lv, "threads": t,
           "working_set_bytes": 1 << 20, "best_gb_s": gb_s,
           "median_gb_s": gb_s, "worst_gb_s": gb_s, "spread": 0.0}
          for k in ("copy", "add", "triad", "read")
          for lv in ("L2", "L3", "DRAM") for t in (1, 2)]
    fl = [{"isa": i, "dtype": d, "threads": t, "accumulators": 12,
           "best_gflop_s": gb_s, "median_gflop_s": gb_s,
           "worst_gflop_s": gb_s, "spread": 0.0}
          for i in ("scalar", "avx2", "avx512") for d in ("f32", "f64")
          for t in (1, 2)]
    peaks = {"schema": "tbench.peaks/1", "key": key,
             "date": "2026-01-01T00:00:00Z", "quick": False,
             "repetitions": 7, "min_rep_time_s": 0.02, "threads": [1, 2],
             "levels": [{"name": "L2", "capacity_bytes": 1 << 20,
                         "per_thread": True, "working_set_bytes": 1 << 19},
                        {"name": "L3", "capacity_bytes": 1 << 24,
                         "per_thread": False,
                         "working_set_bytes": 1 << 23},
                        {"name": "DRAM", "capacity_bytes": None,
                         "per_thread": False,
                         "working_set_bytes": 1 << 28}],
             "bandwidth_isa": "avx2", "bandwidth": bw, "flops": fl,
             "pinned": True, "load_avg_1m": 0.0,
             "notes": ["fixture note: measured under load"]
             if gb_s > 1 else [],
             "duration_s": 1.0}
    return write(f"cache-{gb_s:g}.json", json.dumps(
        {"schema": "tbench.peak-cache/1", "entries": [peaks]}))


STATE = {}


@case("tiny run without peaks: every case in the table, no bounds")
def t_tiny_nopeaks():
    d = os.path.join(TMP, "tiny0")
    p = script(TINY + ["-o", d])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    res = cases_of(os.path.join(d, "run", "results.json"))
    STATE["env"] = res["env"]
    head, rows = rows_of(p.stdout)
    expect(len(rows) == len(res["cases"]) > 0,
           f"{len(rows)} rows for {len(res['cases'])} cases")
    expect(all(r[6] == "-" and r[8] == "-" for r in rows),
           "a bound without peaks")
    expect("No bound (" in p.stdout, "the no-bound note is missing")
    with open(os.path.join(d, "limits.md"), encoding="utf-8") as f:
        expect(f.read() == p.stdout, "limits.md differs from stdout")


def check_tiny(d, md, expect_bound_flags):
    res = cases_of(os.path.join(d, "run", "results.json"))
    peers = cases_of(os.path.join(d, "peers.json"))
    lim = cases_of(os.path.join(d, "limits.json"))
    head, rows = rows_of(md)
    cols = [c.strip() for c in head.strip("|").split("|")]
    expect(cols[:3] == ["case", "category", "shapes"] and
           cols[6:11] == ["bound", "bound kind", "ratio",
                          "vs run's copy/read", "NumPy"] and
           cols[-1] == "flags", f"header: {cols}")
    # this run's own copy and read: ns per byte of the copy op and the
    # global sum (the script must find the same)
    rate = {}
    for c in res["cases"]:
        k = "copy" if c["op"] == "copy" else "read" if (
            c["op"] == "sum" and "axis" not in c["params"]) else None
        if k:
            rate[k] = c["stats"]["median_ns"] / c["model"]["bytes"]
    expect(len(rows) == len(res["cases"]) == len(lim["rows"]),
           "rows do not match the cases")
    pk = {}
    for c in peers["cases"]:
        if c["status"] == "ok":
            pk.setdefault(c["id"].rsplit("/", 1)[0], {}).setdefault(
                c["backend"], []).append((c["stats"]["median_ns"],
                                          c["stats"]["ci_high_ns"]))
    flagged = set()
    for c, row, j in zip(res["cases"], rows, lim["rows"]):
        expect(row[0] == c["id"].split("/")[0], f"{row[0]} vs {c['id']}")
        expect(j["id"] == c["id"], f"json row {j['id']} vs {c['id']}")
        med = c["stats"]["median_ns"]
        rl = c["roofline"]
        expect(rl is not None, f"{c['id']}: no roofline")
        ratio = med / rl["min_time_ns"]
        expect(abs(j["ratio"] - ratio) <= 1e-9 * ratio,
               f"{c['id']}: ratio {j['ratio']} != {ratio}")
        expect(row[8] == f"{ratio:.2f}x", f"{c['id']}: {row[8]}")
        rk = "read" if c["category"] == "reduction" else "copy"
        if rk in rate:
            v = med / (c["model"]["bytes"] * rate[rk])
            expect(abs(j["vs_run_bound"] - v) <= 1e-9 * v and
                   row[9] == f"{v:.2f}x", f"{c['id']}: vs run {row[9]}")
        else:
            expect(j["vs_run_bound"] is None and row[9] == "-",
                   f"{c['id']}: vs run without a {rk} case")
        key = c["id"].rsplit("/", 1)[0]
        if key.startswith("add@alloc"):
            expect(j["numpy_ns"] is not None, "alloc case has no peer")
        elif key in pk:
            best, hi = min(pk[key]["numpy"])
            expect(j["numpy_ns"] == best, f"{key}: numpy {j['numpy_ns']} "
                   f"!= {best} (the faster form)")
            expect(abs(j["vs_best_peer"] - med / best) <= 1e-9 * med / best,
                   f"{key}: vs peer")
            expect(("peer" in j["flags"]) ==
                   (med > best and c["stats"]["ci_low_ns"] > hi),
                   f"{key}: peer flag")
        expect(j["torch_ns"] is None, "torch was switched off")
        if "bound" in j["flags"]:
            flagged.add(c["op"])
        expect(("bound" in j["flags"]) == (
            c["category"] in ("elementwise", "activation", "reduction",
                              "creation", "inplace") and ratio > 1.5),
               f"{c['id']}: bound flag {j['flags']} at ratio {ratio}")
        expect(("bound" in row[13]) == ("bound" in j["flags"]),
               f"{c['id']}: flags column {row[13]}")
    if expect_bound_flags:
        expect(flagged == {"add", "exp", "sum", "zeros", "relu_", "copy"},
               f"flagged: {sorted(flagged)}")
        expect(sorted(lim["above_bound"]) ==
               sorted(r["id"] for r in lim["rows"] if "bound" in r["flags"]),
               "above_bound list")
        expect(re.search(r"Above 1\.5x their bound \(\d+\): add ", md),
               "the above-bound line is missing")
        expect("**Warning**: fixture note: measured under load" in md,
               "the peaks' note is not shown")
    else:
        expect(not flagged, f"flagged at a huge bound: {sorted(flagged)}")
        expect("**Warning**" not in md, "a warning without a note")


@case("tiny run with peaks: ratio, peers and flags from the result files")
def t_tiny_peaks():
    if "env" not in STATE:
        return "SKIP the run without peaks failed"
    for gb_s, flags in ((1e9, True), (1e-9, False)):
        cache = peak_cache(STATE["env"], gb_s)
        d = os.path.join(TMP, f"tiny-{gb_s:g}")
        p = script(TINY + ["-o", d, "--peers", "numpy"],
                   env={"TBENCH_PEAK_CACHE": cache})
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
        check_tiny(d, p.stdout, flags)
        # --from renders the same table from the files
        q = script(["--from", d])
        expect(q.returncode == 0, f"--from exit {q.returncode}: {q.stderr}")
        expect(rows_of(q.stdout)[1] == rows_of(p.stdout)[1],
               "--from gives another table")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


if __name__ == "__main__":
    sys.exit(run_cases(cleanup))
