#!/bin/sh
# Scale benchmark (issue "Scale: flat memory, linear time"): wall time and
# peak RSS of `run` and of every reader on result files of N tiny cases.
#
#   sh scripts/scale_bench.sh [options] [N...]      (default N: 1000 10000)
#     -t TBENCH     the binary (default build/tbench)
#     -o DIR        where the configs and results go (default: a new
#                   folder under /tmp; kept)
#     --big N:S     also N cases of S samples each (20000:460 makes a
#                   result file of about 200 MB) and the readers on it
#     --timeout S   stop any one command after S seconds (default 900);
#                   the table says "timeout"
#     --only run    measure `run` alone (no shards, no readers)
#     --split       make the 2 shards by splitting the run's file
#                   (scripts/split_shards.py) instead of running them
#                   (a large N: the shards would take as long as the
#                   run again)
#     --reuse       keep the run (and shards) already in -o DIR from an
#                   earlier call: only the readers are measured (before
#                   and after figures of two builds on the same files)
#
# Each N: configs of N `relu` cases (shapes 1..N elements, f32, cpu with
# isa=scalar and threads=1, one warm-up call, 3 samples of >= 1 us), then
#   run          tbench run CONFIG -q -o DIR/run          (measured)
#   run 2 shards tbench run CONFIG -q --shard I/2         (not measured;
#                or --split)
#   merge        tbench merge SHARD1 SHARD2 -o merged.json
#   report       tbench report run -o report.md --no-charts
#   compare      tbench compare run merged.json
#   history      tbench history run merged.json
#   show         tbench show 'relu/1/*' run
#   show-all     tbench show --json '*' run   (every record, to a file)
#   export       tbench export run/results.json --format gbench
# and prints one row per command: N, samples per case, the command, wall
# seconds, user CPU seconds, peak RSS in MB (GNU time's %M: the largest process of the
# command, the tbench parent for `run`), the result file's size and the
# 1-minute load average when the command started (2 other engineers'
# builds share the machine: state it with the figures).  The figures
# and what they show: docs/ARCHITECTURE.md, "Scale".
set -eu

TB=build/tbench
OUT=
BIG=
LIMIT=900
ONLY=
SPLIT=
REUSE=
NS=
while [ $# -gt 0 ]; do
    case $1 in
    -t) TB=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --big) BIG=$2; shift 2 ;;
    --timeout) LIMIT=$2; shift 2 ;;
    --only) [ "$2" = run ] || { echo "scale_bench.sh: --only takes" \
                                     "'run', got '$2'" >&2; exit 2; }
            ONLY=$2; shift 2 ;;
    --split) SPLIT=1; shift ;;
    --reuse) REUSE=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
               exit 0 ;;
    -*) echo "scale_bench.sh: unknown option '$1'" >&2; exit 2 ;;
    *) NS="$NS $1"; shift ;;
    esac
done
[ -n "$NS" ] || [ -n "$BIG" ] || NS="1000 10000"
[ -x "$TB" ] || { echo "scale_bench.sh: no binary $TB (-t)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scale_bench.sh: needs /usr/bin/time" \
                               "(package time)" >&2; exit 2; }
TB=$(cd "$(dirname "$TB")" && pwd)/$(basename "$TB")
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/scale_bench.XXXXXX)
mkdir -p "$OUT"
# per call (two builds may measure the same files at once with --reuse)
ROWS=$OUT/table.$$.txt
: >"$ROWS"

# config FIRST LAST S: relu cases of shapes FIRST..LAST elements, S
# samples each, on stdout (64 shapes an op entry: the config's limit)
config() {
    awk -v a="$1" -v z="$2" -v s="$3" 'BEGIN {
        printf "{\"name\": \"scale-%d\", \"seed\": 1,\n", a
        printf " \"warmup\": {\"min_time_ms\": 0, \"min_iters\": 1},\n"
        printf " \"measure\": {\"sample_time_ms\": 0.001, "
        printf "\"min_samples\": %d, \"max_samples\": %d, ", s, s
        printf "\"max_time_s\": 10},\n"
        printf " \"dtypes\": [\"f32\"],\n"
        printf " \"backends\": [{\"name\": \"cpu\", \"isa\": [\"scalar\"], "
        printf "\"threads\": [1]}],\n"
        printf " \"ops\": ["
        for (i = a; i <= z; i++)
            printf "%s%s[%d]%s", (i == a ? "" : (i - a) % 64 ? ", " : ",\n  "),
                   ((i - a) % 64 ? "" : "{\"op\": \"relu\", \"shapes\": ["), i,
                   ((i - a) % 64 == 63 || i == z ? "]}" : "")
        printf "]}\n"
    }'
}

