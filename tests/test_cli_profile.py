#!/usr/bin/python3
"""tbench profile: one case under a profiler (issue 31 item 4), as TAP.

Usage: test_cli_profile.py PATH/TO/tbench   (run from the repository root)

- callgrind: callgrind.out names the case's kernel (collection only
  around the calls: the harness's check and setup are not in it).
- massif: massif.out has heap snapshots.
- perf: perf.data and a report (or flamegraph), or, where the kernel
  refuses perf_event_open, exit 2 with one line naming perf and its log.
- errors, each one line and exit 2, nothing run: a case not in the
  configs, an unknown --with, a tool not on PATH, a bad --seconds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-profile-")
CFG = os.path.join(TMP, "p.json")
ID = "relu/4096/f32/cpu[isa=avx2,threads=1]"
with open(CFG, "w", encoding="utf-8") as f:
    f.write('{"name": "p", "backends": [{"name": "cpu", "isa": "avx2"}],'
            ' "ops": [{"op": "relu", "shapes": [[4096]]}]}')


def tb(*args, env=None):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=300, cwd=TMP, env=env)


def one_line_error(p, *needles):
    lines = [l for l in p.stderr.splitlines()
             if l.startswith("tbench:") and "for about" not in l]
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect(len(lines) == 1 and all(n in lines[0] for n in needles),
           f"{lines} lacks {needles}")


@case("callgrind: the kernel's calls, and the command to open them")
def t_callgrind():
    if not shutil.which("valgrind"):
        return "SKIP valgrind not installed"
    out = os.path.join(TMP, "cg")
    p = tb("profile", ID, CFG, "--with", "callgrind", "--seconds", "0.5",
           "-o", out)
    if p.returncode == 2 and "built with sanitizers" in p.stderr:
        one_line_error(p, "which valgrind cannot run")
        return "SKIP " + p.stderr.strip().splitlines()[-1]
    expect(p.returncode == 0, p.stderr + p.stdout)
    data = os.path.join(out, "callgrind.out")
    expect(f"profile: {data}" in p.stdout and "callgrind_annotate" in
           p.stdout, p.stdout)
    text = open(data, encoding="utf-8", errors="replace").read()
    expect("relu_f32_avx2" in text, "the kernel is not in callgrind.out")
    # collected only around the calls: no config parsing in it
    expect("tb_config_load" not in text, "setup collected too")


@case("massif: heap snapshots of the run")
def t_massif():
    if not shutil.which("valgrind"):
        return "SKIP valgrind not installed"
    out = os.path.join(TMP, "ms")
    p = tb("profile", ID, CFG, "--with", "massif", "--seconds", "0.3",
           "-o", out)
    if p.returncode == 2 and "built with sanitizers" in p.stderr:
        one_line_error(p, "which valgrind cannot run")
        return "SKIP " + p.stderr.strip().splitlines()[-1]
    expect(p.returncode == 0, p.stderr + p.stdout)
    text = open(os.path.join(out, "massif.out"), encoding="utf-8").read()
    expect("snapshot=" in text and "mem_heap_B=" in text, text[:300])
    expect("ms_print" in p.stdout, p.stdout)


@case("perf: perf.data and a report or flamegraph, or a one-line refusal")
def t_perf():
    if not shutil.which("perf"):
        return "SKIP perf not installed"
    out = os.path.join(TMP, "perf")
    p = tb("profile", ID, CFG, "--seconds", "0.5", "-o", out)
    if p.returncode == 2:
        one_line_error(p, "perf failed", "log:")
        return None
    expect(p.returncode == 0, p.stderr)
    expect(os.path.getsize(os.path.join(out, "perf.data")) > 0, "perf.data")
    made = [f for f in ("perf-report.txt", "flamegraph.svg")
            if os.path.exists(os.path.join(out, f))]
    expect(len(made) == 1, f"report files: {made}")
    if made[0] == "perf-report.txt":
        text = open(os.path.join(out, made[0]), encoding="utf-8").read()
        expect("relu" in text, "the kernel is not in perf's report")


@case("errors: one line, exit 2, nothing run")
def t_errors():
    one_line_error(tb("profile", "relu/1/f32/cpu", CFG, "--with",
                      "callgrind"), "no case 'relu/1/f32/cpu'")
    one_line_error(tb("profile", ID, CFG, "--with", "gprof"),
                   "--with is perf, callgrind, massif, nsys or ncu")
    one_line_error(tb("profile", ID, CFG, "--seconds", "0"), "--seconds")
    one_line_error(tb("profile", ID), "give CASE-ID and the config")
    env = dict(os.environ, PATH="/nonexistent")
    p = tb("profile", ID, CFG, "--with", "massif", env=env)
    one_line_error(p, "'valgrind' is not installed"
                   if "sanitizers" not in p.stderr else "sanitizers")
    one_line_error(tb("profile", ID, CFG, "--with", "nsys", env=env),
                   "'nsys' is not installed")


run_cases()
