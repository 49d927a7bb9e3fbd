#!/usr/bin/env python3
"""scripts/check_layers.py catches what it is for: each rule is shown a
small src/ tree with one planted violation and must fail with a line
naming it, and the same tree without the violation must pass.

Usage: test_check_layers.py   (from the repository root; prints TAP)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "check_layers.py")

# A tree that obeys both rules: the cpu backend's public header used by
# the harness, its private one only inside its folder.
CLEAN = {
    "base/error.h": "",
    "ops/op.h": '#include "../base/error.h"\n',
    "backends/backend.h": '#include "../ops/op.h"\n',
    "backends/cpu/isa.h": "",
    "backends/cpu/peak_loops.h": "",
    "backends/cpu/cpu.c": '#include "isa.h"\n#include "../backend.h"\n',
    "backends/cpu/gemm/gemm.c": '#include "backends/cpu/isa.h"\n',
    "harness/peak.c": '#include "../backends/cpu/peak_loops.h"\n'
                      '#include "../backends/backend.h"\n',
    "harness/peak.h": "",
    "report/table.c": '#include "../base/error.h"\n',
    "cli/main.c": '#include "../harness/peak.h"\n',
}


def run(tree):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        for rel, text in tree.items():
            path = os.path.join(src, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, src],
                           capture_output=True, text=True)
        return p.returncode, p.stdout


CASES = [
    ("a clean tree passes", {}, 0, []),
    ("the harness including the cpu backend's isa.h fails rule 2",
     {"harness/env.c": '#include "../backends/cpu/isa.h"\n'}, 1,
     ["not ok 2", "src/harness/env.c:1: includes the cpu backend's "
                  'private "../backends/cpu/isa.h"']),
    ("the CLI including it through src/ fails rule 2",
     {"cli/main.c": '#include "backends/cpu/isa.h"\n'}, 1,
     ["not ok 2", "src/cli/main.c:1:"]),
    ("another backend including the generated cpu_config.h fails rule 2",
     {"backends/blas/blas.c": '#include "backends/cpu/cpu_config.h"\n'},
     1, ["not ok 2", "src/backends/blas/blas.c:1:"]),
    ("an upward include fails rule 1, not rule 2",
     {"ops/ref.c": '#include "../harness/peak.h"\n'}, 1,
     ["not ok 1", "ok 2", "src/ops/ref.c:1: ops includes harness"]),
]


def main():
    print(f"1..{len(CASES)}")
    failed = 0
    for i, (name, plant, want_rc, want_lines) in enumerate(CASES, 1):
        tree = dict(CLEAN)
        tree.update(plant)
        rc, out = run(tree)
        ok = rc == want_rc and all(w in out for w in want_lines)
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            print(f"# exit {rc} (want {want_rc}); output:")
            for ln in out.splitlines():
                print(f"#   {ln}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
