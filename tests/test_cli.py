#!/usr/bin/python3
"""CLI tests for tbench, printed as TAP.

Usage: test_cli.py PATH/TO/tbench   (run from the repository root)

Runs the real executable on tiny configs and checks exit codes, error
messages, and that results.json validates against
docs/results.schema.json (python3-jsonschema) and agrees with
results.csv.  Needs Debian's python3-jsonschema: run with /usr/bin/python3.
"""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

import jsonschema
import numpy as np

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-cli-")

TINY = """// tiny matrix for the CLI tests
{
  "name": "tiny",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 5, "max_samples": 50,
              "ci_target": 0.05, "max_time_s": 0.1, "rounds": 2},
  "dtypes": ["f32", "f64"],
  "backends": ["cpu", "cuda"],
  "ops": [
    {"op": "add", "shapes": [[7, 13], [[3, 1, 5], [1, 4, 5]]]},
    {"op": "sum", "shapes": [[33, 5]], "params": [{}, {"axis": 0}]},
    {"op": "matmul", "shapes": [[[5, 7], [7, 3]]]},
    {"op": "log_softmax", "shapes": [[4, 10]]}
  ]
}
"""




def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args, timeout=300):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=timeout)




def expect_usage_error(p, *needles):
    expect(p.returncode == 2, f"exit {p.returncode}, want 2: {p.stderr}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(len(lines) >= 1, "no error message")
    expect(lines[0].startswith("tbench: "), f"bad message: {lines[0]}")
    for n in needles:
        expect(n in lines[0], f"'{n}' not in: {lines[0]}")


@case("run tiny config: exit 0, JSON valid against schema, CSV agrees")
def t_run():
    cfg = write("tiny.json", TINY)
    out = os.path.join(TMP, "out")
    p = run("run", cfg, "-o", out)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    expect(doc["complete"] is True, "run not complete")
    cases = doc["cases"]
    # every counter written is documented: the schema lets counters newer
    # than its list through as numbers >= 0, FORMAT.md must name each
    fmt = open("docs/FORMAT.md", encoding="utf-8").read()
    sect = fmt[fmt.index("### `counters`"):]
    sect = sect[:sect.index("\n### ", 1)]
    for k in cases[0]["counters"]:
        expect(f"`{k}`" in sect, f"counter {k} missing from docs/FORMAT.md")
    # 2 add shapes + 2 sum paramsets + matmul + log_softmax = 6, x 2
    # dtypes x 2 backends
    expect(len(cases) == 24, f"{len(cases)} cases")
    for c in cases:
        if c["backend"] == "cpu":
            expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
            s = c["stats"]
            expect(len(s["samples_ns"]) == s["n"], "samples != n")
            expect(s["rounds"] == 2 and len(s["round_medians_ns"]) == 2,
                   f"rounds {s['rounds']}")
            expect(s["min_ns"] <= s["median_ns"] <= s["max_ns"], "order")
            expect(s["ci_low_ns"] <= s["median_ns"] <= s["ci_high_ns"],
                   "ci")
            expect(c["counters"]["kernel_launches"] == 1,
                   f"{c['id']}: kernels/iter "
                   f"{c['counters']['kernel_launches']}")
            expect(c["check"]["passed"], "check")
            expect(c["impl"], "impl missing")
        else:
            expect(c["status"] == "unavailable" and c["message"],
                   f"{c['id']}: {c['status']}")
    s = doc["summary"]
    expect(s["cases"] == 24 and s["ok"] == 12 and s["unavailable"] == 12,
           f"summary {s}")
    with open(os.path.join(out, "results.csv"), newline="") as f:
        first = f.readline()
        rows = list(csv.DictReader(f))
    b = doc["env"]["build"]
    expect(first == f"# tbench {b['tbench_version']}, commit "
           f"{b['git_commit']}, host {doc['env']['hostname']}, "
           f"{doc['env']['date']}; every other figure: results.json\n",
           f"csv provenance line {first!r}")
    expect(len(rows) == len(cases), "csv rows")
    for r, c in zip(rows, cases):
        expect(r["id"] == c["id"] and r["status"] == c["status"], "csv id")
        n = 1
        for d in c["shapes"][0]:
            n *= d
        bp = c["backend_params"]
        expect(int(r["size"]) == n and r["isa"] == bp.get("isa", "") and
               r["threads"] == (bp["threads"] if bp.get("threads", "auto")
                                != "auto" else ""),
               f"csv size/threads/isa {r['size']} {r['threads']} "
               f"{r['isa']} of {c['id']}")
        if c["stats"]:
            expect(abs(float(r["median_ns"]) - c["stats"]["median_ns"])
                   <= 1e-9 * c["stats"]["median_ns"] + 1e-6,
                   "csv median")
    expect("median" in p.stdout and "add/7x13,7x13/f32/cpu" in p.stdout,
           "no table on stdout")
    expect(not [f for f in os.listdir(out) if ".tmp." in f],
           "temporary files left")


@case("env records what changes the run: variables, CPU affinity, the "
      "module's source (reliability review D15, D6)")
def t_env_process():
    cfg = write("tiny1.json", TINY)
    out = os.path.join(TMP, "envp")
    env = dict(os.environ, OMP_NUM_THREADS="3", MALLOC_ARENA_MAX="2",
               GLIBC_TUNABLES="glibc.malloc.check=0")
    p = subprocess.run([TBENCH, "run", cfg, "-o", out, "-f", "add*", "-q"],
                       capture_output=True, text=True, env=env,
                       preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    expect(p.returncode == 0, p.stderr)
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    pr = doc["env"]["process"]
    v = pr["variables"]
    expect(v.get("OMP_NUM_THREADS") == "3" and
           v.get("MALLOC_ARENA_MAX") == "2" and
           v.get("GLIBC_TUNABLES") == "glibc.malloc.check=0", str(v))
    expect("PATH" not in v and "HOME" not in v, "unrelated variables kept")
    expect(pr["affinity"] == "0" and pr["affinity_cpus"] == 1, str(pr))
    w = doc["env"]["warnings"]
    expect(any("GLIBC_TUNABLES is set" in x for x in w), str(w))
    if os.cpu_count() > 1:
        expect(any("may run on 1 of the" in x for x in w), str(w))
    # an executable outside the build tree (installed, or a copy) never
    # loads modules from the build tree; the build's own one does
    copy = os.path.join(TMP, "tbench-copy")
    shutil.copy(TBENCH, copy)
    lists = {}
    for exe in (TBENCH, copy):
        p = subprocess.run([exe, "list", "--json"], capture_output=True,
                           text=True)
        lists[exe] = {b["name"]: b for b in json.loads(p.stdout)["backends"]}
    why = lists[copy]["cuda"].get("reason") or ""
    build_dir = os.path.dirname(TBENCH)
    expect(build_dir not in why, f"the copy looked in the build tree: {why}")
    own = lists[TBENCH]["cuda"].get("reason") or ""
    if "not built" not in own:     # a build with the CUDA module
        expect("could not be loaded" not in own,
               f"the build's own tbench did not load its module: {own}")
        expect("could not be loaded" in why, why)


@case("run writes under results/ when -o is absent")
def t_default_dir():
    cfg = write("tiny2.json", TINY)
    cwd = os.path.join(TMP, "cwd")
    os.makedirs(cwd)
    p = subprocess.run([TBENCH, "run", cfg, "--filter", "relu*", "-q"],
                       capture_output=True, text=True, cwd=cwd)
    expect(p.returncode == 2 and "no case" in p.stderr,
           f"filter without match: {p.returncode} {p.stderr}")
    p = subprocess.run([TBENCH, "run", cfg, "--filter", "add/7x13*", "-q"],
                       capture_output=True, text=True, cwd=cwd)
    expect(p.returncode == 0, p.stderr)
    dirs = os.listdir(os.path.join(cwd, "results"))
    expect(len(dirs) == 1 and dirs[0].endswith("-tiny"), f"dirs {dirs}")
    doc = json.load(open(os.path.join(cwd, "results", dirs[0],
                                      "results.json")))
    expect(len(doc["cases"]) == 4, f"filter kept {len(doc['cases'])}")


@case("--filter takes ids as printed, repeats as a union; --exclude")
def t_filter_ids():
    cfg = write("tiny3.json", TINY)
    out = os.path.join(TMP, "f_all")
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out],
                       capture_output=True, text=True)
    expect(p.returncode == 0, p.stderr)
    ids = [c["id"] for c in json.load(open(os.path.join(
        out, "results.json")))["cases"]]
    expect(len(ids) >= 3 and "[" in ids[0] and "[" in ids[2], f"{ids}")

    def kept(*args):
        o = os.path.join(TMP, "f_%d" % len(os.listdir(TMP)))
        p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", o, *args],
                           capture_output=True, text=True)
        if p.returncode:
            return p.returncode, p.stderr
        return 0, [c["id"] for c in json.load(open(os.path.join(
            o, "results.json")))["cases"]]

    expect(kept("--filter", ids[1]) == (0, [ids[1]]), "pasted id")
    expect(kept("-f", ids[2], "-f", ids[0]) == (0, [ids[0], ids[2]]),
           "two filters: the union, in plan order")
    expect(kept("-x", ids[0]) == (0, ids[1:]), "--exclude")
    expect(kept("-f", ids[0], "--exclude", ids[0])[0] == 2,
           "everything excluded is 'no case to run'")