# configs N S DIR: N cases in configs of at most 32768 (1024 op entries
# is the limit); prints their paths
configs() {
    i=1
    while [ "$i" -le "$1" ]; do
        z=$(( i + 32767 ))
        [ "$z" -le "$1" ] || z=$1
        config "$i" "$z" "$2" >"$3/config-$i.json"
        echo "$3/config-$i.json"
        i=$(( z + 1 ))
    done
}

# measure N S NAME FILE CMD...: one row of the table (FILE: whose size
# the row shows, or -)
measure() {
    n=$1 s=$2 name=$3 file=$4
    shift 4
    load=$(cut -d' ' -f1 /proc/loadavg)
    st=0
    /usr/bin/time -f '%e %U %M' -o "$OUT/time.$$.txt" \
        timeout "$LIMIT" "$@" >"$OUT/last.$$.out" 2>"$OUT/last.$$.err" ||
        st=$?
    set -- $(tail -n 1 "$OUT/time.$$.txt")
    wall=$1 user=$2 rss=$(( $3 / 1024 ))
    size=-
    [ "$file" = - ] || [ ! -f "$file" ] ||
        size=$(awk -v b="$(wc -c <"$file")" 'BEGIN { printf "%.1f", b / 1048576 }')
    case $st in
    0|1) res=ok ;;
    124) res=timeout ;;
    *) res="exit $st" ;;
    esac
    printf '%7s %5s  %-8s %9s %7s %8s %7s %6s  %s\n' "$n" "$s" "$name" \
        "$wall" "$user" "$rss" "$size" "$load" "$res" | tee -a "$ROWS"
}

one() {
    n=$1 s=$2 d=$OUT/n$1-s$2
    mkdir -p "$d"
    cf=$(configs "$n" "$s" "$d")
    if [ -z "$REUSE" ] || [ ! -f "$d/run/results.json" ]; then
        rm -rf "$d/run" "$d/s1" "$d/s2"
        # shellcheck disable=SC2086 # cf: paths without spaces (mktemp)
        measure "$n" "$s" run "$d/run/results.json" \
            "$TB" run $cf -q -o "$d/run"
    fi
    [ -z "$ONLY" ] || return 0
    if [ -n "$REUSE" ] && [ -f "$d/s2/results.json" ]; then
        :
    elif [ -n "$SPLIT" ]; then
        /usr/bin/python3 "$(dirname "$0")/split_shards.py" \
            "$d/run/results.json" 2 "$d"
    else
        "$TB" run $cf -q --shard 1/2 -o "$d/s1" >/dev/null
        "$TB" run $cf -q --shard 2/2 -o "$d/s2" >/dev/null
    fi
    measure "$n" "$s" merge "$d/merged.json" \
        "$TB" merge "$d/s1" "$d/s2" -o "$d/merged.json"
    measure "$n" "$s" report - \
        "$TB" report "$d/run" -o "$d/report.md" --no-charts
    measure "$n" "$s" compare - "$TB" compare "$d/run" "$d/merged.json"
    measure "$n" "$s" history - "$TB" history "$d/run" "$d/merged.json"
    measure "$n" "$s" show - "$TB" show 'relu/1/*' "$d/run"
    measure "$n" "$s" show-all - "$TB" show --json '*' "$d/run"
    measure "$n" "$s" export - \
        "$TB" export "$d/run/results.json" --format gbench -o "$d/g.json"
}

echo "tbench: $("$TB" --version 2>&1 | head -n 1)"
echo "machine: $(nproc) CPUs, $(uname -sr); results in $OUT"
printf '%7s %5s  %-8s %9s %7s %8s %7s %6s  %s\n' cases samp command wall_s \
    user_s rss_MB file_MB load1 result
for n in $NS; do
    one "$n" 3
done
if [ -n "$BIG" ]; then
    one "${BIG%%:*}" "${BIG#*:}"
fi
