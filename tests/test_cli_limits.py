#!/usr/bin/python3
"""CLI tests of scripts/op_limits.py (issue 18's table of every op against
its roofline bound and the peers), printed as TAP.

Usage: test_cli_limits.py PATH/TO/tbench   (run from the repository root,
with Debian's /usr/bin/python3: numpy; PyTorch is switched off with
TBENCH_NO_TORCH so the test does not depend on it)

The failure paths (each a one-line error and exit 2, never a traceback:
bad options, a bad quick config, malformed compute bounds files), the
config generated from configs/quick.json (checked against the file read
here; the in-cache entries of the ops with a stated bound), and the
table of a tiny run in 2 rounds: its times (medians over the rounds),
ratios, stated compute bounds and peer columns are recomputed here from
the rounds' own result files, and its flags from a peak cache made here,
whose bandwidths make every bound far below or far above any time this
machine can measure, and from a bounds file made here whose stated bound
is far above any time.  Timings are never asserted.
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
# --mcpu icelake-server: rand_uniform f32's hand-stated bound (counted on
# Ice Lake server's ports) applies whatever this machine is
TINY = ["--elements", "1024", "--ops",
        "add,neg,sum,zeros,matmul,relu_,copy,rand_uniform",
        "--max-time", "0.02", "--peaks", "cached", "--mcpu",
        "icelake-server", "--call-floor", "off"]
# (the call floor, a time, would make the fixture bounds' flags depend on
# this machine's speed: t_chain_floor tests it on hand-built results)
CLOCK_GHZ = 2.0          # the fixture peaks' core clock
# the peak cache key's method (src/harness/peak.h), for the fixture cache
with open("src/harness/peak.h", encoding="utf-8") as _f:
    PEAK_METHOD = int(re.search(r"#define TB_PEAK_METHOD (\d+)",
                                _f.read()).group(1))
STATED = 1000.0          # cycles per element of the fixture bounds

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
                       (["--rounds", "0"], "--rounds"),
                       (["--rounds", "21"], "--rounds"),
                       (["--rounds", "two"], "--rounds"),
                       (["--ops", "no_such_op*"], "no_such_op*"),
                       (["--dtypes", "f32,f33"], "--dtypes"),
                       (["--dtypes", "f32,f32"], "--dtypes"),
                       (["--peer-python", "/nonexistent/python"],
                        "--peer-python"),
                       (["--peer-python", "/usr/bin/python3:a-b"],
                        "--peer-python"),
                       (["--peer-python", "/usr/bin/python3:x",
                         "--peer-python", "/usr/bin/python3:x"],
                        "--peer-python")]:
        p = script(args + ["--config-only", "-o", os.path.join(TMP, "bv")])
        one_line_error(p, word)


@case("--dtypes f32,f64 and --peer-python PY:LABEL: each entry in both "
      "dtypes, a second interpreter's peers as numpy-LABEL with a column "
      "of their own, counted for the best peer")
def t_dtypes_peer_python():
    d = os.path.join(TMP, "dp")
    p = script(["--elements", "1024", "--ops", "add,exp", "--max-time",
                "0.02", "--peaks", "cached", "--rounds", "1", "--dtypes",
                "f32,f64", "--mcpu", "icelake-server",
                "--peer-python", "/usr/bin/python3:deb2", "-o", d])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    plan = cases_of(os.path.join(d, "plan.json"))
    expect(plan["peer_labels"] == ["deb2"], f"plan: {plan}")
    cfg = load_config(os.path.join(d, "config.json"))
    expect(cfg["dtypes"] == ["f32", "f64"], f"dtypes {cfg['dtypes']}")
    res = cases_of(os.path.join(d, "run", "results.json"))
    expect({c["dtype"] for c in res["cases"]} == {"f32", "f64"},
           "not both dtypes")
    second = cases_of(os.path.join(d, "peers-deb2.json"))
    libs = {c["backend"] for c in second["cases"]}
    expect(libs == {"numpy-deb2", "torch-deb2"}, f"backends {libs}")
    head, rows = rows_of(p.stdout)
    cols = [c.strip() for c in head.strip("|").split("|")]
    expect(cols[10:14] == ["NumPy", "PyTorch", "numpy-deb2", "torch-deb2"],
           f"header {cols}")
    expect(any(r[2].endswith("(f64)") for r in rows), "no f64 row")
    # exp has a stated bound in both dtypes: each dtype's row takes its
    # own in-cache probe (4096 elements), and no probe is a table row
    lim = cases_of(os.path.join(d, "limits.json"))
    exps = [r for r in lim["rows"] if r["op"] == "exp"]
    expect(sorted(r["dtype"] for r in exps) == ["f32", "f64"] and
           all(r["shapes"] == [[1024]] for r in exps),
           f"exp rows {[(r['dtype'], r['shapes']) for r in exps]}")
    for r in exps:
        st = r["stated"]
        if st:  # a row of a level with a stated bound (avx2, avx512)
            expect(f"/{r['dtype']}/" in (st["in_cache_id"] or ""),
                   f"{r['id']}: in-cache probe {st['in_cache_id']}")
    lim = cases_of(os.path.join(d, "limits.json"))
    for j in lim["rows"]:
        key = j["id"].rsplit("/", 1)[0]
        own = [c["stats"]["median_ns"] for c in second["cases"]
               if c["id"].rsplit("/", 1)[0] == key and
               c["backend"] == "numpy-deb2" and c["status"] == "ok" and
               "@alloc" not in j["case"]]
        if own:
            expect(close(j["peers_ns"]["numpy-deb2"], min(own)),
                   f"{key}: {j['peers_ns']} vs {own}")
            expect(j["best_peer_ns"] <= min(own) * (1 + 1e-9),
                   f"{key}: best peer {j['best_peer_ns']} above numpy-deb2")


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


def bounds_file(name, rows, schema="tbench.compute_bounds/1"):
    return write(name, json.dumps({"schema": schema, "bounds": rows},
                                  indent=1))


@case("malformed compute bounds: one line naming the file and the place")
def t_bad_bounds():
    good = {"impl": "rand_uniform_f32_avx512", "cycles_per_element": 1.5,
            "derivation": "one line"}
    p = script(["--bounds", os.path.join(TMP, "nobounds.json"),
                "--config-only", "-o", os.path.join(TMP, "bb")])
    one_line_error(p, "nobounds.json", "cannot open")
    nj = write("nj.json", '{"schema": "tbench.compute_bounds/1",\n'
               ' "bounds": [\n  {"impl": "x",}\n]}')
    p = script(["--bounds", nj, "--config-only", "-o",
                os.path.join(TMP, "bb")])
    one_line_error(p, "nj.json", "line 3")
    for name, doc, words in [
            ("b-schema.json", bounds_file("b-schema.json", [good],
                                          "tbench.other/1"), ["schema"]),
            ("b-list.json", write("b-list.json", "[]"), ["an object"]),
            ("b-nolist.json", write(
                "b-nolist.json", '{"schema": "tbench.compute_bounds/1", '
                '"bounds": 3}'), ["bounds: expected a list"]),
            ("b-neg.json", bounds_file("b-neg.json", [
                good, dict(good, impl="rand_normal_f32_avx512",
                           cycles_per_element=-1)]),
             ["bounds[1].cycles_per_element", "-1"]),
            ("b-str.json", bounds_file("b-str.json", [
                dict(good, cycles_per_element="2")]),
             ["bounds[0].cycles_per_element"]),
            ("b-bool.json", bounds_file("b-bool.json", [
                dict(good, cycles_per_element=True)]),
             ["bounds[0].cycles_per_element"]),
            ("b-op.json", bounds_file("b-op.json", [
                dict(good, impl="frobnicate_f32_avx512")]),
             ["bounds[0].impl", "frobnicate_f32_avx512", "no op"]),
            ("b-twice.json", bounds_file("b-twice.json", [good, good]),
             ["bounds[1].impl", "twice"]),
            ("b-miss.json", bounds_file("b-miss.json", [
                {"impl": "rand_uniform_f32_c", "cycles_per_element": 2}]),
             ["bounds[0]", "'derivation'"]),
            ("b-extra.json", bounds_file("b-extra.json", [
                dict(good, cycles=2)]), ["bounds[0]", "'cycles'"]),
            ("b-lines.json", bounds_file("b-lines.json", [
                dict(good, derivation="two\nlines")]),
             ["bounds[0].derivation", "one line"]),
            ("b-mcpu.json", bounds_file("b-mcpu.json", [
                dict(good, mcpu="Ice Lake")]),
             ["bounds[0].mcpu", "Ice Lake"]),
            ("b-twice-m.json", bounds_file("b-twice-m.json", [
                dict(good, mcpu="znver4"), dict(good, mcpu="znver4")]),
             ["bounds[1].impl", "twice", "znver4"])]:
        p = script(["--bounds", doc, "--config-only", "-o",
                    os.path.join(TMP, "bb")])
        one_line_error(p, name, *words)


def reasons_file(name, entries, schema="tbench.limit_reasons/1"):
    return write(name, json.dumps({"schema": schema, "about": "fixture",
                                   "reasons": entries}))


@case("malformed limit reasons: one line naming the file and the place")
def t_bad_reasons():
    good = {"id": "r1", "ops": ["qr"], "up_to": 20, "reason": "why",
            "measured": "what"}
    out = ["--config-only", "-o", os.path.join(TMP, "br")]
    p = script(["--reasons", os.path.join(TMP, "noreasons.json")] + out)
    one_line_error(p, "noreasons.json", "cannot open")
    for name, entries, words in [
            ("r-schema.json", None, ["schema"]),
            ("r-noid.json", [{k: v for k, v in good.items() if k != "id"}],
             ["reasons[0]", "'id' is missing"]),
            ("r-key.json", [dict(good, why="x")],
             ["reasons[0]", "unknown key 'why'"]),
            ("r-twice.json", [good, dict(good, ops=["svd"])],
             ["reasons[1].id", "twice"]),
            ("r-op.json", [dict(good, ops=["qr", "nosuchop"])],
             ["reasons[0].ops[1]", "nosuchop"]),
            ("r-up.json", [dict(good, up_to=1.0)], ["reasons[0].up_to"]),
            ("r-upbool.json", [dict(good, up_to=True)],
             ["reasons[0].up_to"]),
            ("r-dt.json", [dict(good, dtypes=["f8"])],
             ["reasons[0].dtypes"]),
            ("r-shape.json", [dict(good, shapes=[16, 16])],
             ["reasons[0].shapes"]),
            ("r-text.json", [dict(good, measured="two\nlines")],
             ["reasons[0].measured", "one line"])]:
        path = reasons_file(name, entries if entries is not None
                            else [good], "tbench.other/1"
                            if entries is None else
                            "tbench.limit_reasons/1")
        p = script(["--reasons", path] + out)
        one_line_error(p, name, *words)


@case("measured reasons: a flagged row names the one that covers it; past "
      "its up_to, or of another dtype, shape or machine, none")
def t_reasons_apply():
    import op_limits
    rows = []
    for op, dt, shapes, ratio in [
            ("qr", "f32", [[16, 16]], 20.0),   # covered
            ("qr", "f64", [[16, 16]], 30.0),   # past up_to 25
            ("qr", "bf16", [[16, 16]], 20.0),  # another dtype
            ("qr", "f32", [[32, 32]], 20.0),   # another shape
            ("svd", "f32", [[16, 16]], 20.0),  # the second reason
            ("eigh", "f32", [[16, 16]], 1.1)]:  # not flagged
        rows.append({"id": f"{op}/{dt}/{shapes}", "op": op, "dtype": dt,
                     "case": op, "shapes": shapes, "ratio": ratio,
                     "flags": ["bound"] if ratio > 1.3 else []})
    reasons = [{"id": "small", "ops": ["qr", "eigh"],
                "dtypes": ["f32", "f64"], "shapes": [[16, 16]],
                "mcpu": None, "up_to": 25.0, "reason": "why",
                "measured": "what"},
               {"id": "svd-z4", "ops": ["svd"], "dtypes": None,
                "shapes": None, "mcpu": "znver4", "up_to": 30.0,
                "reason": "why", "measured": "what"}]
    op_limits.apply_reasons(rows, reasons, "znver4")
    got = [(r["reason"], r["reason_exceeded"]) for r in rows]
    expect(got == [("small", None), (None, "small"), (None, None),
                   (None, None), ("svd-z4", None), (None, None)],
           f"reasons: {got}")
    expect(op_limits.flags_text(rows[0]) == "bound (reason: small)" and
           op_limits.flags_text(rows[1]) == "bound (past small's up_to)" and
           op_limits.flags_text(rows[2]) == "bound" and
           op_limits.flags_text(rows[5]) == "-",
           [op_limits.flags_text(r) for r in rows])
    # on another machine's model the svd reason does not apply
    op_limits.apply_reasons(rows, reasons, "icelake-server")
    expect(rows[4]["reason"] is None, f"mcpu: {rows[4]}")


@case("--mcpu: the entries of the machine's llvm-mca model apply, a "
      "hand-stated one where the model has none, other models' never")
def t_bounds_mcpu():
    def e(impl, mcpu, cyc):
        d = {"impl": impl, "cycles_per_element": cyc,
             "derivation": f"{mcpu or 'hand'} {cyc}"}
        if mcpu:
            d["mcpu"] = mcpu
        return d
    doc = bounds_file("b-models.json", [
        e("exp_f32_avx512", "icelake-server", 0.4),
        e("exp_f32_avx512", "znver4", 0.6),
        e("exp_f32_avx512", None, 9.0),
        e("log_f32_avx512", None, 2.0),
        e("tanh_f32_avx512", "znver4", 0.7)])
    for model, want in [
            ("znver4", {"exp_f32_avx512": 0.6, "log_f32_avx512": 2.0,
                        "tanh_f32_avx512": 0.7}),
            ("icelake-server", {"exp_f32_avx512": 0.4,
                                "log_f32_avx512": 2.0}),
            ("znver3", {"exp_f32_avx512": 9.0, "log_f32_avx512": 2.0})]:
        d = os.path.join(TMP, f"bm-{model}")
        p = script(["--bounds", doc, "--mcpu", model, "--config-only",
                    "-o", d])
        expect(p.returncode == 0, f"{model}: exit {p.returncode}: "
               f"{p.stderr[-500:]}")
        plan = cases_of(os.path.join(d, "plan.json"))
        got = {k: b["cycles_per_element"] for k, b in plan["bounds"].items()}
        expect(got == want and plan["bounds_mcpu"] == model,
               f"{model}: {got}, {plan.get('bounds_mcpu')}")
    # auto: this machine's model from /proc/cpuinfo
    sys.path.insert(0, os.path.abspath("scripts"))
    import op_limits
    cpuinfo = os.path.join(TMP, "cpuinfo")
    for vendor, flags, want in [
            ("AuthenticAMD", "fpu avx2 avx512f avx512bw", "znver4"),
            ("AuthenticAMD", "fpu avx2", "znver3"),
            ("GenuineIntel", "fpu avx2 avx512f", "icelake-server"),
            ("HygonGenuine", "fpu avx2", None)]:
        with open(cpuinfo, "w") as f:
            f.write(f"processor\t: 0\nvendor_id\t: {vendor}\n"
                    f"flags\t\t: {flags}\n\n")
        got = op_limits.host_mcpu(cpuinfo)
        expect(got == want, f"{vendor} {flags}: {got}, want {want}")
    expect(op_limits.host_mcpu(os.path.join(TMP, "nocpuinfo")) is None,
           "a missing cpuinfo")


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
    with open(os.path.join(d, "plan.json"), "w") as f:
        f.write('{"schema": "tbench.op_limits_plan/1", "rounds": 2, '
                '"bounds": {"x_f32_c": {}}}')
    p = script(["--from", d])
    one_line_error(p, os.path.join(d, "plan.json"), "not an op_limits.py "
                   "plan")


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
    # the chains' steps and the call floor (plan.json's aux: cases of
    # their own, not rows) apart
    aux = cases_of(os.path.join(d, "plan.json"))["aux"]
    auxk = {(a[0], json.dumps([a[1]])) for a in aux}
    expect(("copy", json.dumps([[[1]]])) in auxk and
           ("max", json.dumps([[[1024, 10]]])) in auxk and
           ("sub", json.dumps([[[1024, 10], [1024, 1]]])) in auxk and
           ("nll_loss", json.dumps([[[256, 1000], [256]]])) in auxk,
           f"aux: {sorted(auxk)}")
    every = cfg["ops"]
    cfg["ops"] = [e for e in every
                  if (e["op"], json.dumps(e["shapes"])) not in auxk]
    expect(len(every) - len(cfg["ops"]) == len(
        {(e["op"], json.dumps(e["shapes"])) for e in every} & auxk),
        "aux entries")
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
    expect(cfg["measure"] == dict(q["measure"], max_time_s=0.15) and
           cfg["seed"] == q["seed"],
           "measure not quick.json's with max_time_s 0.15, or seed")
    byop = {}
    for e in cfg["ops"]:
        byop.setdefault(e["op"], []).append(e)

    def numel(s):
        n = 1
        for x in s:
            n *= x
        return n
    # the ops of the entries for this machine's llvm-mca model (or stated
    # by hand), as plan.json names them
    plan = cases_of(os.path.join(d, "plan.json"))
    with open("docs/perf-data/compute-bounds.json", encoding="utf-8") as f:
        mine = [b for b in json.load(f)["bounds"]
                if b.get("mcpu") in (None, plan["bounds_mcpu"])]
    stated = {re.sub(r"_(f32|f64|bf16|f16)_\w+$", "", b["impl"])
              for b in mine}
    # the in-cache entries: the ops with a stated f32 bound (this run's
    # dtype), not those stated in other dtypes only
    stated32 = {re.sub(r"_f32_\w+$", "", b["impl"]) for b in mine
                if re.search(r"_f32_\w+$", b["impl"])}
    expect(stated == {b["op"] for b in plan["bounds"].values()},
           f"plan's bounds {sorted(plan['bounds'])} for "
           f"{plan['bounds_mcpu']}")
    # element-wise kinds: 2^20 elements in the quick entry's rank (the
    # in-cache entries of ops with a stated bound are checked below)
    for op, rank in [("neg", 1), ("add", 2), ("softplus", 1),
                     ("max", 2), ("zeros", 2), ("permute", 3),
                     ("relu_backward", 2), ("adam", 1), ("sub_", 1)]:
        for e in byop[op]:
            if op in stated32 and numel(e["shapes"][0]) == 4096:
                continue
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
    # the ops of docs/perf-data/compute-bounds.json also at 4096 elements
    # (in cache), the others not; a stated op that is not element-wise
    # (softmax's family) keeps its quick sizes only
    expect(stated32 and stated32 < stated,
           "no stated f32 bounds in docs/perf-data/compute-bounds.json, "
           "or none in another dtype only")
    for op, es in byop.items():
        sizes = sorted(numel(s) for e in es for s in e["shapes"]
                       if isinstance(s[0], int))
        if op in stated32 and (1 << 20) in sizes:
            expect(sizes == [4096, 1 << 20], f"{op}: sizes {sizes}")
        elif op in stated32:  # kept at its quick sizes (log_softmax)
            expect(4096 not in sizes, f"{op}: sizes {sizes}")
        elif op in ("neg", "zeros", "relu"):
            expect(sizes == [1 << 20], f"{op}: sizes {sizes}")


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


def peak_cache(env, gb_s, clock=True):
    """A peak cache for this machine whose every bandwidth is gb_s, and
    (clock) whose core clock is CLOCK_GHZ."""
    key = {"cpu_model": env["cpu"]["model"],
           "logical_cpus": env["cpu"]["logical_cpus"],
           "tbench_version": env["build"]["tbench_version"],
           "method": PEAK_METHOD}
    bw = [{"kernel": k, "level": lv, "threads": t,
           "working_set_bytes": 1 << 20, "best_gb_s": gb_s,
           "median_gb_s": gb_s, "worst_gb_s": gb_s, "spread": 0.0}
          for k in ("copy", "add", "triad", "read", "update")
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
    if clock:
        peaks["clock"] = {"method": "dependent-add chain", "threads": 1,
                          "chain_adds": 64, "repetitions": 21,
                          "best_ghz": CLOCK_GHZ, "median_ghz": CLOCK_GHZ,
                          "worst_ghz": CLOCK_GHZ, "spread": 0.0}
    return write(f"cache-{gb_s:g}-{int(clock)}.json", json.dumps(
        {"schema": "tbench.peak-cache/1", "entries": [peaks]}))


STATE = {}


@case("tiny run without peaks: every case in the table, no bounds")
def t_tiny_nopeaks():
    d = os.path.join(TMP, "tiny0")
    p = script(TINY + ["-o", d, "--rounds", "1"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    res = cases_of(os.path.join(d, "run", "results.json"))
    STATE["env"] = res["env"]
    STATE["rand_impl"] = {c["impl"] for c in res["cases"]
                          if c["op"] == "rand_uniform"}
    head, rows = rows_of(p.stdout)
    # the in-cache rand_uniform (4096 elements) is not a row
    probes = [c for c in res["cases"] if c["op"] == "rand_uniform" and
              c["shapes"] == [[4096]]]
    expect(len(probes) == 1, f"{len(probes)} in-cache rand_uniform cases")
    expect(len(rows) == len(res["cases"]) - 1 > 0,
           f"{len(rows)} rows for {len(res['cases'])} cases")
    expect(all(r[6] == "-" and r[8] == "-" for r in rows),
           "a bound without peaks")
    expect("No bound (" in p.stdout, "the no-bound note is missing")
    expect(not os.path.exists(os.path.join(d, "run-2")) and
           not os.path.exists(os.path.join(d, "peers-2.json")),
           "a second round at --rounds 1")
    with open(os.path.join(d, "limits.md"), encoding="utf-8") as f:
        expect(f.read() == p.stdout, "limits.md differs from stdout")


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * abs(b)


def check_tiny(d, md, expect_bound_flags, nr):
    runs = [cases_of(os.path.join(d, "run" if r == 1 else f"run-{r}",
                                  "results.json")) for r in range(1, nr + 1)]
    peers = [cases_of(os.path.join(d, "peers.json" if r == 1 else
                                   f"peers-{r}.json"))
             for r in range(1, nr + 1)]
    expect(not os.path.exists(os.path.join(d, f"run-{nr + 1}")),
           f"more than {nr} rounds")
    lim = cases_of(os.path.join(d, "limits.json"))
    plan = cases_of(os.path.join(d, "plan.json"))
    expect(plan["rounds"] == nr and plan["elements"] == 1024 and
           plan["probe_elements"] == 4096, f"plan: {plan}")
    expect(lim["meta"]["rounds"] == nr, "meta.rounds")
    res = runs[0]
    head, rows = rows_of(md)
    cols = [c.strip() for c in head.strip("|").split("|")]
    expect(cols[:3] == ["case", "category", "shapes"] and
           cols[6:11] == ["bound", "bound kind", "ratio",
                          "vs run's copy/read", "NumPy"] and
           cols[-2:] == ["vs best peer", "flags"], f"header: {cols}")
    # each round's own copy and read: ns per byte of the copy op and the
    # global sum (the script must find the same)
    rates = []
    for run in runs:
        rate = {}
        for c in run["cases"]:
            k = "copy" if c["op"] == "copy" else "read" if (
                c["op"] == "sum" and "axis" not in c["params"]) else None
            if k:
                rate[k] = c["stats"]["median_ns"] / c["model"]["bytes"]
        rates.append(rate)
    by_id = [{c["id"]: c for c in run["cases"]} for run in runs]
    probe = {c["id"] for c in res["cases"]
             if c["op"] == "rand_uniform" and c["shapes"] == [[4096]]}
    cases = [c for c in res["cases"] if c["id"] not in probe]
    expect(len(probe) == 1 and len(rows) == len(cases) ==
           len(lim["rows"]), "rows do not match the cases")
    pk = []
    for pr in peers:
        m = {}
        for c in pr["cases"]:
            if c["status"] == "ok":
                m.setdefault(c["id"].rsplit("/", 1)[0], {}).setdefault(
                    c["backend"], {})[c["backend_params"]["form"]] = (
                        c["stats"]["median_ns"], c["stats"]["ci_high_ns"])
        pk.append(m)
    flagged = set()
    for c, row, j in zip(cases, rows, lim["rows"]):
        expect(row[0] == c["id"].split("/")[0], f"{row[0]} vs {c['id']}")
        expect(j["id"] == c["id"], f"json row {j['id']} vs {c['id']}")
        meds = [b[c["id"]]["stats"]["median_ns"] for b in by_id]
        med = median(meds)
        expect(j["rounds_median_ns"] == meds and close(j["median_ns"], med),
               f"{c['id']}: time {j['median_ns']} is not the median of "
               f"{meds}")
        rl = c["roofline"]
        expect(rl is not None, f"{c['id']}: no roofline")
        bound = rl["min_time_ns"]
        if c["op"] == "rand_uniform":
            n = c["out_shapes"][0][0]
            comp = n * STATED / CLOCK_GHZ
            st = j["stated"]
            expect(close(st["compute_ns"], comp) and
                   st["clock_ghz"] == CLOCK_GHZ and
                   st["cycles_per_element"] == STATED,
                   f"stated: {st}")
            pid = next(iter(probe))
            pm = median(b[pid]["stats"]["median_ns"] for b in by_id)
            expect(st["in_cache_id"] == pid and
                   close(st["in_cache_ns_per_element"], pm / 4096),
                   f"in cache: {st}")
            expect(f"`{c['impl']}`: stated 1000 cycles/elem = 500 ns/elem "
                   "at 2.00 GHz" in md, "the stated bound's line")
            if comp > bound:
                bound = comp
                expect(row[7] == "compute (stated, 1000 cycles/elem at "
                       "2.00 GHz)", f"bound kind: {row[7]}")
            else:
                expect(row[7].startswith("memory ("),
                       f"bound kind: {row[7]}")
        else:
            expect(j["stated"] is None, f"{c['id']}: stated {j['stated']}")
        expect(close(j["bound_ns"], bound), f"{c['id']}: bound "
               f"{j['bound_ns']} != {bound}")
        ratio = med / bound
        expect(close(j["ratio"], ratio), f"{c['id']}: ratio {j['ratio']} "
               f"!= {ratio}")
        expect(row[8] == f"{ratio:.2f}x", f"{c['id']}: {row[8]}")
        rk = "read" if c["category"] == "reduction" else "copy"
        if all(rk in r for r in rates):
            v = median(m / (c["model"]["bytes"] * r[rk])
                       for m, r in zip(meds, rates))
            expect(close(j["vs_run_bound"], v) and row[9] == f"{v:.2f}x",
                   f"{c['id']}: vs run {row[9]}")
        else:
            expect(j["vs_run_bound"] is None and row[9] == "-",
                   f"{c['id']}: vs run without a {rk} case")
        key = c["id"].rsplit("/", 1)[0]
        if key.startswith("add@alloc"):
            expect(j["numpy_ns"] is not None, "alloc case has no peer")
        elif key in pk[0]:
            # per round: tbench over the numpy form fastest in the other
            # rounds (held out), CIs apart from the lowest CI high
            fm = [m[key]["numpy"] for m in pk]
            held = []
            for r in range(nr):
                oth = {f: median(fm[s][f][0] for s in range(nr)
                                 if s != r and f in fm[s])
                       for f in fm[r] if any(f in fm[s] for s in range(nr)
                                             if s != r)}
                f = (min(oth, key=lambda f: (oth[f], f)) if oth else
                     min(fm[r], key=lambda f: (fm[r][f][0], f)))
                held.append(fm[r][f][0])
            best = [min(x.values()) for x in fm]
            his = [min(x[1] for x in m.values()) for m in fm]
            vs = [b[c["id"]]["stats"]["median_ns"] / x
                  for b, x in zip(by_id, held)]
            apart = sum(b[c["id"]]["stats"]["ci_low_ns"] > h
                        for b, h in zip(by_id, his))
            expect(close(j["numpy_ns"], median(x[0] for x in best)),
                   f"{key}: numpy {j['numpy_ns']} is not the median of "
                   "the faster forms")
            expect(close(j["vs_best_peer"], median(vs)) and
                   len(j["vs_best_peer_rounds"]) == nr and
                   all(close(a, b) for a, b in
                       zip(j["vs_best_peer_rounds"], vs)) and
                   j["vs_best_peer_range"] == [min(vs), max(vs)],
                   f"{key}: vs peer {j['vs_best_peer']}, "
                   f"{j['vs_best_peer_rounds']}")
            want = f"{median(vs):.2f}x" + (
                f" ({min(vs):.2f}-{max(vs):.2f})" if nr > 1 else "")
            expect(row[12] == want, f"{key}: column {row[12]} != {want}")
            expect(("peer" in j["flags"]) ==
                   (all(v > 1 for v in vs) and 2 * apart > nr),
                   f"{key}: peer flag {j['flags']}, rounds {vs}, "
                   f"apart {apart}")
            expect(j["peer_rounds_apart"] == apart, f"{key}: apart")
        expect(j["torch_ns"] is None, "torch was switched off")
        if "bound" in j["flags"]:
            flagged.add(c["op"])
        expect(("bound" in j["flags"]) ==
               (ratio > 1.3 and c["category"] != "calibration"),
               f"{c['id']}: bound flag {j['flags']} at ratio {ratio}")
        expect(("bound" in row[13]) == ("bound" in j["flags"]),
               f"{c['id']}: flags column {row[13]}")
    if expect_bound_flags:
        # every bound tiny, but rand_uniform's stated one is huge
        expect(flagged == {"add", "neg", "sum", "zeros", "relu_", "copy",
                           "matmul"},
               f"flagged: {sorted(flagged)}")
        expect(sorted(lim["above_bound"]) ==
               sorted(r["id"] for r in lim["rows"] if "bound" in r["flags"]),
               "above_bound list")
        expect(re.search(r"Above 1\.3x their bound \(\d+(; [a-z]+ \d+)+\): ", md),
               "the above-bound line is missing")
        expect("**Warning**: fixture note: measured under load" in md,
               "the peaks' note is not shown")
        expect("the peaks understate" not in md and
               lim["meta"]["bounds_warning"] is None,
               "bounds warning at tiny bounds")
    else:
        expect(not flagged, f"flagged at a huge bound: {sorted(flagged)}")
        # no peaks note; but the run's copy beat its (huge) bound
        cp = next(r for r in lim["rows"] if r["op"] == "copy" or (
            r["op"] == "sum" and "axis" not in r["params"]))
        want = (f"**Warning**: the run's own {cp['op']} took "
                f"{cp['ratio']:.2f}x its bound ({cp['bound']})")
        expect(md.count("**Warning**") == 2 and want in md and
               "run `tbench peak` again on a quiet machine" in md and
               lim["meta"]["bounds_warning"] in md,
               "the bounds warning at huge bounds: "
               f"{[x for x in md.splitlines() if 'Warning' in x]}")
    # the fixture's stated bound (far above any time) is beaten: named
    sw = lim["meta"]["stated_warning"] or ""
    expect(sw.startswith("ran faster than its stated compute bound "
                         "allows: ") and
           all(i in sw for i in STATE["rand_impl"]) and
           f"**Warning**: {sw}" in md, f"stated warning: {sw!r}")


@case("tiny run with peaks, 2 rounds: times, bounds, peers and flags")
def t_tiny_peaks():
    if "env" not in STATE:
        return "SKIP the run without peaks failed"
    bounds = bounds_file("tiny-bounds.json", [
        {"impl": i, "cycles_per_element": STATED,
         "derivation": "a fixture: far above any time"}
        for i in sorted(STATE["rand_impl"])])
    for gb_s, flags in ((1e9, True), (1e-9, False)):
        cache = peak_cache(STATE["env"], gb_s)
        d = os.path.join(TMP, f"tiny-{gb_s:g}")
        p = script(TINY + ["-o", d, "--peers", "numpy", "--rounds", "2",
                           "--bounds", bounds],
                   env={"TBENCH_PEAK_CACHE": cache})
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
        check_tiny(d, p.stdout, flags, 2)
        # round 1 tbench first, round 2 the peers first (each side's
        # file is written when that side ends)
        mt = {f: os.stat(os.path.join(d, f)).st_mtime_ns for f in
              ("run/results.json", "peers.json", "run-2/results.json",
               "peers-2.json")}
        expect(mt["run/results.json"] < mt["peers.json"] <
               mt["peers-2.json"] < mt["run-2/results.json"],
               f"the sides' order: {sorted(mt, key=mt.get)}")
        # --from renders the same table from the files
        q = script(["--from", d])
        expect(q.returncode == 0, f"--from exit {q.returncode}: {q.stderr}")
        expect(rows_of(q.stdout)[1] == rows_of(p.stdout)[1],
               "--from gives another table")
        # dated by the run, not by the rendering
        res = json.load(open(os.path.join(d, "run", "results.json")))
        when = res["env"]["date"][:16].replace("T", " ") + " UTC"
        expect(q.stdout.startswith(f"# Every op at the machine's limit "
                                   f"({when})"),
               f"title {q.stdout.splitlines()[0]!r}, run of {when}")
        # --from --bounds: the same times against other stated bounds
        # (none here: the fixture's stated rows fall to their roofs)
        q = script(["--from", d, "--bounds", "none"])
        hdr, rows = rows_of(q.stdout)
        kind = hdr.strip("|").split("|").index(" bound kind ")
        impl = hdr.strip("|").split("|").index(" impl ")
        mine = [r for r in rows if r[impl] in STATE["rand_impl"]]
        expect(mine and not any("stated" in r[kind] for r in mine),
               f"--bounds none kept stated bounds: {mine}")
        q = script(["--from", d, "--bounds", bounds])
        expect(rows_of(q.stdout)[1] == rows_of(p.stdout)[1],
               "--from --bounds with the run's own file gives another "
               "table")


def synth_round(cases):
    """A round's (results, peers) docs: cases = [(name, tbench (median,
    ci_low), numpy's out form (median, ci_low, ci_high)[, its alloc
    form])]."""
    res, peers = [], []
    for name, tb, np_, *alloc in cases:
        cid = f"{name}/1024/f32/cpu[isa=auto,threads=1]"
        res.append({"id": cid, "op": name, "category": "elementwise",
                    "status": "ok", "shapes": [[1024]], "params": {},
                    "backend": "cpu", "impl": f"{name}_f32_c",
                    "model": {"bytes": 8192}, "roofline": None,
                    "stats": {"median_ns": tb[0], "ci_low_ns": tb[1]}})
        for form, st in [("out", np_)] + [("alloc", a) for a in alloc]:
            peers.append({
                "id": f"{name}/1024/f32/numpy[threads=1,form={form}]",
                "backend": "numpy", "status": "ok",
                "backend_params": {"threads": "1", "form": form},
                "stats": {"median_ns": st[0], "ci_low_ns": st[1],
                          "ci_high_ns": st[2]}})
    return {"cases": res}, {"cases": peers}


@case("peer flag: slower in every round, CIs apart in a majority")
def t_peer_rule():
    import op_limits
    slow_apart = ((110, 105), (100, 95, 102))     # slower, CIs apart
    slow_touch = ((110, 101), (100, 95, 102))     # slower, CIs overlap
    fast = ((90, 85), (100, 95, 102))             # faster
    # the faster form's CI is wide, the other form's is below tbench's
    wide = ((110, 105), (100, 95, 200), (101, 99, 103))
    wide_touch = ((110, 104), (100, 95, 200), (101, 99, 104.5))
    plan = {"elements": 1024, "probe_elements": 4096}
    for rounds, want in [
            ([[slow_apart]], True),
            ([[slow_touch]], False),
            ([[slow_apart], [slow_apart]], True),
            ([[slow_apart], [slow_touch]], False),       # 1 of 2: no
            ([[slow_apart], [slow_apart], [slow_touch]], True),  # 2 of 3
            ([[slow_apart], [slow_touch], [slow_touch]], False),
            ([[slow_apart], [slow_apart], [fast]], False),  # not every
            ([[fast], [fast], [fast]], False),
            ([[wide], [wide], [slow_touch]], True),
            ([[wide_touch], [wide_touch], [wide]], False)]:
        docs = [synth_round([("neg",) + tuple(c) for c in r])
                for r in rounds]
        (row,) = op_limits.build_rows(docs, {}, plan, 1.5)
        vs = [r[0][0][0] / r[0][1][0] for r in rounds]
        expect(("peer" in row["flags"]) == want,
               f"{len(rounds)} rounds, ratios {vs}: flags {row['flags']}")
        expect(close(row["vs_best_peer"], median(vs)) and
               row["vs_best_peer_range"] == [min(vs), max(vs)],
               f"vs peer {row['vs_best_peer']} {row['vs_best_peer_range']}")
        expect(close(row["median_ns"], median(r[0][0][0] for r in rounds))
               and close(row["numpy_ns"], 100), f"times: {row}")


@case("best peer held out: chosen in the other rounds, compared in this one")
def t_peer_held_out():
    import op_limits
    plan = {"elements": 1024, "probe_elements": 4096}

    def rounds_doc(rounds):
        """rounds: [(tbench (median, ci_low), {lib: (median, lo, hi)})]"""
        docs = []
        for tb, libs in rounds:
            res, _ = synth_round([("neg", tb, (1, 1, 1))])
            peers = [{"id": f"neg/1024/f32/{lib}[threads=1,form=out]",
                      "backend": lib, "status": "ok",
                      "backend_params": {"threads": "1", "form": "out"},
                      "stats": {"median_ns": t[0], "ci_low_ns": t[1],
                                "ci_high_ns": t[2]}}
                     for lib, t in libs.items()]
            docs.append((res, {"cases": peers}))
        return docs

    # numpy's noise ran low in round 1, torch's in round 2: the fastest
    # in each round makes tbench look behind in both; held out, round 1
    # is compared with torch (fastest in round 2), round 2 with numpy
    tb = (106, 105.5)
    docs = rounds_doc([(tb, {"numpy": (100, 99, 101),
                             "torch": (105, 104, 105.2)}),
                       (tb, {"numpy": (110, 109, 111),
                             "torch": (104, 103, 104.5)})])
    (row,) = op_limits.build_rows(docs, {}, plan, 1.5)
    want = [106 / 105, 106 / 110]
    expect(all(close(a, b) for a, b in zip(row["vs_best_peer_rounds"], want))
           and row["best_peer_rounds_ns"] == [105, 110],
           f"held out: {row['vs_best_peer_rounds']} "
           f"{row['best_peer_rounds_ns']}, want {want}")
    expect("peer" not in row["flags"], f"flags {row['flags']}")
    # a peer fastest everywhere is chosen everywhere: still flagged
    docs = rounds_doc([(tb, {"numpy": (100, 99, 101),
                             "torch": (105, 104, 105.2)}),
                       (tb, {"numpy": (101, 100, 102),
                             "torch": (104, 103, 104.5)})])
    (row,) = op_limits.build_rows(docs, {}, plan, 1.5)
    expect(row["best_peer_rounds_ns"] == [100, 101] and
           "peer" in row["flags"],
           f"consistent peer: {row['best_peer_rounds_ns']} {row['flags']}")
    # one round: the fastest in it
    (row,) = op_limits.build_rows(docs[:1], {}, plan, 1.5)
    expect(row["best_peer_rounds_ns"] == [100], f"one round: {row}")


def synth_case(op, shapes, params, med, roof, dtype="f32", cat=None,
               impl=None):
    """A hand-built tbench result case: median med ns, roofline roof ns
    (memory, L2 add)."""
    sh = "x".join(str(d) for d in shapes[0])
    return {"id": f"{op}/{sh}/{dtype}/cpu[isa=auto,threads=1]",
            "op": op, "category": cat or "elementwise", "status": "ok",
            "dtype": dtype, "shapes": shapes, "params": params,
            "backend": "cpu", "impl": impl or f"{op}_{dtype}_c",
            "model": {"bytes": 8192}, "out_shapes": [shapes[0]],
            "roofline": {"min_time_ns": roof, "bound": "memory",
                         "bw_kernel": "add", "level": "L2"},
            "stats": {"median_ns": med, "ci_low_ns": med}}


@case("chain bound (sum of the steps' bounds) and call floor, hand-built")
def t_chain_floor():
    import op_limits
    x, r = [64, 10], [64, 1]
    # log_softmax_unfused's six steps as op.c runs them, bounds 10..50 ns
    # (the second sub is the first one's case: 20 ns)
    steps = op_limits.chain_steps("log_softmax_unfused", [x],
                                  {"axis": -1})
    expect([s[0] for s in steps] == ["max", "sub", "exp", "sum", "log",
                                     "sub"] and
           steps[1][1] == [x, r] and steps[4][1] == [r] and
           steps[0][2] == {"axis": -1, "keepdim": True},
           f"steps: {steps}")
    cases = [synth_case("log_softmax_unfused", [x], {"axis": -1}, 500.0,
                        10.0, cat="unfused")]
    aux = []
    for k, (op, shp, params) in enumerate(steps[:5]):
        cases.append(synth_case(op, shp, params, 50.0 + k,
                                float(10 * (k + 1))))
        aux.append([op, shp, params, "f32"])
    # the floor: a copy of 1 element at 30 ns
    cases.append(synth_case("copy", [[1]], {}, 30.0, 0.01))
    aux.append(["copy", [[1]], {}, "f32"])
    # a tiny case (bound 5 ns: below the floor), a big one (100 ns: not),
    # a calibration case (no floor: its time is what it asks for)
    cases.append(synth_case("nll_loss", [[8, 4], [8]], {}, 90.0, 5.0))
    cases.append(synth_case("neg", [[4096]], {}, 120.0, 100.0))
    cases.append(synth_case("calib_spin", [[1]], {}, 40.0, 1.0,
                            cat="calibration"))
    plan = {"elements": 1024, "probe_elements": 4096, "aux": aux}
    # step 6 (sub, the same case as step 2) is found among the cases
    rows = op_limits.build_rows([({"cases": cases}, None)], {}, plan, 1.3)
    byop = {r["op"]: r for r in rows}
    expect(sorted(byop) == ["calib_spin", "log_softmax_unfused", "neg",
                            "nll_loss"],
           f"rows {sorted(byop)}: the steps and the floor are not rows")
    u = byop["log_softmax_unfused"]
    want = 10 + 20 + 30 + 40 + 50 + 20
    expect(close(u["bound_ns"], want) and
           u["bound"].startswith("chain (6 steps; fused op's 10 ns") and
           close(u["fused_bound_ns"], 10.0) and
           close(u["ratio"], 500.0 / want),
           f"chain: {u['bound_ns']} {u['bound']} {u['fused_bound_ns']}")
    expect([s["op"] for s in u["chain"]] == [s[0] for s in steps] and
           close(u["chain"][5]["median_ns"], 51.0) and
           close(u["chain"][5]["ratio"], 51.0 / 20),
           f"chain steps: {u['chain']}")
    n = byop["nll_loss"]
    expect(close(n["bound_ns"], 30.0) and n["bound"] == "call floor" and
           close(n["ratio"], 3.0) and "bound" in n["flags"] and
           close(n["call_floor_ns"], 30.0), f"floor: {n}")
    expect(close(byop["neg"]["bound_ns"], 100.0) and
           byop["neg"]["bound"].startswith("memory"),
           f"above the floor: {byop['neg']}")
    expect(close(byop["calib_spin"]["bound_ns"], 1.0),
           f"calibration: {byop['calib_spin']}")
    # a step that did not run: no chain, the fused op's bound
    plan2 = dict(plan, aux=aux[1:])
    rows = op_limits.build_rows([({"cases": cases[:1] + cases[2:]}, None)],
                                {}, plan2, 1.3)
    u = next(r for r in rows if r["op"] == "log_softmax_unfused")
    expect(u["chain"] is None and close(u["fused_bound_ns"] or 10.0, 10.0)
           and close(u["memory_bound_ns"], 10.0) and
           close(u["bound_ns"], 30.0) and u["bound"] == "call floor",
           f"no max step: {u}")
    # a stated compute bound of a step counts (1000 cycles/elem at 2 GHz
    # of exp's 640 output elements: 320 us)
    res = {"cases": cases, "peaks": {"clock": {"median_ghz": 2.0}}}
    exp_impl = {"exp_f32_c": {"op": "exp", "cycles_per_element": 1000.0,
                              "derivation": "fixture"}}
    rows = op_limits.build_rows([(res, None)], exp_impl, plan, 1.3)
    u = next(r for r in rows if r["op"] == "log_softmax_unfused")
    expect(close(u["bound_ns"], want - 30 + 640 * 1000 / 2.0),
           f"stated step: {u['bound_ns']}")
    # the markdown names the chain's steps and the floor
    meta = {"rounds": 1, "date": "-", "command": "-",
            "tbench_version": "-", "git_commit": "-", "build_type": "-",
            "loadavg": "-", "peaks": "-", "time_note": "-",
            "bounds_file": "-", "call_floor_ns": 30.0}
    md = op_limits.markdown(
        op_limits.build_rows([({"cases": cases}, None)], {}, plan, 1.3),
        meta, 1.3)
    expect("Chains of the unfused cases (1;" in md and
           "- log_softmax_unfused 64x10 (f32): max 64x10 50 ns / 10 ns = "
           "5.00x; sub 64x10,64x1" in md and
           "Call floor: 30 ns" in md, "markdown: " + md[-1500:])


@case("chain table: each unfused op of tbench list has its steps here")
def t_chain_table():
    import op_limits
    p = subprocess.run([TBENCH, "list", "--json"], capture_output=True,
                       text=True)
    ops = {o["name"]: o for o in json.loads(p.stdout)["ops"]}
    unf = [o for o in ops if ops[o]["category"] == "unfused"]
    expect(len(unf) >= 5, f"unfused ops: {unf}")
    op_limits.check_chain_table(ops)   # exits on a mismatch
    bad = dict(ops)
    bad[unf[0]] = dict(ops[unf[0]], steps=ops[unf[0]]["steps"][::-1])
    try:
        op_limits.check_chain_table(bad)
        expect(False, "a changed step list was not found")
    except SystemExit as e:
        expect(e.code == 2, f"exit {e.code}")


@case("a stated bound counts the elements its loop visits: a reduction's input")
def t_stated_reduction():
    import op_limits
    plan = {"elements": 1024, "probe_elements": 4096}
    res = {"peaks": {"clock": {"median_ghz": 2.0}}, "cases": [{
        "id": "cross_entropy/256x1000,256/f64/cpu[isa=auto,threads=1]",
        "op": "cross_entropy", "category": "backward", "status": "ok",
        "shapes": [[256, 1000], [256]], "out_shapes": [[1]],
        "params": {}, "backend": "cpu", "impl": "cross_entropy_f64_k",
        "model": {"bytes": 8192}, "roofline": {"min_time_ns": 1000.0},
        "stats": {"median_ns": 300000.0, "ci_low_ns": 299000.0}}]}
    bounds = {"cross_entropy_f64_k": {"op": "cross_entropy",
                                      "cycles_per_element": 2.0,
                                      "derivation": "fixture"}}
    (row,) = op_limits.build_rows([(res, None)], bounds, plan, 1.3)
    want = 256000 * 2.0 / 2.0
    expect(close(row["stated"]["compute_ns"], want) and
           close(row["bound_ns"], want) and close(row["ratio"], 300000 / want),
           f"stated {row['stated']}, bound {row['bound_ns']}, want {want}")


@case("peaks without a core clock: the stated bounds say so, not applied")
def t_no_clock():
    if "env" not in STATE:
        return "SKIP the run without peaks failed"
    cache = peak_cache(STATE["env"], 1e9, clock=False)
    bounds = bounds_file("tiny-bounds2.json", [
        {"impl": i, "cycles_per_element": STATED, "derivation": "fixture"}
        for i in sorted(STATE["rand_impl"])])
    d = os.path.join(TMP, "noclock")
    p = script(["--elements", "1024", "--ops", "rand_uniform,copy",
                "--max-time", "0.02", "--peaks", "cached", "--peers",
                "none", "--rounds", "1", "--bounds", bounds, "-o", d,
                "--call-floor", "off"],
               env={"TBENCH_PEAK_CACHE": cache})
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    expect("**Note**: the peaks have no core clock" in p.stdout,
           "no note on the missing clock")
    lim = cases_of(os.path.join(d, "limits.json"))
    r = next(x for x in lim["rows"] if x["op"] == "rand_uniform")
    expect(r["bound"].startswith("memory (") and
           r["stated"]["compute_ns"] is None and "bound" in r["flags"],
           f"row: {r['bound']}, {r['stated']}, {r['flags']}")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


if __name__ == "__main__":
    sys.exit(run_cases(cleanup))
