#!/bin/sh
# Run a tbench config as a Slurm job array: one task per shard
# (`tbench run CONFIG --shard I/N`), then a job that depends on the whole
# array (afterany) and merges the shards (merge.sh).  docs/SCALE.md.
#
# usage: scripts/slurm/submit.sh [options] CONFIG N [-- SBATCH_OPTION...]
#   -o, --output DIR     where everything goes (default
#                        results/slurm-NAME-YYYYmmdd-HHMMSS): DIR/shard-I/
#                        (each shard's results), DIR/logs/shard-I.log and
#                        merge.log (Slurm's output of each task), DIR/status/
#                        (each task's exit status), DIR/results.json (merged)
#   -t, --tbench PATH    the tbench executable, on a file system every node
#                        sees (default: build/tbench next to this script)
#       --merge-opts S   sbatch options for the merge job only (split on
#                        white space), e.g. "--partition=short"
#       --allow-mixed-hosts  let the shards run on different nodes (passed
#                        to tbench merge); by default merge refuses them
#       --wait           return when the merge job has ended, with its
#                        exit status (sbatch --wait)
#   SBATCH_OPTION...     for the array tasks, e.g. --partition=gpu
#                        --time=01:00:00 --gres=gpu:1
# Prints the two job ids.  Exit status: sbatch's (with --wait: the merge
# job's: 0 merged, 1 merged but a case failed, 2 refused).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tbench=$here/../../build/tbench
out=""
merge_opts=""
merge_args=""
wait=""
while [ $# -gt 0 ]; do
    case $1 in
    -o|--output) out=$2; shift 2 ;;
    -t|--tbench) tbench=$2; shift 2 ;;
    --merge-opts) merge_opts=$2; shift 2 ;;
    --allow-mixed-hosts) merge_args=--allow-mixed-hosts; shift ;;
    --wait) wait=--wait; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) break ;;
    -*) echo "submit.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "submit.sh: usage: submit.sh [options] CONFIG N [-- SBATCH_OPTION...]" >&2
    exit 2
fi
config=$1 n=$2
shift 2
[ "${1:-}" = "--" ] && shift
case $n in
''|*[!0-9]*|0) echo "submit.sh: N must be a whole number >= 1, got '$n'" >&2
    exit 2 ;;
esac
[ -r "$config" ] || { echo "submit.sh: $config: cannot read" >&2; exit 2; }
[ -x "$tbench" ] || { echo "submit.sh: $tbench: no tbench executable (-t)" >&2
    exit 2; }
command -v sbatch >/dev/null || { echo "submit.sh: sbatch not found" >&2
    exit 2; }

abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
config=$(abs "$config")
tbench=$(abs "$tbench")
name=$(basename "$config" .json)
[ -n "$out" ] || out=results/slurm-$name-$(date +%Y%m%d-%H%M%S)
out=$(abs "$out")
mkdir -p "$out/logs" "$out/status"

array=$(sbatch --parsable --job-name="tbench-$name" --array="1-$n" \
    --output="$out/logs/shard-%a.log" "$@" \
    "$here/shard.sh" "$tbench" "$config" "$n" "$out")
array=${array%%;*}
echo "shards: job $array (array 1-$n), logs in $out/logs/"
set +e
# shellcheck disable=SC2086 # merge_opts is a list of options
sbatch --parsable --job-name="tbench-$name-merge" \
    --dependency="afterany:$array" --kill-on-invalid-dep=yes \
    --output="$out/logs/merge.log" $merge_opts $wait \
    "$here/merge.sh" "$tbench" "$n" "$out" $merge_args
rc=$?
set -e
echo "merge: after job $array; result: $out/results.json"
exit $rc
