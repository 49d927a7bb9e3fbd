#!/bin/sh
# The Zen 4 figures of the session of 2026-11-28/29, one invocation on a
# quiet machine (sh docs/perf-data/zen4/run.sh from the repository root):
# peaks, the GEMM family (tbench and PyTorch alternated, two pairs), the
# 16-bit element-wise table.  Debian's PyTorch 1.13 (oneDNN
# avx512_core_bf16) and, when .peers exists (scripts/peers.sh), PyPI's.
set -e
B=build/tbench
D=docs/perf-data/zen4
uptime > $D/log.txt
$B peak -o $D/peaks.json > $D/peaks.txt
for i in 1 2; do
    $B run $D/gemm-lowp.json -o $D/gemm-lowp-$i -q
    OMP_NUM_THREADS=1 /usr/bin/python3 scripts/compare_numpy.py \
        $D/gemm-lowp.json --threads 1 --backends torch --forms alloc \
        -f 'matmul/*' -o $D/gemm-lowp-torch-$i.json
    if [ -x .peers/bin/python ]; then
        OMP_NUM_THREADS=1 .peers/bin/python scripts/compare_numpy.py \
            $D/gemm-lowp.json --threads 1 --backends torch --forms alloc \
            -f 'matmul/*' --label pypi -o $D/gemm-lowp-pypi-$i.json
    fi
    uptime >> $D/log.txt
done
$B run $D/gemm-f32.json -o $D/gemm-f32 -q
$B run $D/ew16.json -o $D/ew16 -q
uptime >> $D/log.txt
