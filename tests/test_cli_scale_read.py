#!/usr/bin/python3
"""The readers' memory on a large result file (issue 33, "Scale"), as TAP.

Usage: test_cli_scale.py PATH/TO/tbench   (run from the repository root)

scripts/gen_scale_file.py makes a file of 500 ok cases of 920 samples
each (about 9 MB, 460,000 samples) from the first ok record of
tests/data/report/single.json; compare, history, report and show read it
(compare and history twice: as both sides) and the peak RSS of each
(wait4's ru_maxrss) must stay under 60 MB + 32 bytes a sample (a sample
is 8 bytes kept as a double).  The loader that kept the whole cJSON
document took a node of 64 bytes and more per sample: at 1,000 such
cases compare took 198 MB and report 111 MB, over that bound (88 MB).  Times are never asserted (the machine is
shared), only printed.  Skipped under sanitizers (`tbench --version`
says "sanitizers"), whose allocator keeps freed memory.
"""
import os
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-scale-")
N, S = 500, 920
FILE = os.path.join(TMP, "big.json")
BOUND_MB = 60 + 32 * N * S / 2**20


def rss_of(args):
    """Run tbench args; (exit code, peak RSS in MB, seconds, stderr)."""
    t0 = time.monotonic()
    p = subprocess.Popen([TBENCH, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_maxrss / 1024, time.monotonic() - t0, err


def bounded(name, args, codes=(0, 1)):
    if sanitized():
        return SKIP
    rc, mb, s, err = rss_of(args)
    print(f"# {name}: {mb:.0f} MB peak, {s:.1f} s (bound {BOUND_MB:.0f} MB)")
    expect(rc in codes, f"{name}: exit {rc}: {err.strip()}")
    expect(mb < BOUND_MB, f"{name}: peak RSS {mb:.0f} MB over the bound "
           f"{BOUND_MB:.0f} MB ({N} cases of {S} samples)")


def sanitized():
    p = subprocess.run([TBENCH, "--version"], capture_output=True,
                       text=True)
    return "sanitizers" in p.stdout


SKIP = "SKIP a sanitizer build: its allocator keeps freed memory"


@case("gen_scale_file.py makes the file")
def make():
    if sanitized():
        return SKIP
    p = subprocess.run(["/usr/bin/python3", "scripts/gen_scale_file.py",
                        "tests/data/report/single.json", str(N), str(S),
                        FILE], capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, p.stderr)
    print(f"# {os.path.getsize(FILE) / 2**20:.1f} MB, {N} cases x {S}")


@case("compare A A stays under the memory bound")
def compare():
    return bounded("compare", ["compare", FILE, FILE])


@case("history A A stays under the memory bound")
def history():
    return bounded("history", ["history", FILE, FILE])


@case("report --no-charts stays under the memory bound")
def report():
    return bounded("report", ["report", FILE, "-o", os.path.join(TMP, "r.md"),
                       "--no-charts"])


@case("show --json of every case stays under the memory bound")
def show():
    # every record printed with its samples put back, one at a time
    return bounded("show", ["show", "--json", "relu/1*", FILE])


def cleanup(failed):
    for f in os.listdir(TMP):
        os.unlink(os.path.join(TMP, f))
    os.rmdir(TMP)


sys.exit(run_cases(cleanup))
