#!/bin/sh
# Regenerate docs/PERFORMANCE.md and its charts (docs/perf/) from a real
# run on this machine: the machine peaks (tbench peak, cached), one
# tbench run of configs/report.json, configs/training.json (the
# training workloads on cpu and blas: hooks, API layers, MLP/CNN steps by
# batch, pool) and configs/cache.json (cache misses per call, simulated
# by valgrind where the kernel refuses hardware counters), the ops of
# report.json with NumPy and PyTorch (scripts/compare_numpy.py), the
# training workloads with PyTorch (scripts/compare_torch_training.py),
# then tbench report.  About 6-8 minutes on 2 cores (200 s on a loaded
# 2-CPU VM without cache.json, of which the training part ~85 s: tbench
# 63 s, PyTorch 22 s; cache.json 2-6 minutes, most of it valgrind); run
# it on a quiet machine.
#
#   TBENCH    the tbench executable (default build/tbench)
#   CONFIG    the matrix (default configs/report.json)
#   TRAINING  the training matrix (default configs/training.json; empty:
#             none)
#   CACHE     the cache matrix (default configs/cache.json; empty: none)
#   OUT       where the result files go (default docs/perf-data, committed
#             next to docs/PERFORMANCE.md so its figures can be traced):
#             results.json (all three configs), numpy.json,
#             torch-training.json
#   GPU       the GPU results (default docs/perf-data/gpu): one folder per
#             device, from scripts/gpu_check.sh on a real GPU, committed
#             (docs/perf-data/gpu/NVIDIA-H200/README.md); their section,
#             written by scripts/gpu_report.py, ends the report ("No GPU
#             results yet" without one)
#   RENDER_ONLY=1  measure nothing: write docs/PERFORMANCE.md and its
#             charts, docs/PERFORMANCE.html and docs/perf/report-html.png
#             again from the result files already in OUT and GPU (after
#             a change to the report, or new GPU results)
#
# Besides the Markdown it writes docs/PERFORMANCE.html (tbench report
# --html: the same report as one web page) and, when chromium is
# installed, docs/perf/report-html.png, that page's first screen.
#
# Needs `sh scripts/setup.sh --tests` (NumPy, and PyTorch: python3-torch;
# without PyTorch its cases are reported as unavailable, with the reason).
set -eu
cd "$(dirname "$0")/.."
TBENCH=${TBENCH:-build/tbench}
CONFIG=${CONFIG:-configs/report.json}
TRAINING=${TRAINING-configs/training.json}
CACHE=${CACHE-configs/cache.json}
OUT=${OUT:-docs/perf-data}

if [ ! -x "$TBENCH" ]; then
    echo "make_report.sh: $TBENCH not found; build it first:" \
        "meson setup build && ninja -C build" >&2
    exit 2
fi

# Exit 1 from run or compare_numpy.py means a case failed its check: the
# report shows it, so go on; anything else stops here.
ok_or_failed_case() {
    rc=0
    "$@" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "make_report.sh: '$*' failed (exit $rc)" >&2
        exit "$rc"
    fi
}

GPU=${GPU:-docs/perf-data/gpu}
if [ "${RENDER_ONLY:-0}" != 1 ]; then
    "$TBENCH" peak >/dev/null
    # Only the files this script writes: $OUT also keeps other
    # measurements that the docs cite (op-limits/ from
    # scripts/op_limits.py, bwd/, gpu/).
    mkdir -p "$OUT"
    rm -f "$OUT/results.json" "$OUT/results.csv" "$OUT/numpy.json" \
        "$OUT/torch-training.json"
    # one run of every config: the report reads one result file
    ok_or_failed_case "$TBENCH" run "$CONFIG" $TRAINING $CACHE -o "$OUT" -q
    ok_or_failed_case /usr/bin/python3 scripts/compare_numpy.py "$CONFIG" \
        -o "$OUT/numpy.json" --tbench "$TBENCH"
    if [ -n "$TRAINING" ]; then
        ok_or_failed_case /usr/bin/python3 \
            scripts/compare_torch_training.py "$TRAINING" \
            -o "$OUT/torch-training.json" --tbench "$TBENCH"
    fi
fi
set --
for f in "$OUT/numpy.json" "$OUT/torch-training.json"; do
    [ -f "$f" ] && set -- "$@" --with "$f"
done
gpu_md=$(mktemp)
trap 'rm -f "$gpu_md"' EXIT
/usr/bin/python3 scripts/gpu_report.py "$GPU" --cpu "$OUT/results.json" \
    > "$gpu_md"
rm -rf docs/perf
"$TBENCH" report "$OUT/results.json" "$@" \
    -o docs/PERFORMANCE.md --generated-by "sh scripts/make_report.sh"
cat "$gpu_md" >> docs/PERFORMANCE.md
rm -f docs/perf/gnuplot.log   # gnuplot's warnings; not part of the docs
# The same report as one web page (charts inline), the GPU section too;
# /dev/stdin keeps the command line it records the same on every run.
"$TBENCH" report "$OUT/results.json" "$@" --html --append-md /dev/stdin \
    -o docs/PERFORMANCE.html --generated-by "sh scripts/make_report.sh" \
    < "$gpu_md"
# and its first screen as headless Chromium shows it, for README
if command -v chromium >/dev/null; then
    profile=$(mktemp -d)
    trap 'rm -f "$gpu_md"; rm -rf "$profile"' EXIT
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$profile" --window-size=1280,2000 \
        --screenshot=docs/perf/report-html.png \
        "file://$(pwd)/docs/PERFORMANCE.html" >/dev/null 2>&1 || {
        echo "make_report.sh: chromium could not take the screenshot" >&2
        exit 1
    }
else
    echo "make_report.sh: note: chromium not installed (sh" \
        "scripts/setup.sh --tests): docs/perf/report-html.png not made" >&2
fi
