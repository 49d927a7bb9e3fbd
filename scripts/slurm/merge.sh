#!/bin/sh
# The job that runs after every task of the array (afterany): checks each
# task's exit status, then `tbench merge`s the shards into OUT/results.json.
# A task that failed (exit status other than 0 or 1) or left no status
# (killed, timed out, never started) makes it refuse, naming the shard
# and its log; exit 1 of a task (a case failed its check, errored,
# crashed or timed out — recorded in its results) is merged and reported.
#
# usage (by sbatch): merge.sh TBENCH N OUT [tbench merge option...]
# exit: 0 merged; 1 merged, a shard had failed cases; 2 refused
set -u
tbench=$1 n=$2 out=$3
shift 3
bad=0 failed_cases=0
i=1
while [ "$i" -le "$n" ]; do
    f=$out/status/shard-$i.rc
    log=$out/logs/shard-$i.log
    if [ ! -f "$f" ]; then
        echo "merge: shard $i/$n: no exit status: the task did not run to its end (killed, out of time, or never started); log: $log" >&2
        bad=1
    else
        read -r rc host secs < "$f"
        case $rc in
        0) echo "merge: shard $i/$n: ok on $host in $secs s" ;;
        1) echo "merge: shard $i/$n: exit 1 on $host: some cases failed (recorded in its results); log: $log" >&2
           failed_cases=1 ;;
        *) echo "merge: shard $i/$n failed on $host: exit status $rc; log: $log" >&2
           bad=1 ;;
        esac
    fi
    i=$((i + 1))
done
if [ "$bad" -ne 0 ]; then
    echo "merge: refused: a shard failed (above); nothing merged" >&2
    exit 2
fi
set -- "$@" -o "$out/results.json"
i=1
while [ "$i" -le "$n" ]; do
    set -- "$@" "$out/shard-$i"
    i=$((i + 1))
done
"$tbench" merge "$@" || exit 2
[ "$failed_cases" -eq 0 ] || exit 1
exit 0
