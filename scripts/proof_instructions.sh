#!/bin/sh
# Proof for issue 13's instruction counts (docs/FORMAT.md, "Instruction
# counts"): on this machine, with whatever else is running,
#   1. the same cases counted N times (N runs of tbench) give one number
#      per case;
#   2. calib_work with 0.5% more work (TBENCH_CALIB_SCALE=1.005) is caught
#      by `tbench compare --fail-on counters` in every one of N trials,
#      and the unchanged build is never flagged (A/A, N trials).
# Usage: sh scripts/proof_instructions.sh [N] [SOURCE]
#   N       trials (default 10); SOURCE callgrind (default) or perf
#   TBENCH  the executable (default build/tbench)
# Needs valgrind for callgrind.  Prints the figures; exits 1 when a claim
# does not hold.
set -eu
N=${1:-10}
SOURCE=${2:-callgrind}
TBENCH=${TBENCH:-build/tbench}
PY=/usr/bin/python3
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tbench-proof-instr-XXXXXX")
trap 'rm -rf "$DIR"' EXIT

cat > "$DIR/cfg.json" <<JSON
{"name": "proof-instructions", "warmup": {"min_time_ms": 5},
 "measure": {"max_time_s": 0.05, "instructions": "$SOURCE",
             "instructions_iters": 10},
 "ops": [{"op": "calib_work", "shapes": [[100000]]},
         {"op": "add", "shapes": [[65536]]},
         {"op": "matmul", "shapes": [[64, 64]]}]}
JSON

counts() { # RESULTS -> "id count source isa" per case
    $PY - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    i = c["instructions"] or {}
    print(c["id"], i.get("per_iter"), i.get("source"), i.get("isa"),
          (i.get("reason") or "").replace(" ", "_")[:80])
PYEOF
}

echo "tbench: $($TBENCH --version)"
echo "source: $SOURCE; $N trials; calib_work [100000], add [65536], matmul 64x64"
for i in $(seq 1 "$N"); do
    env -u TBENCH_CALIB_SCALE "$TBENCH" run "$DIR/cfg.json" -q \
        -o "$DIR/base-$i" > /dev/null
    counts "$DIR/base-$i/results.json" > "$DIR/base-$i.txt"
    TBENCH_CALIB_SCALE=1.005 "$TBENCH" run "$DIR/cfg.json" -q \
        -f 'calib_work*' -o "$DIR/slow-$i" > /dev/null
done

echo
echo "1. the same cases counted $N times:"
fail=0
cat "$DIR"/base-*.txt | sort | uniq -c | while read -r n id v src isa why; do
    echo "   $id: $v instructions/iteration ($src, isa $isa) in $n of $N runs${why:+ ($why)}"
done
ncases=$(awk '{print $1}' "$DIR/base-1.txt" | sort -u | wc -l)
nlines=$(cat "$DIR"/base-*.txt | sort -u | wc -l)
if [ "$nlines" -eq "$ncases" ]; then
    echo "   -> one number per case"
else
    echo "   -> NOT one number per case ($nlines distinct lines for $ncases cases)"
    fail=1
fi

echo
echo "2. calib_work at 1.005x work vs the base run, compare --fail-on counters:"
caught=0; aa_alarm=0
for i in $(seq 1 "$N"); do
    j=$(( i % N + 1 ))   # another base run
    if "$TBENCH" compare "$DIR/base-$i" "$DIR/slow-$i" --fail-on counters \
        --format json -o "$DIR/cmp-$i.json" > /dev/null 2>&1; then
        :
    else
        rc=$?
        [ "$rc" -eq 1 ] && caught=$((caught + 1))
    fi
    if ! "$TBENCH" compare "$DIR/base-$i" "$DIR/base-$j" --fail-on counters \
        > /dev/null 2>&1; then
        aa_alarm=$((aa_alarm + 1))
    fi
done
$PY - "$DIR" "$N" <<'PYEOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
ch = []
for i in range(1, n + 1):
    c = json.load(open(f"{d}/cmp-{i}.json"))
    for k in c["cases"]:
        e = (k.get("counters") or {}).get("instructions")
        if e:
            ch.append((e["old"], e["new"], e["change"], e["verdict"]))
for old, new, change, verdict in sorted(set(ch)):
    print(f"   {old} -> {new} instructions/iteration: "
          f"{100 * change:+.4f}% ({verdict}), in {ch.count((old, new, change, verdict))} of {n} trials")
PYEOF
echo "   caught (exit 1) in $caught of $N trials; A/A false alarms (base vs another base run): $aa_alarm of $N"
[ "$caught" -eq "$N" ] || fail=1
[ "$aa_alarm" -eq 0 ] || fail=1
exit $fail
