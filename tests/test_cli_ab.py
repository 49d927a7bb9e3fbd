#!/usr/bin/python3
"""tbench ab: paired A/B of two builds, printed as TAP.

Usage: test_cli_ab.py PATH/TO/tbench   (run from the repository root)

Two copies of the same build on a two-case config: exit 0, no case
regressed or improved, ab.json well formed (docs/FORMAT.md) and
consistent with its block medians, and each block's results.json of each
side (a fresh worker per block) valid against docs/results.schema.json
and holding that block's median.  Refused builds: a script that is not
tbench, a fake worker that answers the hello with protocol 2, and a
missing file are each refused with one line naming the side and exit 2.
Usage errors exit 2.  --duet and --estimator median run.  Needs python3-jsonschema: run with /usr/bin/python3.
"""
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-ab-")

CONFIG = """{
  "name": "abtest",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 5, "max_samples": 200,
              "ci_target": 0.02, "max_time_s": 0.1, "timeout_s": 30},
  "ops": [{"op": "add", "shapes": [[4096]]}, {"op": "relu", "shapes": [[4096]]}]
}
"""

# A worker of a future build: says hello with protocol 2, then exits.
FAKE_V2 = """#!/usr/bin/python3
import os, struct, sys
fd = int(sys.argv[sys.argv.index("--fd") + 1])
name = b"tbench 9.9 (fake)"
os.write(fd, struct.pack("<IIiiiiQ", 0x31777462, 1, 2, 0, 0, 0, len(name))
         + name)
sys.exit(2)
"""


def path(name):
    return os.path.join(TMP, name)


def write_exe(name, text):
    p = path(name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    return p


def tbench(*args, timeout=300):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=timeout)


with open(path("two.json"), "w", encoding="utf-8") as f:
    f.write(CONFIG)
OLD, NEW = path("old-tbench"), path("new-tbench")
shutil.copy(TBENCH, OLD)
shutil.copy(TBENCH, NEW)