@case("--backend restricts the run to one backend")
def t_backend_opt():
    cfg = write("tiny3.json", TINY)
    out = os.path.join(TMP, "be")
    p = run("run", cfg, "-o", out, "--backend", "cuda", "-q")
    expect(p.returncode == 0, p.stderr)
    doc = json.load(open(os.path.join(out, "results.json")))
    expect({c["backend"] for c in doc["cases"]} == {"cuda"}, "backends")
    expect_usage_error(run("run", cfg, "--backend", "tpu"), "tpu")


BAD = {
    "malformed": ('{"name": "x", "ops": [', "syntax"),
    "unknown key": ('{"name":"x","opz":[],"ops":[{"op":"add","shapes":[[4]]}]}',
                    "opz"),
    "unknown op": ('{"name":"x","ops":[{"op":"frobnicate","shapes":[[4]]}]}',
                   "frobnicate"),
    "unknown dtype": ('{"name":"x","dtypes":["f8"],'
                      '"ops":[{"op":"add","shapes":[[4]]}]}', "f8"),
    "unknown backend": ('{"name":"x","backends":["tpu"],'
                        '"ops":[{"op":"add","shapes":[[4]]}]}', "tpu"),
    "empty shape": ('{"name":"x","ops":[{"op":"add","shapes":[[]]}]}',
                    "shapes"),
    "zero dim": ('{"name":"x","ops":[{"op":"add","shapes":[[4,0]]}]}',
                 "shapes"),
    "negative dim": ('{"name":"x","ops":[{"op":"add","shapes":[[-4]]}]}',
                     "shapes"),
    "mismatch": ('{"name":"x","ops":[{"op":"matmul","shapes":[[[2,3],[4,5]]]}]}',
                 "matmul"),
    "too much memory": ('{"name":"x","ops":[{"op":"add",'
                        '"shapes":[[1048576,1048576]]}]}', "GiB"),
}


