#!/usr/bin/env python3
"""Check that the layers of src/ point down only (docs/ARCHITECTURE.md).

    cli -> report, harness -> backends -> ops -> base

Every `#include "..."` of every file under src/ is resolved (relative to
the file, then to src/) and must land in the file's own layer or in one
the table below allows; report and harness never include each other.
The generated tb_config.h and tb_commit.h may be included anywhere; a
header generated in the build tree belongs to the folder its include
names.

A second rule keeps the cpu backend's seam: outside src/backends/cpu/
no file includes a header of that folder (isa.h, kreg.h, kernels.h,
the generated cpu_config.h...) except its public ones, CPU_PUBLIC.  The
harness learns the cpu backend's ISA levels through the backend
interface (backend.h's `host` slot), not its private headers.

Prints TAP for the test suite (one '# ' line per offending include) and
exits 1 on any offence.  tests/test_check_layers.py plants violations
in a copy and checks that each rule catches them.

Usage: check_layers.py [SRC_DIR]   (default: src next to this script)
"""
import os
import re
import sys

ALLOWED = {
    "base": {"base"},
    "ops": {"ops", "base"},
    "backends": {"backends", "ops", "base"},
    "harness": {"harness", "backends", "ops", "base"},
    "report": {"report", "base"},
    "cli": {"cli", "report", "harness", "backends", "ops", "base"},
}
GENERATED = {"tb_config.h", "tb_commit.h"}
CPU_DIR = os.path.join("backends", "cpu")
# The cpu backend's headers that code outside src/backends/cpu/ may
# include: the loops `tbench peak` times (harness/peak.c).
CPU_PUBLIC = {os.path.join(CPU_DIR, "peak_loops.h")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path, src):
    rel = os.path.relpath(path, src)
    top = rel.split(os.sep)[0]
    return top if top in ALLOWED else None


def cpu_private(rel_file, rel_target):
    """Is rel_target (relative to src/) a private header of the cpu
    backend that rel_file (outside its folder) may not include?"""
    inside = rel_file.startswith(CPU_DIR + os.sep)
    theirs = rel_target.startswith(CPU_DIR + os.sep)
    return theirs and not inside and rel_target not in CPU_PUBLIC


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                          else os.path.join(here, "..", "src"))
    bad = []
    private = []
    files = 0
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".c", ".h", ".inc", ".cu", ".cuh")):
                continue
            path = os.path.join(root, name)
            mine = layer_of(path, src)
            if mine is None:
                continue
            files += 1
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                if os.path.basename(inc) in GENERATED:
                    continue
                cands = [os.path.normpath(os.path.join(root, inc)),
                         os.path.normpath(os.path.join(src, inc))]
                target = next((c for c in cands if os.path.exists(c)), None)
                # a header generated in the build tree (cpu_config.h):
                # its layer is the folder the include names
                theirs = layer_of(target or cands[1], src)
                if theirs is None:
                    continue
                rel = os.path.relpath(path, src)
                if cpu_private(rel, os.path.relpath(target or cands[1],
                                                    src)):
                    line = text.count("\n", 0, m.start()) + 1
                    private.append(f"src/{rel}:{line}: includes the cpu "
                                   f'backend\'s private "{inc}": use '
                                   f"backend.h (the host slot) or a "
                                   f"public header ({', '.join(sorted(CPU_PUBLIC))})")
                if theirs not in ALLOWED[mine]:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"src/{os.path.relpath(path, src)}:{line}: "
                               f"{mine} includes {theirs} "
                               f'("{inc}"): layers point down only')
    print("1..2")
    if bad:
        print("not ok 1 - layers point down only")
        for b in bad:
            print(f"# {b}")
    else:
        print(f"ok 1 - layers point down only ({files} files)")
    if private:
        print("not ok 2 - no private cpu backend header outside "
              "src/backends/cpu")
        for b in private:
            print(f"# {b}")
    else:
        print("ok 2 - no private cpu backend header outside "
              "src/backends/cpu")
    return 1 if bad or private else 0


if __name__ == "__main__":
    sys.exit(main())
