#!/bin/sh
# Proof of `tbench ab` on the machine at hand (issue 13): false alarms,
# minimum detectable effect and detection of injected slowdowns, next to
# the one-run `tbench compare` and Google Benchmark's compare.py U test on
# the same data.  A benchmark, not a test: run it by hand on your runner.
#
#   scripts/proof_ab.sh [BUILD/tbench] [OUTDIR]
#
# Environment (defaults in brackets):
#   AA=20       A/A comparisons of the build against itself on
#               configs/quick.json
#   TRIALS=10   trials per injected change
#   CHANGES="1.01 1.02 1.05"  TBENCH_CALIB_SCALE of the NEW side
#   BLOCKS=20   ab --blocks
#   SEED0=0     added to the trial number to make each ab's --seed (use
#               another value to add trials to an OUTDIR without repeats)
#
# A/A: the build is copied twice (old, new) and compared with
# `tbench ab old new configs/quick.json`: every regressed, improved or
# error verdict is a false alarm.  Injected: NEW is a wrapper that sets
# TBENCH_CALIB_SCALE (calib_work then does exactly that much more work:
# src/ops/calib.h) on a config of two calib_work cases; a `regressed`
# verdict is a detection.  The ab output folders keep each side's
# results.json of every block (old/block-NN, new/block-NN: one fresh worker
# process per block), and the same files go through `tbench compare`
# (block 1 vs block 1: one run per side; and all blocks, old/block-* --vs
# new/block-*) and, exported with `tbench export --format gbench` and
# merged (one repetition per block), through
# /usr/share/benchmark/compare.py (Debian libbenchmark-tools; its U test
# at its default alpha 0.05 per case; it needs SciPy: python3-scipy).
# Figures: OUTDIR/summary.txt.
set -eu

TB=$(readlink -f "${1:-build/tbench}")
OUT=${2:-proof-ab}
AA=${AA:-20}
TRIALS=${TRIALS:-10}
CHANGES=${CHANGES:-"1.01 1.02 1.05"}
BLOCKS=${BLOCKS:-20}
SEED0=${SEED0:-0}
GBCMP=/usr/share/benchmark/compare.py
PY=/usr/bin/python3

mkdir -p "$OUT/bin"
OUT=$(readlink -f "$OUT")
cp "$TB" "$OUT/bin/old"
cp "$TB" "$OUT/bin/new"
for s in $CHANGES; do
    printf '#!/bin/sh\nTBENCH_CALIB_SCALE=%s exec "%s" "$@"\n' \
        "$s" "$OUT/bin/new" > "$OUT/bin/new-$s"
    chmod +x "$OUT/bin/new-$s"
done
cat > "$OUT/calib.json" <<'EOF'
// calib_work at two sizes, with configs/quick.json's measure settings
{
  "name": "calib",
  "warmup": {"min_time_ms": 20, "min_iters": 2},
  "measure": {"sample_time_ms": 1, "min_samples": 10, "max_samples": 1000,
              "ci_target": 0.03, "max_time_s": 0.5},
  "backends": ["cpu"],
  "ops": [{"op": "calib_work", "shapes": [[100000], [20000]]}]
}
EOF

# One ab comparison into $OUT/$1, then the same data through compare and
# compare.py.  Exit statuses go to files; a failing verdict is data here.
one() {
    dir=$OUT/$1 new=$2 config=$3 seed=$4
    rm -rf "$dir"
    set +e
    "$OUT/bin/old" ab "$OUT/bin/old" "$new" "$config" -q --blocks "$BLOCKS" \
        --seed "$seed" -o "$dir" > "$OUT/$1.ab.txt" 2>&1
    echo $? > "$OUT/$1.ab.rc"
    # tbench compare, all blocks as runs (OLD... --vs NEW...), and one
    # run per side (block 1 vs block 1)
    "$TB" compare "$dir"/old/block-* --vs "$dir"/new/block-* --format json \
        -o "$dir/compare.json" > /dev/null 2>&1
    "$TB" compare "$dir/old/block-01" "$dir/new/block-01" --format json \
        -o "$dir/compare1.json" > /dev/null 2>&1
    # compare.py: every block one repetition of each case
    for side in old new; do
        for b in "$dir/$side"/block-*; do
            "$TB" export "$b/results.json" --format gbench -o "$b/gb.json"
        done
        "$PY" - "$dir/$side.gb.json" "$dir/$side"/block-*/gb.json <<'PYEOF'
import json, sys
docs = [json.load(open(p, encoding="utf-8")) for p in sys.argv[2:]]
out = docs[0]
out["benchmarks"] = [b for d in docs for b in d["benchmarks"]
                     if b.get("run_type") != "aggregate"]
json.dump(out, open(sys.argv[1], "w", encoding="utf-8"))
PYEOF
    done
    "$PY" "$GBCMP" --no-color -d "$dir/gbench.json" benchmarks \
        "$dir/old.gb.json" "$dir/new.gb.json" > "$dir/gbench.txt" 2>&1
    echo $? > "$OUT/$1.gbench.rc"
    set -e
    echo "$(date -u +%T) $1: $(tail -1 "$OUT/$1.ab.txt" | head -c 200)" >&2
}

