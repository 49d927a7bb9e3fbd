#!/usr/bin/env python3
"""Count test cases over meson test logs and print 'N passed, N failed'.

Usage: count_tests.py BUILDDIR...

Every TAP line 'ok' / 'not ok' is one case.  A test program that failed
without reporting a failed case (a crash, a sanitizer abort, a timeout)
counts as one more failure, and so does a build dir without a test log
(its build failed).  Every failed case is named on stderr, so the
last lines of a CI log say what failed.  Exit status 1 if anything failed.  Standard library
only, so any python3 works.
"""
import json
import re
import sys

passed = failed = 0
for d in sys.argv[1:]:
    try:
        with open(f"{d}/meson-logs/testlog.json", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except OSError:
        print(f"{d}: no test log (build failed?)", file=sys.stderr)
        failed += 1
        continue
    for t in lines:
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
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or passed == 0 else 0)