def bad_config_case(label, text, needle):
    @case(f"bad config ({label}): exit 2, one line naming the file, "
          "no result file")
    def t():
        cfg = write(f"bad-{label.replace(' ', '_')}.json", text)
        out = os.path.join(TMP, "bad-" + label.replace(" ", "_"))
        p = run("run", cfg, "-o", out)
        expect_usage_error(p, os.path.basename(cfg), needle)
        expect(not os.path.exists(out), "output dir was created")


for k, (text, needle) in BAD.items():
    bad_config_case(k, text, needle)


@case("bad command lines: exit 2 with a message")
def t_bad_cli():
    expect_usage_error(run("frob"), "frob")
    expect_usage_error(run("run"), "no config")
    expect_usage_error(run("run", "--bogus", "x.json"), "bogus")
    expect_usage_error(run("run", "/nonexistent/c.json"), "/nonexistent/c.json")
    expect_usage_error(run("list", "--yaml"), "--yaml")
    p = subprocess.run([TBENCH], capture_output=True, text=True)
    expect(p.returncode == 2, "no args")
    # alone: a short overview, a line per command (not the full help)
    lines = p.stderr.splitlines()
    expect(len(lines) <= 22, f"{len(lines)} lines")
    full = run("--help").stdout
    cmds = re.findall(r"^  ([a-z]+) ", full, re.M)
    for c in set(cmds) - {"help", "worker"}:
        expect(any(l.startswith(f"  {c} ") for l in lines),
               f"{c} missing from the overview")
    expect(not any(l.startswith("  worker") for l in lines), "worker shown")


@case("--help and --version")
def t_help():
    p = run("--help")
    expect(p.returncode == 0, "help exit")
    for word in ("run CONFIG", "--output", "--filter", "--backend", "list",
                 "exit status"):
        expect(word in p.stdout, f"help lacks {word}")
    p = run("--version")
    expect(p.returncode == 0 and p.stdout.startswith("tbench "), p.stdout)


@case("list --json: every op with dtypes and params, cpu with axes")
def t_list():
    p = run("list", "--json")
    expect(p.returncode == 0, p.stderr)
    doc = json.loads(p.stdout)
    ops = {o["name"]: o for o in doc["ops"]}
    for name in ("add", "sub", "mul", "div", "relu", "sum", "mean", "matmul",
                 "transpose", "log_softmax"):
        expect(name in ops, f"{name} missing")
        expect(ops[name]["dtypes"] == ["f32", "f64", "bf16", "f16"],
               f"{name} dtypes {ops[name]['dtypes']}")
    # 16-bit floats: not the integer-index ops, factorizations,
    # calibration or model steps (optimizers: 16-bit p and g, f32 state),
    # nor dropout (its mask is the element's index in the stream) nor
    # batch_norm (its running statistics are state updated in place)
    # nor einsum (contraction: PyTorch rounds its pairwise intermediates)
    for name, o in ops.items():
        full = (o["category"] in ("linalg", "calibration", "workload",
                                  "contraction")
                or name in ("argmax", "nll_loss", "nll_loss_backward",
                            "cross_entropy", "cross_entropy_backward",
                            "cross_entropy_unfused", "embedding",
                            "embedding_backward", "dropout", "batch_norm"))
        want = ["f32", "f64"] if full else ["f32", "f64", "bf16", "f16"]
        if name == "matmul_int8":  # quantizes f32 inputs
            want = ["f32"]
        expect(o["dtypes"] == want, f"{name} dtypes {o['dtypes']}")
        expect(o["tolerance"]["bf16"]["rtol"] in (0, 2**-7 * 1, 2**-7 * 2,
                                                   2**-7 * 4, 2**-7 * 16,
                                                   2**-7 * 64),
               f"{name} bf16 rtol in units of 2^-7")
    expect([p["name"] for p in ops["sum"]["params"]] == ["axis", "keepdim"],
           "sum params")
    be = {b["name"]: b for b in doc["backends"]}
    expect(be["cpu"]["available"] and be["cpu"]["reason"] is None, "cpu")
    axes = {a["name"]: a for a in be["cpu"]["axes"]}
    expect("threads" in axes and axes["threads"]["values"][0] == "1",
           "threads axis")
    expect(be["cuda"]["available"] or be["cuda"]["reason"], "cuda reason")
    p = run("list")
    expect(p.returncode == 0 and "log_softmax" in p.stdout, "text list")


