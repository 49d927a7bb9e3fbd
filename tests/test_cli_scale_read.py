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

Tiny records (3 samples, as a run of many small cases makes them): two
files of 300 and 3,000 such cases, and each reader (compare and history
of a file against itself, report, show --json of every case, export,
and merge of the file split into 2 shards by scripts/split_shards.py)
must grow by less than 6 KB a case between them (the peak RSS's
difference over the 2,700 cases).  The loader that kept every record's
cJSON tree took 11.7-24.8 KB a tiny case (compare 22.1, show --json
21.1, merge 24.8); the typed records alone take 3.0-5.1.
"""
import json
import os
import shutil
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
    """Run tbench args; (exit code, peak RSS in MB, seconds, stderr).
    GNU time's %M where it is installed: wait4's ru_maxrss of a child
    starts at this process's own, which the tiny files' json.load made
    larger than the readers'."""
    t0 = time.monotonic()
    kbf = os.path.join(TMP, "kb.txt")
    timed = os.access("/usr/bin/time", os.X_OK)
    pre = ["/usr/bin/time", "-f", "%M", "-o", kbf] if timed else []
    p = subprocess.Popen([*pre, TBENCH, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    kb = ru.ru_maxrss
    if timed:
        with open(kbf) as f:
            kb = int(f.read().split()[-1])
        # GNU time says so on stderr when the command's status is not 0
        err = "\n".join(l for l in err.splitlines()
                        if not l.startswith("Command exited"))
    return p.returncode, kb / 1024, time.monotonic() - t0, err


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


TINY = (300, 3000)
TINY_KB = 6.0


def tiny_file(n):
    return os.path.join(TMP, f"tiny{n}.json")


@case("gen_scale_file.py and split_shards.py make the tiny files")
def make_tiny():
    if sanitized():
        return SKIP
    for n in TINY:
        p = subprocess.run(["/usr/bin/python3", "scripts/gen_scale_file.py",
                            "tests/data/report/single.json", str(n), "3",
                            tiny_file(n)], capture_output=True, text=True,
                           timeout=300)
        expect(p.returncode == 0, p.stderr)
        p = subprocess.run(["/usr/bin/python3", "scripts/split_shards.py",
                            tiny_file(n), "2",
                            os.path.join(TMP, f"sh{n}")],
                           capture_output=True, text=True, timeout=300)
        expect(p.returncode == 0, p.stderr)
        # the template's config is not these cases' plan: shards without
        # a recorded selection are not planned again by merge
        for i in (1, 2):
            f = os.path.join(TMP, f"sh{n}", f"s{i}", "results.json")
            with open(f) as fh:
                d = json.load(fh)
            del d["shard"]["selection"]
            with open(f, "w") as fh:
                json.dump(d, fh)


def per_case(name, args_of):
    """The reader's peak RSS growth per tiny case between TINY's sizes."""
    if sanitized():
        return SKIP
    mb = []
    for n in TINY:
        rc, m, s, err = rss_of(args_of(n))
        expect(rc in (0, 1), f"{name} ({n} cases): exit {rc}: {err.strip()}")
        print(f"# {name}, {n} tiny cases: {m:.1f} MB peak, {s:.1f} s")
        mb.append(m)
    kb = (mb[1] - mb[0]) * 1024 / (TINY[1] - TINY[0])
    print(f"# {name}: {kb:.2f} KB a tiny case (bound {TINY_KB})")
    expect(kb < TINY_KB, f"{name}: {kb:.1f} KB a tiny case, the bound is "
           f"{TINY_KB} KB")


@case("compare of tiny records grows by less than 6 KB a case")
def tiny_compare():
    return per_case("compare", lambda n: ["compare", tiny_file(n),
                                          tiny_file(n)])


@case("history of tiny records grows by less than 6 KB a case")
def tiny_history():
    return per_case("history", lambda n: ["history", tiny_file(n),
                                          tiny_file(n)])


@case("report of tiny records grows by less than 6 KB a case")
def tiny_report():
    return per_case("report", lambda n: ["report", tiny_file(n), "-o",
                                         os.path.join(TMP, "t.md"),
                                         "--no-charts"])


@case("show --json of every tiny record grows by less than 6 KB a case")
def tiny_show():
    # every record read again from the file and printed, one at a time
    return per_case("show", lambda n: ["show", "--json", "*",
                                       tiny_file(n)])


@case("export of tiny records grows by less than 6 KB a case")
def tiny_export():
    return per_case("export", lambda n: ["export", tiny_file(n), "--format",
                                         "gbench", "-o",
                                         os.path.join(TMP, "g.json")])


@case("merge of tiny records grows by less than 6 KB a case")
def tiny_merge():
    return per_case("merge", lambda n: [
        "merge", os.path.join(TMP, f"sh{n}", "s1"),
        os.path.join(TMP, f"sh{n}", "s2"), "-o",
        os.path.join(TMP, f"merged{n}.json")])


def cleanup(failed):
    shutil.rmtree(TMP, ignore_errors=True)


sys.exit(run_cases(cleanup))