@case("same build twice: exit 0, no change found (unchanged or inconclusive), files written")
def same_build():
    out = path("out")
    # --threshold 10: two copies of one build differ by a few percent
    # now and then (process layout, a busy CI machine: +1.7% with
    # p(Holm) 0.019 on add once), and at the default 0.5% and alpha 0.05
    # the verdict is a coin that lands "regressed" in some runs; no
    # same-build difference comes near 10%, and a verdict that ignored
    # the threshold or the test would still fail here.
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "12", "-q",
               "--threshold", "10", "-o", out)
    expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    # the workers share the driver's stderr: a sanitizer report of one
    # of them (an ASan build) shows here
    expect("Sanitizer" not in r.stderr and "runtime error" not in r.stderr,
           r.stderr)
    doc = json.load(open(os.path.join(out, "ab.json"), encoding="utf-8"))
    expect(doc["schema"] == "tbench.ab/2", doc.get("schema"))
    expect(len(doc["cases"]) == 2, f"{len(doc['cases'])} cases")
    for c in doc["cases"]:
        # an A/A never finds a change; whether it can say "unchanged"
        # depends on how quiet the machine was (the MDE)
        v, mde = c["verdict"], c["mde"]
        expect(v in ("unchanged", "inconclusive"), f"{c['id']}: {v}")
        if v == "unchanged":    # only with the CI and MDE inside 10%
            expect(mde is not None and mde <= 0.1 and
                   c["ci_low"] >= 1 / 1.1 - 1 and c["ci_high"] <= 0.1, f"{c}")
        if mde is None or mde > 0.1:
            expect(v == "inconclusive", f"{c['id']}: {v} with MDE {mde}")
        expect(c["blocks"] == 12, c["blocks"])
        o, n = c["old_block_ns"], c["new_block_ns"]
        expect(len(o) == 12 and len(n) == 12, "12 block medians a side")
        # change is the median of the block log ratios, recomputed here
        d = sorted(math.log(b / a) for a, b in zip(o, n))
        med = (d[5] + d[6]) / 2
        expect(abs(math.expm1(med) - c["change"]) < 1e-12,
               f"change {c['change']} vs {math.expm1(med)}")
        expect(c["ci_low"] <= c["change"] <= c["ci_high"], "CI holds it")
        expect(doc["settings"]["estimator"] == "min", doc["settings"])
        expect(0 <= c["p"] <= c["p_holm"] <= 1, "p <= p_holm")
        expect(c["mde"] is None or c["mde"] >= 0.005, f"mde {c['mde']}")
    expect(doc["summary"]["regressed"] == 0, doc["summary"])
    expect(doc["settings"]["blocks"] == 12, doc["settings"])
    # one fresh worker per block and build, each writing its block
    for s in ("old", "new"):
        blocks = sorted(os.listdir(os.path.join(out, s)))
        expect(blocks == [f"block-{b:02d}" for b in range(1, 13)], blocks)
        for b in (blocks[0], blocks[-1]):
            res = json.load(open(os.path.join(out, s, b, "results.json"),
                                 encoding="utf-8"))
            jsonschema.validate(res, SCHEMA)
            ok = [c for c in res["cases"] if c["status"] == "ok"]
            expect(len(ok) == 2, f"{s}/{b}: {len(ok)} ok cases")
        # a block's value in ab.json is that block's fastest sample
        res = json.load(open(os.path.join(out, s, "block-05", "results.json"),
                             encoding="utf-8"))
        for c in doc["cases"]:
            rc = [x for x in res["cases"] if x["id"] == c["id"]][0]
            got = c[f"{s}_block_ns"][4]
            want = rc["stats"]["min_ns"]
            expect(abs(got - want) <= 1e-9 * want, f"{got} vs {want}")
    expect("2 cases: 0 regressed, 0 improved" in r.stdout, r.stdout)
    expect(doc["summary"]["unchanged"] + doc["summary"]["inconclusive"] == 2,
           doc["summary"])


def readme_ab_step():
    """The shell text of README's GitHub Actions step that runs ab."""
    text = open("README.md", encoding="utf-8").read()
    start = text.index("      - shell: bash")
    body = text[start:text.index("      - uses:", start)]
    run = body[body.index("run: |") + len("run: |"):]
    return "\n".join(l[10:] for l in run.splitlines() if l.strip())


@case("README's GitHub Actions step, run as the job runs it: Markdown in "
      "$GITHUB_STEP_SUMMARY, the job fails on a regression; --format json")
def gh_summary():
    cfg = path("calib.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(CONFIG.replace('{"op": "add", "shapes": [[4096]]}, '
                               '{"op": "relu", "shapes": [[4096]]}',
                               '{"op": "calib_work", "shapes": [[20000]]}'))
    slow = write_exe("slow-tbench", "#!/bin/sh\nTBENCH_CALIB_SCALE=1.5 "
                     f"exec {TBENCH} \"$@\"\n")
    step = readme_ab_step()
    expect("--format md" in step and "GITHUB_STEP_SUMMARY" in step, step)
    for new, rc, head in ((NEW, 0, "### tbench ab: no regression"),
                          (slow, 1, "### tbench ab: FAIL")):
        out, summary = path(f"gh-{rc}"), path(f"summary-{rc}.md")
        open(summary, "w").close()
        script = (step.replace("head/build/tbench ab", TBENCH + " ab")
                  .replace("base/build/tbench", OLD)
                  .replace("head/build/tbench", new)
                  .replace("head/configs/quick.json", cfg)
                  .replace("-o ab", f"-o {out} -q --blocks 8 "
                           "--threshold 10"))
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo",
                            "pipefail", "-c", script], capture_output=True,
                           text=True, timeout=300,
                           env=dict(os.environ, GITHUB_STEP_SUMMARY=summary))
        expect(r.returncode == rc, f"exit {r.returncode}, want {rc}: "
               f"{r.stderr}")
        md = open(summary, encoding="utf-8").read()
        expect(md.startswith(head + "\n") and md == r.stdout, md)
        expect("| case | old | new | change | 95% CI |" in md, md)
        if rc:
            expect("| **regressed** |" in md, md)
        expect(os.path.exists(os.path.join(out, "ab.json")), "no ab.json")
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "6", "-q",
               "-f", "add*", "--threshold", "50", "--format", "json")
    expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    doc = json.loads(r.stdout)
    expect(doc["schema"] == "tbench.ab/2" and len(doc["cases"]) == 1, doc)
    r = tbench("ab", OLD, NEW, path("two.json"), "--format", "html")
    expect(r.returncode == 2 and "--format is text, md or json" in r.stderr,
           r.stderr)


