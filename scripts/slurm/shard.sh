#!/bin/sh
# One task of the array that submit.sh submits: shard
# $SLURM_ARRAY_TASK_ID of N.  Its exit status goes to
# OUT/status/shard-I.rc ("STATUS HOST SECONDS", written atomically) for
# merge.sh; Slurm writes this task's output to OUT/logs/shard-I.log.
#
# usage (by sbatch): shard.sh TBENCH CONFIG N OUT
set -u
tbench=$1 config=$2 n=$3 out=$4
i=${SLURM_ARRAY_TASK_ID:?shard.sh: not a task of a Slurm job array}
host=$(hostname)
echo "tbench shard $i/$n: job ${SLURM_ARRAY_JOB_ID:-?}_$i on $host, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
start=$(date +%s)
"$tbench" run "$config" --shard "$i/$n" -q -o "$out/shard-$i"
rc=$?
end=$(date +%s)
echo "tbench shard $i/$n: exit $rc after $((end - start)) s"
mkdir -p "$out/status"
printf '%s %s %s\n' "$rc" "$host" "$((end - start))" \
    > "$out/status/.shard-$i.rc.$$" &&
    mv "$out/status/.shard-$i.rc.$$" "$out/status/shard-$i.rc"
exit $rc
