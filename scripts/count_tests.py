#!/usr/bin/env python3
"""Count test cases over meson test logs and print 'N passed, N failed'.

Usage: count_tests.py BUILDDIR...

Every TAP line 'ok' / 'not ok' is one case.  A test program that failed
without reporting a failed case (a crash, a sanitizer abort, a timeout)
counts as one more failure, and so does a build dir without a test log
(its build failed).  Every failed case is named on stderr, so the
last lines of a CI log say what failed.  Exit status 1 if anything failed.

Each test that took more than a third of its meson timeout (`meson
introspect --tests`) is named on stderr with both times, and the
slowest test relative to its timeout is always named: the suite's goal
is every test under a third of its timeout on a loaded machine, so a
test near its limit is seen before it times out.  These lines never
fail the run (the machine's load is not the test's fault).  Standard
library only, so any python3 works.
"""
import json
import re
import subprocess
import sys


def timeouts(d):
    """name -> timeout in seconds of build dir d's tests, {} if unknown."""
    try:
        p = subprocess.run(["meson", "introspect", d, "--tests"],
                           capture_output=True, text=True, timeout=120)
        return {t["name"]: t["timeout"] for t in json.loads(p.stdout)
                if t.get("timeout")}
    except (OSError, ValueError, KeyError, TypeError,
            subprocess.SubprocessError):
        return {}


passed = failed = 0
for d in sys.argv[1:]:
    try:
        with open(f"{d}/meson-logs/testlog.json", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except OSError:
        print(f"{d}: no test log (build failed?)", file=sys.stderr)
        failed += 1
        continue
    limit = timeouts(d)
    worst = None
    for t in lines:
        lim, took = limit.get(t.get("name")), t.get("duration")
        if lim and took is not None:
            if worst is None or took / lim > worst[1] / worst[2]:
                worst = (t.get("name"), took, lim)
            if took > lim / 3:
                print(f"{d}: {t.get('name')}: {took:.0f} s, over a third "
                      f"of its {lim} s timeout", file=sys.stderr)
        out = t.get("stdout") or ""
        ok = len(re.findall(r"^ok\b", out, re.M))
        nots = re.findall(r"^not ok\b.*$", out, re.M)
        bad = len(nots)
        for line in nots:
            print(f"{d}: {t.get('name')}: {line[:200]}", file=sys.stderr)
        if t.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and bad == 0:
            print(f"{d}: {t.get('name')}: {t.get('result')}",
                  file=sys.stderr)
            bad = 1
        passed += ok
        failed += bad
    if worst:
        print(f"{d}: slowest for its timeout: {worst[0]}, {worst[1]:.0f} s "
              f"of {worst[2]} s", file=sys.stderr)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or passed == 0 else 0)
