#!/usr/bin/python3
"""Every op in every dtype at every ISA level, through the harness's own
check, printed as TAP.

Usage: test_cli_every.py PATH/TO/tbench DTYPES [ELEMENTS]   (from the
repository root; DTYPES a comma list, e.g. bf16,f16)

The config is scripts/op_limits.py's (--config-only): every op of
configs/quick.json at ELEMENTS (default 2^20) where its kind is
element-wise, else its quick size.  The sanitizer build passes 2^16:
its job is the memory errors, which the same loops' tails and blocks
show at 2^16 as at 2^20, and at 2^20 the two halves took 129 and 137 s
of its CI time.  It runs on the cpu backend at isa=scalar, avx2, avx512
and avx512bf16 (those of them the machine offers: tbench list --json)
with one thread and at the best level with two, a
minimal measurement (one warm-up call, three samples), so each case is
mostly its check against the double-precision reference (the op's
tolerance for the dtype, tb_check_outputs).  Every case must be ok, or
unsupported / unavailable (a level this CPU lacks) with a reason; a case
that fails its check, errs or crashes fails the test with its message.
The oracle tests hold each op to PyTorch's vectors on chosen shapes;
this one holds every row that a level selects to the reference, so a
fast path added for one dtype cannot go wrong unseen in an op the
vectors leave out (an f16 causal_mask writing NaN for -inf passed every
other test).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
DTYPES = sys.argv[2]
ELEMENTS = sys.argv[3] if len(sys.argv) > 3 else str(1 << 20)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = tempfile.mkdtemp(prefix="tbench-every-")
LEVELS = ["scalar", "avx2", "avx512", "avx512bf16"]
state = {}


def offered_levels():
    """LEVELS that the cpu backend offers on this machine (tbench list
    --json, its isa axis): a level the CPU lacks (avx512bf16 on an
    AVX-512 CPU without AVX512_BF16) is refused in a config, so the
    test runs the levels there are"""
    r = subprocess.run([TBENCH, "list", "--json"], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        return LEVELS
    for be in json.loads(r.stdout).get("backends", []):
        if be.get("name") == "cpu":
            for ax in be.get("axes", []):
                if ax.get("name") == "isa":
                    return [lv for lv in LEVELS if lv in ax["values"]]
    return LEVELS


def load_jsonc(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return json.loads(text[text.index("{"):])  # the generated comment line


@case("op_limits.py --config-only writes every op's case")
def make_config():
    r = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "op_limits.py"),
                        "--config-only", "-o", TMP, "--dtypes", DTYPES,
                        "--elements", ELEMENTS, "--tbench", TBENCH],
                       capture_output=True, text=True, timeout=300)
    expect(r.returncode == 0, f"op_limits.py: exit {r.returncode}: "
           f"{r.stderr.strip()[-500:]}")
    cfg = load_jsonc(os.path.join(TMP, "config.json"))
    expect(len(cfg["ops"]) >= 100, f"only {len(cfg['ops'])} op entries")
    cfg["name"] = "every"
    cfg["warmup"] = {"min_time_ms": 0, "min_iters": 1}
    cfg["measure"] = {"sample_time_ms": 0.001, "min_samples": 3,
                      "max_samples": 3, "ci_target": 0.5,
                      "max_time_s": 0.001, "rounds": 1}
    levels = offered_levels()
    print(f"# levels: {', '.join(levels)}")
    cfg["backends"] = [{"name": "cpu", "isa": lv, "threads": 1}
                       for lv in levels]
    cfg["backends"].append({"name": "cpu", "isa": "auto", "threads": 2})
    state["config"] = os.path.join(TMP, "every.json")
    with open(state["config"], "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)


@case("every case is ok, or not run here with a reason")
def run_all():
    expect("config" in state, "no config")
    out = os.path.join(TMP, "out")
    r = subprocess.run([TBENCH, "run", state["config"], "-o", out],
                       capture_output=True, text=True, timeout=1500)
    expect(r.returncode in (0, 1), f"tbench run: exit {r.returncode}: "
           f"{r.stderr.strip()[-500:]}")
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    bad, ok, skipped = [], {}, 0
    for c in cases:
        st = c["status"]
        if st == "ok":
            ok[c["dtype"]] = ok.get(c["dtype"], 0) + 1
        elif st in ("unsupported", "unavailable") and c.get("message"):
            skipped += 1
        else:
            bad.append(f"{c['id']}: {st}: {c.get('message')}")
    expect(not bad, f"{len(bad)} of {len(cases)} cases failed:\n" +
           "\n".join(bad[:40]))
    for dt in DTYPES.split(","):
        # every level this CPU has, at least 100 ops each
        expect(ok.get(dt, 0) >= 200, f"{dt}: only {ok.get(dt, 0)} ok cases")
    print(f"# {len(cases)} cases: {sum(ok.values())} ok, {skipped} not run "
          "here (with the reason)")


def cleanup(failed):
    if failed:
        print(f"# files kept in {TMP}")
    else:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_cases(cleanup))