@case("SIGINT: exit 130, finished cases kept, complete=false")
def t_interrupt():
    slow = TINY.replace('"max_time_s": 0.1', '"max_time_s": 5').replace(
        '"ci_target": 0.05', '"ci_target": 0.0001').replace(
        '"max_samples": 50', '"max_samples": 100000')
    cfg = write("slow.json", slow)
    out = os.path.join(TMP, "intr")
    proc = subprocess.Popen([TBENCH, "run", cfg, "-o", out, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    path = os.path.join(out, "results.json")
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(path):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    expect(proc.returncode == 130, f"exit {proc.returncode}: {err}")
    doc = json.load(open(path))
    jsonschema.validate(doc, SCHEMA)
    expect(doc["complete"] is False, "complete should be false")
    expect(1 <= len(doc["cases"]) < 24, f"{len(doc['cases'])} cases")


@case("bf16/f16: configs/half.json, every case checked or unsupported "
      "with the reason; results valid; .npy round trip")
def t_half():
    out = os.path.join(TMP, "half")
    p = run("run", "configs/half.json", "-o", out, "-q")
    expect(p.returncode == 0, p.stderr)
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    lp = json.loads(run("list", "--json").stdout)
    defined = {o["name"]: o["dtypes"] for o in lp["ops"]}
    n_ok = 0
    for c in doc["cases"]:
        dt, op = c["dtype"], c["op"]
        expect(dt in ("bf16", "f16"), c["id"])
        if dt in defined[op]:
            expect(c["status"] == "ok", f'{c["id"]}: {c["status"]} '
                                        f'{c.get("message")}')
            expect(c["check"]["passed"] and
                   c["impl"].startswith(f"{op}_{dt}_") or
                   c["category"] in ("unfused", "transfer", "inplace"),
                   f'{c["id"]}: impl {c["impl"]}')
            n_ok += 1
        else:
            expect(c["status"] == "unsupported" and
                   f"{op} in {dt}: " in c["message"], c["id"])
    expect(n_ok >= 150, f"{n_ok} cases ran")
    # the CSV and the show table carry the dtype
    csv = open(os.path.join(out, "results.csv")).read()
    expect("/bf16/" in csv and "/f16/" in csv, "csv")
    # exec: a bf16 case's .npy files load in NumPy, and feed exec again
    ex = os.path.join(TMP, "half_exec")
    p = run("exec", "mul", "--shape", "3x5", "-d", "bf16", "-o", ex)
    expect(p.returncode == 0, p.stderr)
    a = np.load(os.path.join(ex, "input0.npy"))
    expect(a.dtype.names == ("bf16",) and a.shape == (3, 5), str(a.dtype))
    ex2 = os.path.join(TMP, "half_exec2")
    p = run("exec", "mul", "-i", os.path.join(ex, "input0.npy"), "-i",
            os.path.join(ex, "input1.npy"), "-o", ex2)
    expect(p.returncode == 0 and "/bf16/" in p.stdout, p.stdout + p.stderr)
    o1 = np.load(os.path.join(ex, "output0.npy"))
    o2 = np.load(os.path.join(ex2, "output0.npy"))
    expect((o1 == o2).all(), "same inputs, same bf16 bits")
    h = os.path.join(TMP, "h16.npy")
    np.save(h, np.linspace(-2, 2, 12, dtype=np.float16).reshape(3, 4))
    ex3 = os.path.join(TMP, "half_exec3")
    p = run("exec", "tanh", "-i", h, "-o", ex3)
    expect(p.returncode == 0 and "/f16/" in p.stdout, p.stdout + p.stderr)
    got = np.load(os.path.join(ex3, "output0.npy"))
    want = np.tanh(np.load(h).astype(np.float32)).astype(np.float16)
    expect(got.dtype == np.float16 and
           (np.abs(got.astype(np.float64) - want) <=
            2.0 ** -10 * np.abs(want)).all(), f"{got} vs {want}")


@case("matmul_int8: exec's output equals NumPy's int64 GEMM of the same "
      "quantization bit for bit, at isa=scalar and auto; f64 unsupported")
def t_int8():
    def quant(x, s, z, lo, hi):
        q = np.rint(x.astype(np.float32) / np.float32(s)) + np.float32(z)
        return np.clip(q, lo, hi).astype(np.int64)
    for isa in ("scalar", "auto"):
        for shape, params in (("37x101,101x45", "a_scale=0.01,a_zero=100,"
                               "b_scale=0.02"),
                              ("5x64,64x16", "a_zero=128")):
            d = os.path.join(TMP, f"int8_{isa}_{shape.replace(',', '_')}")
            env = dict(os.environ, TBENCH_ISA=isa)
            p = subprocess.run([TBENCH, "exec", "matmul_int8", "--shape",
                                shape, "-p", params, "-o", d],
                               capture_output=True, text=True, env=env,
                               timeout=120)
            expect(p.returncode == 0 and "matmul_int8_f32_" in p.stdout,
                   p.stdout + p.stderr)
            a = np.load(os.path.join(d, "input0.npy"))
            b = np.load(os.path.join(d, "input1.npy"))
            kv = dict(x.split("=") for x in params.split(","))
            sa = np.float32(float(kv.get("a_scale", 0.0078125)))
            sb = np.float32(float(kv.get("b_scale", 0.0078125)))
            za = int(kv.get("a_zero", 128))
            acc = (quant(a, sa, za, 0, 255) - za) @ quant(b, sb, 0, -128, 127)
            want = acc.astype(np.int32).astype(np.float32) * \
                np.float32(sa * sb)
            got = np.load(os.path.join(d, "output0.npy"))
            expect(got.dtype == np.float32 and
                   (got.view(np.uint32) == want.view(np.uint32)).all(),
                   f"{isa} {shape}: {np.abs(got - want).max()}")
    p = run("exec", "matmul_int8", "--shape", "4x4,4x4", "-d", "f64", "-o",
            os.path.join(TMP, "int8_f64"))
    expect(p.returncode != 0 or "unsupported" in p.stdout + p.stderr,
           p.stdout + p.stderr)


@case("show with a result file where the CASE goes: exit 2, saying the "
      "case comes first; with both, the case is shown")
def t_show_order():
    out = os.path.join(TMP, "show_order")
    p = run("run", "--op", "relu", "-s", "64", "--max-time", "0.02",
            "--warmup-ms", "1", "-o", out, "-q")
    expect(p.returncode == 0, p.stderr)
    res = os.path.join(out, "results.json")
    for arg in (res, out):
        p = run("show", arg)
        expect_usage_error(p, "show: '" + arg + "'", "the case comes first")
    p = run("show", "relu*", res)
    expect(p.returncode == 0 and "relu/64/f32" in p.stdout, p.stdout + p.stderr)


@case("run --op: one case without a config; --list-cases; overrides")
def t_quick():
    p = run("run", "--op", "matmul", "--shape", "5x7,7x3", "--dtype",
            "f32,f64", "--list-cases")
    expect(p.returncode == 0, p.stderr)
    expect(p.stdout.splitlines() == [
        "matmul/5x7,7x3/f32/cpu[isa=auto,threads=1]",
        "matmul/5x7,7x3/f64/cpu[isa=auto,threads=1]"], p.stdout)
    cfg = write("lc.json", TINY)
    p = run("run", cfg, "--list-cases", "-x", "*cuda*", "-f", "add*")
    expect(p.returncode == 0 and len(p.stdout.splitlines()) == 4,
           p.stdout + p.stderr)
    out = os.path.join(TMP, "quick")
    p = run("run", "--op", "mean", "-s", "9x4", "-p", "axis=1,keepdim=true",
            "--rounds", "2", "--max-time", "0.05", "--warmup-ms", "1",
            "--min-samples", "4", "-o", out, "-q")
    expect(p.returncode == 0, p.stderr)
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    expect([c["id"] for c in doc["cases"]] ==
           ["mean[axis=1,keepdim=1]/9x4/f32/cpu[isa=auto,threads=1]"],
           str([c["id"] for c in doc["cases"]]))
    expect(doc["cases"][0]["status"] == "ok", doc["cases"][0]["status"])
    m = doc["config"][0]["measure"]
    expect(m["rounds"] == 2 and m["max_time_s"] == 0.05 and
           m["min_samples"] == 4, str(m))
    expect(doc["config"][0]["warmup"]["min_time_s"] == 0.001, "warmup")
    # the recorded text is a config that reproduces the case
    again = write("again.json", doc["config"][0]["text"])
    p = run("run", again, "--list-cases")
    expect(p.stdout.strip() == doc["cases"][0]["id"], p.stdout + p.stderr)
    for args, msg in [
            (["--op", "add"], "--shape is required"),
            (["--op", "add", "-s", "4xx4"], "empty dim"),
            (["--op", "add", "-s", "4;4"], "expected dims"),
            (["--op", "add", "-s", "5..2"], "is not a dim or a range"),
            (["--op", "add", "-s", "2^3..2^5x1..8"], "step together"),
            (["--op", "add", "-s", "4", "-p", "axis"], "KEY=VALUE"),
            (["--op", "add", "-s", "4", "-p", 'a="x"'], "not a number"),
            (["--op", "nosuch", "-s", "4"], 'unknown op "nosuch"'),
            (["--op", "add", "-s", "4", cfg], "config file too"),
            (["-s", "4", cfg], "give --op"),
            ([cfg, "--rounds", "65"], "from 1 to 64"),
            ([cfg, "--ci-target", "0"], "above 0 and below 1"),
            ([cfg, "--max-time", "x"], "--max-time: 'x'"),
            ([cfg, "--min-samples", "60"], "min_samples (60) is above")]:
        p = run("run", *args, "-o", os.path.join(TMP, "never"))
        expect(p.returncode == 2 and msg in p.stderr,
               f"{args}: {p.returncode} {p.stderr}")
        expect(not os.path.exists(os.path.join(TMP, "never")), "wrote")


@case("sweeps from the command line: repeated --shape and -b, axes in the "
      "id's syntax, -b lists; -o - writes results.json to stdout alone")
def t_sweep():
    # ranges: powers of two, a factor, ranged dims stepping together
    for shape, ids in (("2^10..2^13", ["1024", "2048", "4096", "8192"]),
                       ("1000..1e5*10", ["1000", "10000", "100000"]),
                       ("64..256x64..256", ["64x64", "128x128", "256x256"])):
        p = run("run", "--op", "relu", "--shape", shape, "--list-cases")
        expect([l.split("/")[1] for l in p.stdout.split()] == ids,
               f"{shape}: {p.stdout} {p.stderr}")
    p = run("run", "--op", "add", "--shape", "1000", "--shape", "7x13",
            "-b", "cpu[threads=1,2;isa=scalar,avx2]", "-d", "f32,f64",
            "--list-cases")
    want = [f"add/{s}/{d}/cpu[isa={i},threads={t}]"
            for s in ("1000,1000", "7x13,7x13") for d in ("f32", "f64")
            for i in ("scalar", "avx2") for t in ("1", "2")]
    expect(p.returncode == 0 and p.stdout.splitlines() == want,
           p.stdout + p.stderr)
    for bs in (["-b", "cpu,blas"], ["-b", "cpu", "-b", "blas"]):
        p = run("run", "--op", "matmul", "-s", "8x8", *bs, "--list-cases")
        expect(p.stdout.splitlines() ==
               ["matmul/8x8,8x8/f32/cpu[isa=auto,threads=1]",
                "matmul/8x8,8x8/f32/blas[threads=1]"], f"{bs}: {p.stdout}")
    cfg = write("sweep.json", TINY)
    p = run("run", cfg, "-b", "cpu,blas", "-f", "add/7x13*", "--list-cases")
    expect(p.returncode == 0 and sorted({l.split("/")[-1].split("[")[0]
                                         for l in p.stdout.split()}) ==
           ["blas", "cpu"], p.stdout + p.stderr)
    for args, msg in [
            ([cfg, "-b", "cpu[isa=avx2]"], "axes only with --op"),
            (["--op", "add", "-s", "4", "-b", "cpu[threads=1,"],
             "is not NAME or NAME[AXIS=V,V;AXIS=V]"),
            (["--op", "add", "-s", "4", "-b", "cpu[]"], "is not NAME"),
            (["--op", "add", "-s", "4", "-b", "nosuch"],
             "unknown backend 'nosuch'"),
            (["--op", "add", "-s", "4", "-o", "-", "--save-baseline", "x"],
             "-o - writes results.json to stdout")]:
        p = run("run", *args)
        expect(p.returncode == 2 and msg in p.stderr,
               f"{args}: {p.returncode} {p.stderr}")
    tmp = os.path.join(TMP, "stdout-tmp")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    q = subprocess.run([TBENCH, "run", "--op", "relu", "-s", "64", "-s",
                        "65", "--max-time", "0.02", "--warmup-ms", "1",
                        "-o", "-"], capture_output=True, text=True,
                       cwd=TMP, env=env, timeout=300)
    expect(q.returncode == 0, q.stderr)
    doc = json.loads(q.stdout)
    jsonschema.validate(doc, SCHEMA)
    expect([c["id"].split("/")[1] for c in doc["cases"]] == ["64", "65"],
           str([c["id"] for c in doc["cases"]]))
    expect("summary: 2 cases" in q.stderr and "results:" not in q.stderr,
           q.stderr)
    expect(not os.path.exists(os.path.join(TMP, "-")), "made a folder '-'")
    expect(os.listdir(tmp) == [], f"left in TMPDIR: {os.listdir(tmp)}")
    # the recorded config reproduces the whole sweep
    again = write("sweep-again.json", doc["config"][0]["text"])
    p = run("run", again, "--list-cases")
    expect(p.stdout.split() == [c["id"] for c in doc["cases"]],
           p.stdout + p.stderr)


def run_pty(args, cols=80, env_extra=None):
    """Run tbench with stdout and stderr on a terminal of `cols` columns;
    returns (exit status, everything it wrote)."""
    import fcntl
    import pty
    import struct
    import termios
    m, s = pty.openpty()
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    p = subprocess.Popen([TBENCH, *args], stdout=s, stderr=s, env=env)
    os.close(s)
    out = b""
    while True:
        try:
            d = os.read(m, 65536)
        except OSError:
            break
        if not d:
            break
        out += d
    os.close(m)
    return p.wait(timeout=300), out.decode()


@case("terminal: progress never wraps, colour only on a TTY without NO_COLOR, summary")
def t_terminal():
    import re
    cfg = write("term.json", TINY)
    args = ["run", cfg, "-x", "*cuda*", "-f", "add*", "-o",
            os.path.join(TMP, "term")]
    rc, out = run_pty(args)
    expect(rc == 0, out[-2000:])
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out)
    progress = [seg for seg in re.split(r"[\r\n]", plain)
                if seg.startswith("round ")]
    expect(len(progress) >= 4, f"no progress lines: {plain[-1500:]}")
    for seg in progress:
        expect(len(seg) < 80, f"progress line of {len(seg)} columns: {seg}")
        expect(re.match(r"round \d/2 \[\d/\d\] \d+:\d\d, ~(\?|\d+:\d\d) "
                        r"left  ", seg), seg)
    # the table: a case a line within the 80 columns, ids whose shared
    # tail is said once, a legend under it
    lines = [seg for seg in re.split(r"[\r\n]", plain) if seg.strip()]
    head = [i for i, l in enumerate(lines) if l.startswith("case ")]
    expect(len(head) == 1, f"no table header: {plain[-1500:]}")
    h = head[0]
    expect(lines[h - 1].endswith("every case id ends in "
                                 "/cpu[isa=auto,threads=1]"), lines[h - 1])
    rows = lines[h + 1:h + 5]
    expect(all(re.match(r"add/\S+/f(32|64) +ok +\d", r) for r in rows),
           f"not a case a line: {rows}")
    for l in [lines[h - 1], lines[h]] + rows + [lines[h + 5]]:
        expect(len(l) < 80, f"table line of {len(l)} columns: {l}")
    expect(lines[h + 5].startswith("median: time of one call"),
           lines[h + 5])
    expect("\x1b[32mok" in out, "no colour on a terminal")
    # compare's verdicts are coloured on a terminal too, never in a pipe
    cmp = ["compare", "tests/data/report/baseline.json",
           "tests/data/report/mixed.json"]
    rc, cout = run_pty(cmp)
    expect("\x1b[33minconclusive\x1b[0m" in cout, cout[-800:])
    p = run(*cmp)
    expect("inconclusive" in p.stdout and "\x1b" not in p.stdout, p.stdout)
    expect("summary: 4 cases: \x1b[32m4 ok\x1b[0m; exit 0" in out,
           out[-500:])
    rc, out = run_pty(args, env_extra={"NO_COLOR": "1"})
    expect(rc == 0 and "\x1b[3" not in out, "colour despite NO_COLOR")
    expect("summary: 4 cases: 4 ok; exit 0" in out, out[-500:])
    # not a terminal: full ids, no escapes at all, the same summary
    p = run(*args)
    expect(p.returncode == 0 and "\x1b" not in p.stdout + p.stderr,
           "escapes in files/pipes")
    expect("add/3x1x5,1x4x5/f64/cpu[isa=auto,threads=1]" in p.stdout,
           p.stdout)
    expect("summary: 4 cases: 4 ok; exit 0" in p.stdout, p.stdout)


@case("one option parser: --x=v and -- everywhere, help CMD, did you mean")
def t_parser():
    cfg = write("parse.json", TINY)
    out = os.path.join(TMP, "parse")
    p = run("run", "--output=" + out, "--filter=add/7x13*", "-q",
            "--max-time=0.02", "--", cfg)
    expect(p.returncode == 0, p.stderr)
    res = os.path.join(out, "results.json")
    for args in (["compare", "--threshold=5", "--alpha=0.01", "--", res,
                  res],
                 ["history", "--format=json", "--", res],
                 ["export", "--format=bmf", "--output=" +
                  os.path.join(TMP, "bmf.json"), "--", res],
                 ["list", "--json"]):
        p = run(*args)
        expect(p.returncode == 0, f"{args}: {p.stderr}")
    # help of one command only, by both spellings
    for args in (["help", "compare"], ["compare", "--help"]):
        p = run(*args)
        expect(p.returncode == 0 and p.stdout.startswith(
            "usage: tbench compare ") and "--vs" in p.stdout and
            "--list-cases" not in p.stdout, f"{args}: {p.stdout[:300]}")
    full = run("--help").stdout
    expect("--list-cases" in full and "--vs" in full, "full help")
    for args, msg in [
            (["rn", cfg], "unknown command 'rn'; did you mean 'run'?"),
            (["help", "comapre"], "did you mean 'compare'?"),
            (["run", cfg, "--fitler", "x"],
             "run: unknown option '--fitler'; did you mean '--filter'?"),
            (["compare", "--treshold=2", res, res],
             "did you mean '--threshold'?"),
            (["export", "--fromat", "gab", res], "did you mean '--format'?"),
            (["list", "--jsno"], "did you mean '--json'?"),
            (["run", cfg, "-qZ"], "run: unknown option '-Z'"),
            (["run", cfg, "--zzzzzz"], "run: unknown option '--zzzzzz'\n"),
            (["history", "--fail-on=time", res], "not an option of this command")]:
        p = run(*args)
        expect(p.returncode == 2 and msg in p.stderr,
               f"{args}: {p.returncode} {p.stderr}")


@case("man page and shell completions are generated from --help (no drift)")
def t_cli_docs():
    p = subprocess.run([sys.executable, "scripts/gen_cli_docs.py", TBENCH,
                        "--check"], capture_output=True, text=True)
    expect(p.returncode == 0, p.stderr)
    man = open("docs/tbench.1", encoding="utf-8").read()
    for word in ("\\fBrun\\fR", "\\fBcompare\\fR", "\\-\\-list\\-cases",
                 ".SH EXIT STATUS"):
        expect(word in man, f"man page lacks {word}")
    # the bash completion offers run's options and the commands
    script = ("source completions/tbench.bash; COMP_WORDS=(tbench run "
              "--li); COMP_CWORD=2; _tbench; echo ${COMPREPLY[@]}; "
              "COMP_WORDS=(tbench com); COMP_CWORD=1; _tbench; "
              "echo ${COMPREPLY[@]}")
    p = subprocess.run(["bash", "-c", script], capture_output=True,
                       text=True)
    expect(p.stdout.split("\n")[:2] == ["--list-cases", "compare"],
           p.stdout + p.stderr)
    # every option completed for a command is one that command accepts
    # (its own getopt table: tbench __options), the internal worker is
    # not offered, and values complete: dtypes, formats, case ids
    def comp(*words):
        w = " ".join(f"'{x}'" for x in words)
        script = (f"source completions/tbench.bash; COMP_WORDS=({TBENCH} {w}"
                  f"); COMP_CWORD={len(words)}; _tbench; "
                  "printf '%s\\n' \"${COMPREPLY[@]}\"")
        r = subprocess.run(["bash", "-c", script], capture_output=True,
                           text=True)
        return [l for l in r.stdout.split("\n") if l]
    expect("worker" not in comp(""), comp(""))
    for cmd in ("run", "list", "exec", "peak", "plot", "report", "compare",
                "history", "export", "targets", "show", "selftest",
                "merge", "ab", "profile"):
        offered = comp(cmd, "-")
        expect(len(offered) >= 2, f"{cmd}: {offered}")
        decl = {l.split()[1]: l.split()[3] for l in
                run("__options").stdout.splitlines()
                if l.split()[0] == cmd}
        for o in offered:
            if not o.startswith("--") or o == "--help":
                continue
            args = [cmd, o] + (["x"] if decl.get(o, "-") != "-" else []) \
                + ["--help"]
            if o == "--plugin":
                continue  # loaded before the command parses (main.c)
            r = run(*args)
            expect("unknown option" not in r.stderr and
                   "not an option of this command" not in r.stderr,
                   f"completion offers {cmd} {o}: {r.stderr}")
    expect("--fd" not in comp("ab", "--") and
           "--filter" not in comp("show", "--"), "options the commands "
           "reject")
    expect(comp("run", "--dtype", "") == ["f32", "f64", "bf16", "f16"],
           comp("run", "--dtype", ""))
    expect(comp("compare", "--format", "") == ["text", "md", "json"],
           comp("compare", "--format", ""))
    ids = comp("run", "configs/quick.json", "-f", "add/")
    expect("add/256x256,256x256/f32/cpu[isa=auto,threads=1]" in ids, ids)
@case("a seed above 2^53 is stored digit for digit (run and exec)")
def t_big_seed():
    big = 2**64 - 1
    cfg = write("bigseed.json", """{"name": "bigseed", "seed": %d,
      "warmup": {"min_time_ms": 0, "min_iters": 1},
      "measure": {"sample_time_ms": 0.1, "min_samples": 3,
                  "max_samples": 3, "max_time_s": 0.05},
      "ops": [{"op": "relu", "shapes": [[4]]}]}""" % big)
    out = os.path.join(TMP, "bigseed")
    p = run("run", cfg, "-o", out, "-q")
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    text = open(os.path.join(out, "results.json"), encoding="utf-8").read()
    doc = json.loads(text)
    jsonschema.validate(doc, SCHEMA)
    seed = doc["config"][0]["seed"]
    expect(seed == big and isinstance(seed, int), f"seed {seed!r}")
    expect('"seed":\t%d' % big in text or '"seed": %d' % big in text,
           "seed not written as plain digits")
    out = os.path.join(TMP, "bigseed-exec")
    p = run("exec", "relu", "--shape", "4", "--seed", str(big - 1),
            "-o", out)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    meta = json.load(open(os.path.join(out, "exec.json")))
    expect(meta["seed"] == big - 1 and isinstance(meta["seed"], int),
           f"exec seed {meta['seed']!r}")


if __name__ == "__main__":
    sys.exit(run_cases())
