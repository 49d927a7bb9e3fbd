#!/usr/bin/python3
"""Run one libFuzzer harness for a bounded time; print TAP.

Usage: run_fuzz.py FUZZER CORPUS NAME [SEEDS...]

Copies the committed seed corpus CORPUS to a temporary folder, runs
FUZZER there (with the *.json files of the SEEDS folders) for
$TB_FUZZ_SECONDS seconds (default 60) under the
sanitizers it was built with, and prints one TAP case with the number of
executions.  A crash, leak, timeout (-timeout: 30 s for one input) or
sanitizer report fails the case; its input is copied into CORPUS (named
crash-SHA1, so that committing it makes it a permanent seed) and printed
in hex.  A slow input (libFuzzer's slow-unit-SHA1: over 10 s, well
under the timeout, which a loaded CI machine reaches on a large valid
result file) is named as a note, not a failure.  Standard library
only.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

exe, corpus, name = sys.argv[1:4]
extra = [os.path.abspath(d) for d in sys.argv[4:]]  # more seed folders
exe, corpus = os.path.abspath(exe), os.path.abspath(corpus)
seconds = int(os.environ.get("TB_FUZZ_SECONDS", "60"))
print("1..1")
work = tempfile.mkdtemp(prefix=f"tbench-fuzz-{name}-")
try:
    seeds = os.path.join(work, "corpus")
    shutil.copytree(corpus, seeds)
    for d in extra:   # fixtures kept elsewhere in tests/data (*.json)
        for f in os.listdir(d):
            if f.endswith(".json") and f != "expect.json":
                shutil.copy(os.path.join(d, f),
                            os.path.join(seeds, os.path.basename(d) + "-" + f))
    cwd = os.path.join(work, "cwd")
    os.mkdir(cwd)
    # result files the CLI fuzzer's paths can name (run from the root)
    for f in ("mixed.json", "baseline.json", "numpy.json", "single.json"):
        shutil.copy(os.path.join("tests", "data", "report", f), cwd)
    n_seeds0 = len(os.listdir(seeds))
    art = os.path.join(work, "art") + os.sep
    os.mkdir(art)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    p = subprocess.run(
        [exe, f"-max_total_time={seconds}", "-timeout=30",
         "-rss_limit_mb=3072", "-close_fd_mask=3", "-print_final_stats=1",
         f"-artifact_prefix={art}", seeds],
        cwd=cwd, env=env, capture_output=True, text=True,
        errors="replace", timeout=seconds + 300)
    log = p.stdout + p.stderr
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    execs = int(m.group(1)) if m else 0
    found = sorted(f for f in os.listdir(art)
                   if not f.startswith("slow-unit-"))
    slow = sorted(f for f in os.listdir(art) if f.startswith("slow-unit-"))
    n_seeds = n_seeds0
    if p.returncode == 0 and not found and execs > 0:
        print(f"ok 1 - fuzz {name}: {execs} execs in {seconds} s "
              f"({n_seeds} seeds)")
        for f in slow:
            size = os.path.getsize(os.path.join(art, f))
            print(f"# note: {f} ({size} bytes) took over 10 s "
                  "(a slow input, under the 30 s timeout)")
        sys.exit(0)
    print(f"not ok 1 - fuzz {name}: exit {p.returncode} after {execs} "
          f"execs")
    for f in found:
        src = os.path.join(art, f)
        dst = os.path.join(corpus, f)
        shutil.copy(src, dst)
        with open(src, "rb") as fh:
            data = fh.read()
        print(f"# {f}: {len(data)} bytes, now in {dst} (commit it)")
        print(f"# hex: {data[:256].hex()}")
    for line in log.splitlines()[-60:]:
        print(f"# {line}")
    sys.exit(1)
finally:
    shutil.rmtree(work, ignore_errors=True)
