#!/usr/bin/python3
"""Output folders of exec -o, plot -o and report's charts are all or
nothing, printed as TAP.

Usage: test_cli_outdir.py PATH/TO/tbench   (run from the repository root)

A full disk is simulated with RLIMIT_FSIZE (SIGXFSZ ignored, so a write
past the limit fails with EFBIG, as one on a full disk fails with
ENOSPC): the command must fail with one line naming the folder asked
for, and leave neither that folder nor its temporary folder behind
(issue 15: they left partial folders).  Without the limit the same
commands succeed, into a new folder or one that already has files.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
DATA = os.path.abspath("tests/data/report")
TMP = tempfile.mkdtemp(prefix="tbench-outdir-")


def run(args, fsize=None):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          preexec_fn=limit if fsize else None, timeout=120)


def leftovers(parent):
    return sorted(n for n in os.listdir(parent) if ".tmp-" in n)


def exec_args(out):
    return ["exec", "relu", "--shape", "64x64", "--dtype", "f64", "-o", out]


def plot_args(out):
    return ["plot", os.path.join(DATA, "mixed.json"),
            os.path.join(DATA, "baseline.json"), "-o", out, "--no-render"]


def check_full_disk(args_of, fsize, what):
    parent = tempfile.mkdtemp(dir=TMP)
    out = os.path.join(parent, "out")
    p = run(args_of(out), fsize)
    expect(p.returncode != 0, f"{what}: exit 0 on a full disk")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(len(lines) == 1, f"{what}: {p.stderr!r}")
    expect(lines[0].startswith(f"tbench: {what}: {out}/"),
           f"{what}: message does not name the folder: {lines[0]!r}")
    expect(not os.path.exists(out), f"{what}: left a partial {out}: "
           f"{os.listdir(out) if os.path.isdir(out) else ''}")
    expect(leftovers(parent) == [], f"{what}: left {leftovers(parent)}")


@case("exec -o on a full disk: fails, no folder and no temporary folder")
def t_exec_full():
    # input0.npy is 32 KiB: the first file already fails
    check_full_disk(exec_args, 20000, "exec")
    # ... and after the inputs are written (64x1 and 1x64; the 64x64
    # output0.npy fails)
    check_full_disk(lambda out: ["exec", "add", "--shape", "64x1,1x64",
                                 "--dtype", "f64", "-o", out], 10000,
                    "exec")


@case("plot -o on a full disk: fails, no folder and no temporary folder")
def t_plot_full():
    check_full_disk(plot_args, 1000, "plot")


@case("report's charts on a full disk: fails, no chart folder, no "
      "temporary folder, no report (they were left half written)")
def t_report_full():
    parent = tempfile.mkdtemp(dir=TMP)
    md = os.path.join(parent, "r.md")
    perf = os.path.join(parent, "perf")
    p = run(["report", os.path.join(DATA, "mixed.json"), "-o", md], 1000)
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(len(lines) == 1 and
           lines[0].startswith(f"tbench: report: charts: {perf}/"),
           f"report: {p.stderr!r}")
    expect(sorted(os.listdir(parent)) == [], f"left {os.listdir(parent)}")
    # without the limit: the report and its charts
    p = run(["report", os.path.join(DATA, "mixed.json"), "-o", md])
    expect(p.returncode == 0, p.stderr)
    expect(os.path.isfile(md) and any(n.endswith(".gp")
                                      for n in os.listdir(perf)),
           f"{os.listdir(parent)}")
    expect(leftovers(parent) == [], f"left {leftovers(parent)}")


@case("past RLIMIT_FSIZE with SIGXFSZ at its default (death): export and "
      "run fail with one line and leave no temporary file (review D9)")
def t_sigxfsz():
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
    # run: seven cases, so results.json (about 2 KB a case and the
    # machine's 2 KB) is sure to pass 8 KiB on any machine; one case
    # (6.1 KB on a Zen 4 VM) fitted under it and exited 0
    d = tempfile.mkdtemp(dir=TMP)
    src = os.path.join(DATA, "mixed.json")
    for args, target in ((["export", src, "--format", "gbench", "-o",
                           os.path.join(d, "x.json")], d),
                         (["run", "--op", "add", "--shape", "64..4096", "-o",
                           os.path.join(d, "r"), "-q"],
                          os.path.join(d, "r"))):
        p = subprocess.run([TBENCH, *args], capture_output=True, text=True,
                           preexec_fn=limit, timeout=120)
        expect(p.returncode in (1, 2), f"{args[0]}: exit {p.returncode} "
               f"(killed by a signal?): {p.stderr!r}")
        lines = [l for l in p.stderr.splitlines() if l.startswith("tbench")]
        expect(lines and "File too large" in lines[-1], f"{p.stderr!r}")
        left = [n for n in os.listdir(target) if ".tmp" in n] \
            if os.path.isdir(target) else []
        expect(left == [], f"{args[0]}: left {left}")


@case("exec -o and plot -o: a new folder, and a folder with files")
def t_ok():
    parent = tempfile.mkdtemp(dir=TMP)
    for what, args_of in (("exec", exec_args), ("plot", plot_args)):
        out = os.path.join(parent, what)
        p = run(args_of(out))
        expect(p.returncode == 0, f"{what}: {p.stderr}")
        first = sorted(os.listdir(out))
        expect(first, f"{what}: empty folder")
        expect(oct(os.stat(out).st_mode & 0o777) ==
               oct(0o777 & ~_umask()), f"{what}: mode "
               f"{oct(os.stat(out).st_mode & 0o777)}")
        # again into the same folder, which keeps a file of the user's
        with open(os.path.join(out, "mine.txt"), "w") as f:
            f.write("keep")
        p = run(args_of(out + "/"))
        expect(p.returncode == 0, f"{what} again: {p.stderr}")
        expect(sorted(os.listdir(out)) == sorted(first + ["mine.txt"]),
               f"{what}: {sorted(os.listdir(out))}")
        expect(leftovers(parent) == [], f"left {leftovers(parent)}")
    meta = json.load(open(os.path.join(parent, "exec", "exec.json")))
    expect(meta["status"] == "ok", meta["status"])
    # a target that is a file is refused, and left alone
    path = os.path.join(parent, "file")
    with open(path, "w") as f:
        f.write("x")
    p = run(exec_args(path))
    expect(p.returncode == 2 and "is not a folder" in p.stderr, p.stderr)
    expect(open(path).read() == "x", "file changed")


@case("peak -o and selftest -o into a missing folder, plot -o onto a file: "
      "exit 2 with one line before any work (D17: exit 1, after seconds "
      "of measuring for peak and selftest)")
def t_bad_out_early():
    gone = os.path.join(TMP, "no-such-folder")
    afile = os.path.join(TMP, "a-file")
    with open(afile, "w", encoding="utf-8") as f:
        f.write("x")
    for args, want in (
            (["peak", "--quick", "-o", os.path.join(gone, "p.json")],
             "no folder " + gone),
            (["selftest", "-o", os.path.join(gone, "s.json")],
             "no folder " + gone),
            (plot_args(afile), "exists and is not a folder")):
        p = run(args)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        expect(p.returncode == 2 and len(lines) == 1 and want in lines[0],
               f"{args[0]}: exit {p.returncode}: {p.stderr}")
        expect(not os.path.exists(gone), f"{args[0]}: made {gone}")
    expect(open(afile).read() == "x", "plot changed the file")


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


if __name__ == "__main__":
    rc = run_cases()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)
