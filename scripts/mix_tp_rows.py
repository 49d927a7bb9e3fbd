#!/usr/bin/env python3
"""Build and run scripts/mix_tp.c with the kernel rows' own loops.

Usage:
    scripts/mix_tp_rows.py [--build DIR] [--rounds N] [--filter S]

Compiles the kb_ROW loops of scripts/kernel_bounds.c (vmath_avx512.c's
flags: f32; only kb_exp is timed), kernel_bounds_rand.c (rand_avx512.c's
flags), kernel_bounds_half.c (half_avx512bf16.c's: bf16; half_avx512.c's:
f16) and kernel_bounds_f64.c (f64_avx512.c's) with the release flags DIR's
build gives those sources (DIR/compile_commands.json, as
scripts/kernel_bounds.py does), links them with mix_tp.c built with
-DMIX_TP_ROWS, and runs it: each row's loop on L1-resident buffers,
cycles per element at the measured core clock (the smallest time of N
rounds, default 41).  The figures the hand-stated znver4 entries of
docs/perf-data/compute-bounds.json cite (kernel_bounds.py's HAND_STATED).
Needs an AVX-512 (with AVX512_BF16) machine to run.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_bounds as kb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OBJS = [  # (loop file, the source whose flags it takes, object name)
    ("kernel_bounds.c", "vmath_avx512.c", "f32"),
    ("kernel_bounds_rand.c", "rand_avx512.c", "rand"),
    ("kernel_bounds_half.c", "half_avx512bf16.c", "half_bf16"),
    ("kernel_bounds_half.c", "half_avx512.c", "half_f16"),
    ("kernel_bounds_f64.c", "f64_avx512.c", "f64"),
    # the optimizers' 16-bit rows: their own files
    ("../src/backends/cpu/optim_avx512bf16.c", "optim_avx512bf16.c",
     "optim_bf16"),
    ("../src/backends/cpu/optim_avx512.c", "optim_avx512.c", "optim"),
    ("../src/backends/cpu/optim_red_avx512.c", "optim_red_avx512.c",
     "optim_red"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(kb.ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        objs = []
        for src, flags_of, name in OBJS:
            cc, flags = kb.level_flags(a.build, flags_of)
            o = os.path.join(tmp, name + ".o")
            subprocess.run([cc, *flags, "-c", os.path.join(HERE, src),
                            "-o", o], check=True)
            objs.append(o)
        exe = os.path.join(tmp, "mix_tp_rows")
        inc = [f for f in kb.level_flags(a.build, "optim_avx512.c")[1]
               if f.startswith("-I")]
        subprocess.run([cc, "-O2", "-DMIX_TP_ROWS", *inc, "-mavx512f",
                        "-mavx512dq", "-mavx512bw", "-mavx512vl",
                        os.path.join(HERE, "mix_tp.c"), *objs, "-lm",
                        "-o", exe], check=True)
        args = [exe, str(a.rounds)] + ([a.filter] if a.filter else [])
        return subprocess.run(args).returncode


if __name__ == "__main__":
    sys.exit(main())
