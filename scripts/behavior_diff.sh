#!/bin/sh
# behavior_diff.sh: run one config with two tbench executables (e.g. main's
# build and a refactored one) and print every difference of their result
# files that is not a timing (scripts/same_results.py).  Prints nothing and
# exits 0 when the two behave the same; exits 1 with the differences
# otherwise, 2 on a usage or run error.
#
# Usage: scripts/behavior_diff.sh OLD_TBENCH NEW_TBENCH [CONFIG...]
#   CONFIG defaults to configs/quick.json (about a minute per build on 2
#   cores).  To build main's executable beside your work:
#     git worktree add /tmp/tb-main main && \
#       (cd /tmp/tb-main && meson setup build && ninja -C build)
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
old=$1 new=$2
shift 2
[ $# -gt 0 ] || set -- configs/quick.json
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$old" run "$@" -o "$dir/old" -q > "$dir/old.log" 2>&1 ||
    { echo "behavior_diff: $old failed (see below)" >&2;
      tail -n 5 "$dir/old.log" >&2; exit 2; }
"$new" run "$@" -o "$dir/new" -q > "$dir/new.log" 2>&1 ||
    { echo "behavior_diff: $new failed (see below)" >&2;
      tail -n 5 "$dir/new.log" >&2; exit 2; }
exec python3 "$(dirname "$0")/same_results.py" "$dir/old/results.json" \
    "$dir/new/results.json"
