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
import signal
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

import jsonschema

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
        rows = list(csv.DictReader(f))
    expect(len(rows) == len(cases), "csv rows")
    for r, c in zip(rows, cases):
        expect(r["id"] == c["id"] and r["status"] == c["status"], "csv id")
        if c["stats"]:
            expect(abs(float(r["median_ns"]) - c["stats"]["median_ns"])
                   <= 1e-9 * c["stats"]["median_ns"] + 1e-6,
                   "csv median")
    expect("median" in p.stdout and "add/7x13,7x13/f32/cpu" in p.stdout,
           "no table on stdout")
    expect(not [f for f in os.listdir(out) if ".tmp." in f],
           "temporary files left")


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
    "unknown dtype": ('{"name":"x","dtypes":["f16"],'
                      '"ops":[{"op":"add","shapes":[[4]]}]}', "f16"),
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
        expect(ops[name]["dtypes"] == ["f32", "f64"], "dtypes")
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
