#!/bin/sh
# ab_proof.sh: the measurements behind issue 27's item 3 (adaptive A/B),
# on this machine, now.  Writes OUT/summary.md (and every ab.json).
#
# Usage: scripts/ab_proof.sh TBENCH OUT [AA_RUNS] [INJ_RUNS] [BUDGET]
#   TBENCH    the tbench executable (e.g. build/tbench)
#   AA_RUNS   A/A runs (default 20): the same build on both sides
#   INJ_RUNS  runs per injected slowdown, +1%, +2% and +5% (default 10):
#             NEW is the same binary with TBENCH_CALIB_SCALE set, so
#             calib_work does exactly that much more work (docs/CONFIG.md)
#   BUDGET    --budget of each sequential run (default 30s)
# Every run: tbench ab OLD NEW CONFIG --target-mde 1 --budget BUDGET on
# calib_work [300000] (about 0.6 ms a call), the blocks' default size.
# Then the instruction-count gate: 20 pairs of runs counting calib_work's
# instructions (measure.instructions = callgrind), the second of each
# pair with TBENCH_CALIB_SCALE=1.005, compared by 'tbench compare'.
# The load average and each run's own noise line are recorded.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
tb=$(realpath "$1") out=$2
aa=${3:-20} inj=${4:-10} budget=${5:-30s}
mkdir -p "$out"
out=$(realpath "$out")
cat > "$out/calib.json" <<'JSON'
{
  "name": "calib",
  "seed": 7,
  "warmup": {"min_time_ms": 5, "min_iters": 2},
  "measure": {"sample_time_ms": 1, "min_samples": 10, "max_samples": 400,
              "ci_target": 0.005, "max_time_s": 2.0, "timeout_s": 60},
  "ops": [{"op": "calib_work", "shapes": [[300000]]}]
}
JSON
cat > "$out/instr.json" <<'JSON'
{
  "name": "instr",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 1, "min_samples": 5, "max_samples": 20,
              "max_time_s": 0.05, "instructions": "callgrind",
              "instructions_iters": 5},
  "ops": [{"op": "calib_work", "shapes": [[300000]]}]
}
JSON
for s in 1.01 1.02 1.05 1.005; do
    printf '#!/bin/sh\nTBENCH_CALIB_SCALE=%s exec %s "$@"\n' "$s" "$tb" \
        > "$out/scaled-$s"
    chmod +x "$out/scaled-$s"
done
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" \
    > "$out/log.txt"
one() { # NAME NEW
    "$tb" ab "$tb" "$2" "$out/calib.json" --target-mde 1 --budget "$budget" \
        -q -o "$out/$1" > "$out/$1.txt" 2>&1 || true
    echo "$1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" \
        >> "$out/log.txt"
}
i=1
while [ "$i" -le "$aa" ]; do one "aa-$i" "$tb"; i=$((i + 1)); done
for s in 1.01 1.02 1.05; do
    i=1
    while [ "$i" -le "$inj" ]; do
        one "inj-$s-$i" "$out/scaled-$s"; i=$((i + 1))
    done
done
i=1
while [ "$i" -le 20 ]; do
    d="$out/instr-$i"
    "$tb" run "$out/instr.json" -q -o "$d/base" > /dev/null 2>&1
    "$out/scaled-1.005" run "$out/instr.json" -q -o "$d/new" \
        > /dev/null 2>&1
    "$tb" compare "$d/base/results.json" "$d/new/results.json" \
        > "$d/compare.txt" 2>&1 && echo 0 > "$d/rc" || echo $? > "$d/rc"
    i=$((i + 1))
done
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" \
    >> "$out/log.txt"
exec /usr/bin/python3 "$(dirname "$0")/ab_proof_summary.py" "$out"
