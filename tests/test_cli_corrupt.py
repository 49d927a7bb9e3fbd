#!/usr/bin/python3
"""One loader for every command: corrupt result files, printed as TAP.

Usage: test_cli_corrupt.py PATH/TO/tbench   (run from the repository root)

Every file of tests/data/corrupt/ (made by make_corrupt.py there; issue 15
found report and plot rendering files compare rejects, and crashing on
some) is given to compare, report, plot, history and export, on its own
and next to a good file (--with, --baseline, a history).  Each command
must exit 2 with the same one line "tbench: FILE: what", never crash.
Also: a stream with no end (/dev/zero) and a file over the size limit
fail at once.
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
DATA = os.path.abspath("tests/data/corrupt")
GOOD = os.path.abspath("tests/data/report/mixed.json")
TMP = tempfile.mkdtemp(prefix="tbench-corrupt-")
EXPECT = json.load(open(os.path.join(DATA, "expect.json"), encoding="utf-8"))


def run(args, cwd=TMP, timeout=120):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def commands(name):
    """Every way a command can be handed the file NAME."""
    return [
        ["compare", name, "good.json"],
        ["compare", "good.json", name],
        ["compare", "good.json", "good.json", "--vs", name],
        ["report", name, "-o", "r.md", "--no-charts"],
        ["report", "good.json", "--with", name, "-o", "r.md",
         "--no-charts"],
        ["report", "good.json", "--baseline", name, "-o", "r.md",
         "--no-charts"],
        ["plot", name, "-o", "p", "--no-render"],
        ["plot", "good.json", "--with", name, "-o", "p", "--no-render"],
        ["plot", "good.json", "--baseline", name, "-o", "p",
         "--no-render"],
        ["plot", "good.json", name, "-o", "p", "--no-render"],
        ["history", "good.json", name],
        ["export", name, "--format", "gbench"],
    ]


def check_file(name):
    want = "tbench: %s: %s" % (name, EXPECT[name])
    lines = set()
    for args in commands(name):
        p = run(args)
        expect(p.returncode == 2,
               f"{' '.join(args)}: exit {p.returncode}: {p.stderr[-300:]}")
        err = [l for l in p.stderr.splitlines() if l.strip()]
        expect(len(err) == 1, f"{' '.join(args)}: {p.stderr!r}")
        lines.add(err[0])
        for out in ("r.md", "p"):
            expect(not os.path.exists(os.path.join(TMP, out)),
                   f"{' '.join(args)}: wrote {out}")
    expect(len(lines) == 1, f"different messages: {sorted(lines)}")
    line = lines.pop()
    expect(line.startswith(want), f"{line!r} does not start with {want!r}")


shutil.copy(GOOD, os.path.join(TMP, "good.json"))
for name in sorted(EXPECT):
    shutil.copy(os.path.join(DATA, name), os.path.join(TMP, name))
    case(f"{name}: every command exits 2 with '{EXPECT[name][:50]}'")(
        lambda name=name: check_file(name))


@case("the good file is accepted by every command (the test can pass)")
def t_good():
    for args in commands("good.json"):
        if args[0] == "history" or "--vs" in args:
            continue
        p = run(args)
        expect(p.returncode in (0, 1), f"{args}: exit {p.returncode}: "
               f"{p.stderr}")
        for out in ("r.md", "p"):
            path = os.path.join(TMP, out)
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)


@case("control characters in a result file never reach the terminal or "
      "the report (reliability review D14)")
def t_escapes():
    d = json.load(open(GOOD, encoding="utf-8"))
    c = next(x for x in d["cases"] if x["status"] == "ok")
    c["id"] += "\u001b]0;PWNED\u0007\u001b[2J"
    c["message"] = "ok\r\u001b[32mall 83 cases passed\u001b[0m"
    c["impl"] = "k\u001b[2J\n\u0001"
    esc = os.path.join(TMP, "esc.json")
    with open(esc, "w", encoding="utf-8") as f:
        json.dump(d, f)
    outs = []
    for args in (["show", "*", "esc.json"], ["show", "*", "esc.json",
                                              "--json"],
                 ["compare", "esc.json", "esc.json"],
                 ["compare", "esc.json", "esc.json", "--format", "md"],
                 ["export", "esc.json", "--format", "gbench"]):
        p = run(args)
        expect(p.returncode in (0, 1), f"{args}: exit {p.returncode}: "
               f"{p.stderr}")
        outs.append((args, p.stdout + p.stderr))
    p = run(["report", "esc.json", "-o", "esc.md", "--no-charts"])
    expect(p.returncode == 0, p.stderr)
    outs.append((["report"], open(os.path.join(TMP, "esc.md"),
                                  encoding="utf-8").read()))
    for args, text in outs:
        bad = [ch for ch in text if ord(ch) < 0x20 and ch not in "\n\t"
               or ord(ch) == 0x7f]
        expect(not bad, f"{' '.join(args)}: {len(bad)} control characters "
               f"({sorted(set(map(ord, bad)))})")
    expect("PWNED" in outs[0][1], "the id is still shown, made harmless")
    os.remove(os.path.join(TMP, "esc.md"))


@case("compare /dev/zero fails at once with one line (no endless read)")
def t_dev_zero():
    t = time.monotonic()
    p = run(["compare", "/dev/zero", "good.json"], timeout=30)
    dt = time.monotonic() - t
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect(p.stderr.strip() == "tbench: /dev/zero: corrupt: contains a NUL "
           "byte at offset 0", repr(p.stderr))
    expect(dt < 5, f"took {dt:.1f} s")


@case("a file over 1 GiB is refused before it is read")
def t_too_large():
    path = os.path.join(TMP, "huge.json")
    with open(path, "wb") as f:   # sparse: no disk space used
        f.truncate((1 << 30) + 1)
    t = time.monotonic()
    p = run(["report", "huge.json", "-o", "r.md"], timeout=30)
    dt = time.monotonic() - t
    os.remove(path)
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect(p.stderr.strip() == "tbench: huge.json: too large (1073741825 "
           "bytes; a result file is at most 1024 MiB)", repr(p.stderr))
    expect(dt < 5, f"took {dt:.1f} s")


if __name__ == "__main__":
    rc = run_cases()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)
