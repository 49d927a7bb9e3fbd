#!/bin/sh
# Soak test of `tbench run` (issue 15): runs of many tiny cases.
#
# usage: scripts/soak.sh [-n CASES] [-t TBENCH] [-o DIR] [-k KILLS]
#   -n CASES   cases of the largest run (default 20000): op neg on 1-D
#              shapes [1]..[CASES], 3 samples each, no warm-up time
#   -t TBENCH  the executable (default build/tbench)
#   -o DIR     where configs, results and logs go (default: a new folder
#              under /tmp)
#   -k KILLS   interrupted runs (default 8): the CASES run stopped at a
#              random moment of its length (measured in step 1) by SIGINT,
#              SIGTERM, SIGHUP and SIGKILL in turn
#
# 1. Runs CASES/4, CASES/2 and CASES cases and prints each run's wall
#    time and time per case (linear: the same per case at every size),
#    and, sampled every 0.5 s (printed every 5 s), the resident memory
#    (VmRSS) of the tbench process and of its worker (and the worker's
#    private part: it shares the plan with tbench), and each one's peak
#    (VmHWM).
# 2. Interrupts runs at random moments; after each, the result file must
#    load with `tbench export` (the one loader), match
#    docs/results.schema.json, and hold only cases that finished (status
#    ok, summary agreeing), all CASES of them when it says complete.
# Exit 0 when every run exited as expected and every file was valid.
# Not a CI test: about 2 minutes for the default 20000 cases on 2 CPUs.
set -eu

n=20000
tbench=build/tbench
out=""
kills=8
while getopts n:t:o:k: opt; do
    case $opt in
    n) n=$OPTARG ;;
    t) tbench=$OPTARG ;;
    o) out=$OPTARG ;;
    k) kills=$OPTARG ;;
    *) sed -n '2,25p' "$0"; exit 2 ;;
    esac
done
[ -x "$tbench" ] || { echo "soak: $tbench: not executable (-t)" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/tbench-soak-XXXXXX)
mkdir -p "$out"
py=/usr/bin/python3
# a copy: the checks must not see a schema edited while the soak runs
cp "$(cd "$(dirname "$0")/.." && pwd)/docs/results.schema.json" "$out/schema.json"
schema=$out/schema.json

config() { # CASES FILE
    $py - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
# entries of 64 shapes each (a config's limit per op)
ops = [{"op": "neg", "shapes": [[k] for k in range(s, min(s + 64, n + 1))]}
       for s in range(1, n + 1, 64)]
json.dump({"name": "soak",
           "warmup": {"min_time_ms": 0, "min_iters": 1},
           "measure": {"sample_time_ms": 0.001, "min_samples": 3,
                       "max_samples": 3, "ci_target": 0.5,
                       "max_time_s": 0.001},
           "dtypes": ["f32"], "backends": ["cpu"], "ops": ops},
          open(path, "w"), indent=0)
PY
}

priv() { # PID: private (not shared with tbench) memory of PID in kB
    awk '$1 ~ /^Private_(Clean|Dirty):$/ {s += $2} END {print s}' \
        "/proc/$1/smaps_rollup" 2>/dev/null || true
}

kb() { # PID FIELD: the /proc/PID/status field in kB, or -
    awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null ||
        true
}

echo "soak: $tbench, files in $out"
status=0
for m in $((n / 4)) $((n / 2)) "$n"; do
    config "$m" "$out/soak-$m.json"
    start=$(date +%s%N)
    "$tbench" run "$out/soak-$m.json" -q -o "$out/run-$m" \
        > "$out/run-$m.log" 2>&1 &
    pid=$!
    t=0 hwm=- whwm=- w=""
    while kill -0 $pid 2>/dev/null; do
        sleep 0.5
        t=$((t + 1))
        w=$(pgrep -P $pid | head -1 || true)
        h=$(kb $pid VmHWM)
        [ -n "$h" ] && hwm=$h
        if [ -n "$w" ]; then
            h=$(kb "$w" VmHWM)
            [ -n "$h" ] && whwm=$h
        fi
        if [ $((t % 10)) -eq 0 ] && [ "$m" -eq "$n" ]; then
            echo "  $((t / 2))s: $(grep -c '"id":' "$out/run-$m/results.json" 2>/dev/null) cases written;" \
                 "tbench VmRSS $(kb $pid VmRSS) kB; worker VmRSS" \
                 "$( [ -n "$w" ] && kb "$w" VmRSS) kB, of which private" \
                 "$( [ -n "$w" ] && priv "$w") kB (the rest: pages of the" \
                 "plan shared with tbench)"
        fi
    done
    set +e
    wait $pid
    rc=$?
    set -e
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    got=$($py -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['cases']), sum(c['status']=='ok' for c in d['cases']))" "$out/run-$m/results.json")
    echo "soak: $m cases: exit $rc, wall $ms ms, $((ms * 1000 / m)) us per" \
         "case, recorded/ok $got, peak VmHWM tbench $hwm kB worker" \
         "$whwm kB"
    [ "$rc" -eq 0 ] || status=1
done
wall=$(echo "$ms / 1000" | bc -l)

# A non-interactive shell starts background commands with SIGINT and
# SIGQUIT ignored, and tbench catches SIGINT only once its workers start:
# run it with the default action restored, as from a terminal.
dfl() {
    $py -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
k=1
for _ in $(seq 1 "$kills"); do
    sig=$(echo "INT TERM HUP KILL" | cut -d' ' -f$(( (k - 1) % 4 + 1 )))
    delay=$($py -c "import random, sys; print(round(random.uniform(0.2, float(sys.argv[1])), 2))" "$wall")
    rm -rf "$out/int-$k"
    dfl "$tbench" run "$out/soak-$n.json" -q -o "$out/int-$k" \
        > "$out/int-$k.log" 2>&1 &
    p=$!
    sleep "$delay"
    kill -s "$sig" $p 2>/dev/null || true
    set +e
    wait $p
    prc=$?
    set -e
    if [ ! -f "$out/int-$k/results.json" ]; then
        echo "soak: SIG$sig after $delay s (exit $prc): no result file yet"
    elif "$tbench" export "$out/int-$k" --format bmf > /dev/null \
            2> "$out/int-$k.err" &&
        kept=$($py - "$out/int-$k/results.json" "$schema" "$n" <<'PY'
import json, sys
import jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
assert doc["summary"]["cases"] == len(doc["cases"]), "summary"
assert all(c["status"] == "ok" for c in doc["cases"]), "a case not ok"
assert not doc["complete"] or len(doc["cases"]) == int(sys.argv[3]), \
    "complete but cases missing"
print(len(doc["cases"]), "complete" if doc["complete"] else "incomplete")
PY
        ); then
        echo "soak: SIG$sig after $delay s (exit $prc): valid file," \
             "$kept"
    else
        echo "soak: SIG$sig after $delay s (exit $prc): INVALID FILE:" \
             "$(cat "$out/int-$k.err")"
        status=1
    fi
    k=$((k + 1))
done
exit $status