@case("--duet and --estimator median run too")
def duet():
    # two copies of one build: the threshold keeps a busy machine's
    # noise (+8% at 6 blocks seen in one run) from a "regressed" verdict;
    # this case checks that the modes run, not the verdict
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "6", "-q",
               "--duet", "--estimator", "median", "-f", "add*",
               "--threshold", "50")
    expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    expect("1 cases:" in r.stdout, r.stdout)


@case("--max-mde: a case the blocks cannot resolve that finely fails")
def max_mde():
    # the MDE is never below the threshold (0.5%), so 0.01% cannot be met
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "6", "-q",
               "-f", "add*", "--max-mde", "0.01")
    expect(r.returncode == 1, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    expect("1 case cannot be judged at --max-mde 0.01%" in r.stdout,
           r.stdout)
    r = tbench("ab", OLD, NEW, path("two.json"), "-q", "--max-mde", "0")
    expect(r.returncode == 2 and "--max-mde" in r.stderr, r.stderr)


def refused(exe, where, want):
    r = tbench("ab", OLD, exe, path("two.json"), "--blocks", "6", "-q")
    expect(r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
    lines = [l for l in r.stderr.splitlines() if l.startswith("tbench:")]
    expect(len(lines) == 1, f"one line wanted: {r.stderr!r}")
    expect(where in lines[0] and want in lines[0], lines[0])
    expect(r.stdout == "", f"nothing on stdout: {r.stdout!r}")


CALIB = """{
  "name": "calib",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.5, "min_samples": 5, "max_samples": 200,
              "ci_target": 0.01, "max_time_s": 0.6, "timeout_s": 30},
  "ops": [{"op": "calib_work", "shapes": [[100000]]}]
}
"""
with open(path("calib.json"), "w", encoding="utf-8") as f:
    f.write(CALIB)


def scaled(scale):
    """NEW as a build whose calib_work does `scale` times the work: the
    same binary, TBENCH_CALIB_SCALE set (docs/CONFIG.md, calib_work)."""
    return write_exe(f"scaled-{scale}", "#!/bin/sh\nTBENCH_CALIB_SCALE="
                     f"{scale} exec {TBENCH} \"$@\"\n")


def check_looks(doc, alpha=0.05):
    seq = doc["settings"]["sequential_run"]
    expect(doc["settings"]["sequential"] is True, doc["settings"])
    looks = seq["looks"]
    expect(len(looks) >= 1, "no look")
    for k, l in enumerate(looks, 1):
        expect(l["look"] == k, l)
        expect(abs(l["alpha"] - alpha / (k * (k + 1))) < 1e-12, l)
    for a, b in zip(looks, looks[1:]):
        expect(a["blocks"] < b["blocks"] and a["elapsed_s"] <= b["elapsed_s"],
               looks)
    for c in doc["cases"]:
        k = c["look"]
        expect(1 <= k <= len(looks), c)
        expect(c["blocks"] == looks[k - 1]["blocks"], c)
        expect(len(c["old_block_ns"]) == c["blocks"], "blocks stored")
        expect(c["stop"] in ("target", "decided", "budget", "max-blocks",
                             "error"), c["stop"])
        if c["verdict"] not in ("error", "skipped"):
            expect(abs(c["ci_level"] - (1 - 0.05 / (k * (k + 1)))) < 1e-12, c)
            expect(c["p_holm"] >= min(1, c["p"] * k * (k + 1)) * (1 - 1e-9),
                   c)
    m = doc["settings"]["machine"]
    expect(m["cpus"] >= 1 and m["seconds"] > 0, m)
    return looks


@case("sequential: an injected +5% is regressed and stops 'decided'; the looks in ab.json")
def sequential_injected():
    out = path("seq5")
    r = tbench("ab", OLD, scaled("1.05"), path("calib.json"), "--blocks",
               "8", "--target-mde", "1", "--budget", "60s", "-q", "-o", out)
    expect(r.returncode == 1, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    doc = json.load(open(os.path.join(out, "ab.json"), encoding="utf-8"))
    check_looks(doc)
    c = doc["cases"][0]
    expect(c["verdict"] == "regressed" and c["stop"] == "decided", c)
    expect(0.03 < c["change"] < 0.07, c["change"])
    expect("sequential: target MDE 1.00%" in r.stdout, r.stdout)
    expect("machine during the blocks" in r.stdout, r.stdout)


@case("sequential A/A: exit 0, no change found, every case stopped for a reason")
def sequential_aa():
    out = path("seqaa")
    # --threshold 10 as in same_build: an A/A never finds a change there
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "6",
               "--threshold", "10", "--target-mde", "10", "--budget", "20s",
               "--max-blocks", "14", "-q", "-o", out)
    expect(r.returncode == 0, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    doc = json.load(open(os.path.join(out, "ab.json"), encoding="utf-8"))
    looks = check_looks(doc)
    expect(looks[-1]["blocks"] <= 14, looks)
    for c in doc["cases"]:
        expect(c["verdict"] in ("unchanged", "inconclusive"), c)
        if c["stop"] == "target":
            expect(c["mde"] <= 0.1, c)


@case("a block's results that cannot be written: the blocks so far are "
      "judged, ab.json says why it stopped, exit 3 (review D12)")
def broken_write():
    out = path("broken")
    os.makedirs(os.path.join(out, "new"))
    # block-03 of NEW cannot be a folder: its worker's write fails
    open(os.path.join(out, "new", "block-03"), "w").close()
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "8", "-q",
               "--threshold", "10", "-o", out)
    expect(r.returncode == 3, f"exit {r.returncode}: {r.stderr}{r.stdout}")
    expect("stopped after 3 blocks" in r.stderr, r.stderr)
    doc = json.load(open(os.path.join(out, "ab.json"), encoding="utf-8"))
    st = doc["settings"]
    expect(st["blocks_run"] == 3 and "block-03" in (st["stopped"] or ""),
           st)
    for c in doc["cases"]:
        expect(c["blocks"] == 3 and len(c["old_block_ns"]) == 3, c)
        expect(c["verdict"] in ("unchanged", "inconclusive"), c["verdict"])
    r = tbench("ab", OLD, NEW, path("two.json"), "--blocks", "6", "-q",
               "-f", "add*", "--seed", "18446744073709551615", "-o",
               path("seed"))
    text = open(os.path.join(path("seed"), "ab.json"),
                encoding="utf-8").read()
    expect('"seed":\t18446744073709551615' in text or
           '"seed": 18446744073709551615' in text,
           "seed not written digit for digit")


@case("a script that is not tbench is refused (exit 2, one line)")
def not_tbench():
    exe = write_exe("not-tbench", "#!/bin/sh\nexit 0\n")
    refused(exe, "NEW: " + exe, "not a tbench that speaks worker protocol 1")


@case("a build speaking protocol 2 is refused (exit 2, one line)")
def wrong_version():
    exe = write_exe("fake-v2", FAKE_V2)
    refused(exe, "NEW: " + exe, "speaks worker protocol 2")


@case("a missing executable is refused (exit 2, one line)")
def missing():
    refused(path("nope"), "NEW:", "not an executable file")


@case("a build asked for another protocol says so and exits 2")
def worker_refuses():
    r = tbench("worker", "--protocol", "7", "--fd", "99")
    expect(r.returncode == 2, f"exit {r.returncode}")
    expect("protocol 7 is not spoken by this build (it speaks 1)"
           in r.stderr, r.stderr)


def sleepers(mark):
    """Pids of the `sleep MARK` processes."""
    want = f"sleep\0{mark}\0".encode()
    pids = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if f.read() == want:
                    pids.append(int(d))
        except OSError:
            pass
    return pids


@case("a build whose worker forked a helper and then crashed: the case "
      "is an error naming the signal at once, and the helper is gone (D8)")
def fork_then_crash():
    mark = "1171"
    exe = write_exe("fork-crash", f"#!/bin/sh\nsleep {mark} &\n"
                    f"TBENCH_FAULT='segv:warmup:relu/*' exec {TBENCH} \"$@\"\n")
    t0 = time.monotonic()
    r = tbench("ab", OLD, exe, path("two.json"), "--blocks", "6", "-q",
               "-o", path("ab-fork"))
    wall = time.monotonic() - t0
    left = sleepers(mark)
    for p in left:
        os.kill(p, signal.SIGKILL)
    expect(r.returncode == 1, f"exit {r.returncode}: {r.stderr}")
    doc = json.load(open(os.path.join(path("ab-fork"), "ab.json"),
                         encoding="utf-8"))
    relu = [c for c in doc["cases"] if c["id"].startswith("relu/")][0]
    msg = relu.get("message") or ""
    expect(relu["verdict"] == "error" and
           ("signal 11" in msg or "SIGSEGV" in msg), f"relu: {relu}")
    expect(wall < 25, f"ab took {wall:.0f} s: the crash waited for "
           "measure.timeout_s (30 s)")
    expect(not left, f"helpers left running: {left}")


@case("worker --fd that is no open socket: exit 2 with one line (D17)")
def worker_bad_fd():
    for fd in ("999", "0", "1"):
        r = subprocess.run([TBENCH, "worker", "--protocol", "1", "--fd",
                            fd], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        expect(r.returncode == 2 and
               f"--fd {fd} is not an open socket" in r.stderr,
               f"--fd {fd}: exit {r.returncode}: {r.stderr}")


@case("usage errors exit 2: missing args, bad --blocks, bad config")
def usage():
    for args, want in ((["ab", OLD, NEW], "expected OLD NEW CONFIG"),
                       (["ab", OLD, NEW, path("two.json"), "--blocks", "3"],
                        "--blocks"),
                       (["ab", OLD, NEW, path("missing.json")],
                        "missing.json"),
                       (["ab", OLD, NEW, path("two.json"), "--seed", "-1"],
                        "--seed"),
                       (["ab", OLD, NEW, path("two.json"), "--budget", "5m"],
                        "give --target-mde too"),
                       (["ab", OLD, NEW, path("two.json"), "--target-mde",
                         "0.1"], "below the threshold"),
                       (["ab", OLD, NEW, path("two.json"), "--target-mde",
                         "1", "--budget", "5 min"], "--budget"),
                       (["ab", OLD, NEW, path("two.json"), "--target-mde",
                         "1", "--max-blocks", "10", "--blocks", "12"],
                        "--max-blocks")):
        r = tbench(*args)
        expect(r.returncode == 2, f"{args}: exit {r.returncode}")
        expect(want in r.stderr, f"{args}: {r.stderr}")


sys.exit(run_cases(lambda failed: failed or shutil.rmtree(TMP, True)))