i=1
while [ "$i" -le "$AA" ]; do
    one "aa-$((i + SEED0))" "$OUT/bin/new" configs/quick.json "$((i + SEED0))"
    i=$((i + 1))
done
for s in $CHANGES; do
    i=1
    while [ "$i" -le "$TRIALS" ]; do
        one "inj-$s-$((i + SEED0))" "$OUT/bin/new-$s" "$OUT/calib.json" \
            "$((i + SEED0))"
        i=$((i + 1))
    done
done

"$PY" - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, statistics, sys

out = sys.argv[1]


def load(p):
    try:
        return json.load(open(p, encoding="utf-8"))
    except (OSError, ValueError):
        return None


def gbench_calls(d):
    """{case: 'regressed'|'improved'|'same'} from compare.py's JSON dump:
    U test p < 0.05 (its default alpha) on the time, direction from the
    mean change of the repetitions."""
    calls = {}
    for b in load(os.path.join(d, "gbench.json")) or []:
        if b.get("run_type") == "aggregate":
            continue
        u = b.get("utest") or {}
        p = u.get("time_pvalue")
        ms = b.get("measurements") or [{}]
        t = statistics.mean(m.get("time", 0) for m in ms)
        if p is None:
            calls[b["name"]] = "n/a"
        elif p < 0.05:
            calls[b["name"]] = "regressed" if t > 0 else "improved"
        else:
            calls[b["name"]] = "same"
    return calls


def tally(prefix):
    rows = []
    for d in sorted(glob.glob(os.path.join(out, prefix + "-*"))):
        if not os.path.isdir(d):
            continue
        ab = load(os.path.join(d, "ab.json"))
        cmp = load(os.path.join(d, "compare.json"))
        cmp1 = load(os.path.join(d, "compare1.json"))
        if not ab:
            continue
        a = {c["id"]: c["verdict"] for c in ab["cases"]}
        c = {x["id"]: x["verdict"] for x in (cmp or {}).get("cases", [])}
        c1 = {x["id"]: x["verdict"] for x in (cmp1 or {}).get("cases", [])}
        g = gbench_calls(d)
        mde = [x["mde"] for x in ab["cases"] if x["mde"] is not None]
        rows.append((a, c, g, mde, c1))
    return rows


def count(rows, which, want):
    n = hit = runs_hit = 0
    for r in rows:
        any_hit = False
        for case, v in r[which].items():
            n += 1
            if v in want:
                hit += 1
                any_hit = True
        runs_hit += any_hit
    return n, hit, runs_hit


print("tbench ab proof (scripts/proof_ab.sh)")
aa = tally("aa")
if aa:
    mdes = [m for r in aa for m in r[3]]
    per_run = [statistics.median(r[3]) for r in aa if r[3]]
    print(f"A/A on configs/quick.json: {len(aa)} comparisons, "
          f"{len(aa[0][0])} cases each")
    for k, name, bad in ((0, "tbench ab", ("regressed", "improved", "error")),
                         (4, "tbench compare, 1 block vs 1",
                          ("regressed", "improved")),
                         (1, "tbench compare, blocks as runs",
                          ("regressed", "improved")),
                         (2, "compare.py U test (alpha 0.05)",
                          ("regressed", "improved"))):
        n, hit, runs = count(aa, k, bad)
        print(f"  {name:32s} false verdicts {hit}/{n} case-runs; "
              f"comparisons with any: {runs}/{len(aa)}")
    if mdes:
        print(f"  ab MDE: median over all cases {100 * statistics.median(mdes):.2f}%"
              f"; per comparison median {100 * min(per_run):.2f}%-"
              f"{100 * max(per_run):.2f}%; 90th pct "
              f"{100 * sorted(mdes)[int(0.9 * (len(mdes) - 1))]:.2f}%")
changes = sorted({os.path.basename(d).split("-")[1]
                  for d in glob.glob(os.path.join(out, "inj-*"))
                  if os.path.isdir(d)}, key=float)
for s in changes:
    rows = tally("inj-" + s)
    print(f"injected x{s} on calib_work (2 sizes), {len(rows)} trials:")
    for k, name in ((0, "tbench ab"), (4, "tbench compare, 1 block vs 1"),
                    (1, "tbench compare, blocks as runs"),
                    (2, "compare.py U test (alpha 0.05)")):
        n, hit, _ = count(rows, k, ("regressed",))
        print(f"  {name:32s} detected {hit}/{n} case-trials")
    mdes = [m for r in rows for m in r[3]]
    if mdes:
        print(f"  ab MDE median {100 * statistics.median(mdes):.2f}%")
EOF
