#!/bin/sh
# gpu_check.sh: build tbench with the CUDA module on a machine with an
# NVIDIA GPU, check every CUDA kernel, and say in one file what passed.
#
# Usage (from the repository root):
#   scripts/gpu_check.sh --first [OUTDIR]   first contact, about 4.5 min
#   scripts/gpu_check.sh --full [OUTDIR]    the rest, about 3.5 min
#   scripts/gpu_check.sh [OUTDIR]           both, one after the other
# OUTDIR defaults to results/gpu-MODE-HOST-YYYYmmdd-HHMMSS.  Its
# summary.txt has one line per assertion, PASS, FAIL, SKIP or INFO, the
# check and its figure, and a TIME line per step; the folders beside it
# hold every log and result file.  With GPU_CHECK_PACK=DIR the folder is
# also packed as DIR/MODE.tgz (the .npy files left out) with
# DIR/MODE-summary.txt beside it: two files, under the device tool's
# limits on what comes back.
#
# --first (seconds measured on a 16-core H200 machine, 2026-11-29)
#   preflight    9 s   tools and versions, the offline bundle when the
#                      system lacks meson, ninja, cJSON or libcsv
#   build       39 s   release, -Dgpu_archs = this GPU's only, -j cores
#   probe        1 s   `tbench list`: cuda available?  If not, every GPU
#                      step below is SKIP and the exit status is 3
#   check       87 s   configs/gpu-check.json on cuda (pool=false, 2580
#                      cases): every kernel against the double reference;
#                      then from its results: every case ok (`unsupported`
#                      fails too), CUPTI's kernel launches = the module's
#                      counter for every case that calls no library,
#                      CUPTI = module device allocations, the copy/
#                      transfer/alloc forms' exact counts, the kernel
#                      names of 14 dispatch paths, event time vs host time
#                      vs CUPTI kernel time, an NVML clock record per case,
#                      env.gpu (NVML) against nvidia-smi -q
#   then, at once (the slowest of the three):
#     torch    124 s  every ok case again through `tbench exec` (.npy)
#     (464 cases of   and its output compared with PyTorch's on the GPU
#      2580 with      in float64 (16-bit cases too: their inputs are
#      PER_OP=2)      exact in it), within the case's tolerance
#     sanitizer  8 s  configs/gpu-sanitize.json under compute-sanitizer
#                     --tool memcheck (SKIP when it is not installed)
#     big       50 s  add of 2^31 + 7 f32 elements (26 GB on the GPU):
#                     64-bit indexing, checked against the reference
#   total      260 s  (with GPU_TORCH_PER_OP=2)
# --full (builds again, a no-op after --first; 203 s)
#   peaks       19 s   `tbench peak --quick`: bandwidth and FMA between
#                      50% and 115% of the vendor figures
#   gpu         56 s   configs/gpu.json on cuda: cases, counts, times,
#                      rooflines (<= 1.05 above 256 MiB), transfers
#                      (pinned vs pageable vs the PCIe link), clocks
#   torch-time  14 s   the same cases timed through PyTorch CUDA
#   detach       7 s   tests/gpu/cupti_overhead.cu: launches after
#                      cuptiFinalize within 3% of launches before CUPTI
#                      was loaded (the fastest of as many blocks each;
#                      attached and detached alternated in one process),
#                      and what an attached CUPTI costs; the rounds of
#                      configs/gpu-detach.json before and after the
#                      counting pass, detached and attached, shown
#   pool        38 s   gpu-check.json with pool=true: cases and counts
#   alloc       12 s   configs/gpu-alloc.json on cuda
#   l2           3 s   configs/gpu-l2.json, and its warm cases again with
#                      one call per sample: add 1M cold >= 1.1 x warm
#   ptx         16 s   CUDA_FORCE_PTX_JIT=1 on add, sum, softmax: the
#                      compute_XX PTX that newer GPUs JIT-compile
#   determinism  6 s   sum, max, argmax, var twice: bitwise equal
#   nsys               NVTX ranges and kernels under Nsight Systems when
#                      nsys is on PATH, else SKIP
#
# Exit status: 0 every assertion passed; 1 some FAIL (see summary.txt);
# 2 the preflight or the build failed; 3 no GPU: nothing was checked on
# a GPU (the build and the probe ran).
#
# Needs: sh, python3 (standard library; PyTorch with CUDA for the torch
# steps), gcc and g++, nvcc of CUDA 13.0 Update 1 or newer 13.0 (CUPTI
# record layouts, cupti_tally.c) with cuBLAS, cuSOLVER and CUPTI, the
# NVIDIA driver, meson >= 0.63, ninja, cJSON and libcsv.  A machine that
# reaches no package registry gets meson, ninja, cJSON and libcsv from
# the offline bundle that scripts/gpu_bundle.sh fetches on a Debian 12
# machine into .gpu-bundle/ (GPU_BUNDLE=DIR elsewhere): wheels installed
# with pip --no-index into a private folder, .deb files unpacked without
# dpkg (scripts/gpu_check.py extract-debs).  Nothing is installed on the
# system.
#
# Environment: CUDA_HOME (toolkit root, default /usr/local/cuda),
# GPU_ARCHS (e.g. "90"; default: the GPU's compute capability from
# nvidia-smi, else 90), BUILD (build folder, default build-gpu),
# GPU_TORCH_PER_OP=N (the torch step on the first N cases of each op and
# dtype only: 758 `tbench exec` processes took 165 s on an H200 on 2026-11-27, 464 took 124 s with the
# sanitizer and the big case beside them on 2026-11-29; 0, the
# default, all), GPU_BUNDLE, GPU_BUNDLE_FORCE=1 (use the bundle even where the system
# has what it holds: to test it), PYTHON (default python3),
# GPU_CHECK_PACK.
set -u

mode=all
case "${1:-}" in
--first) mode=first; shift ;;
--full) mode=full; shift ;;
-h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;/^set -u/d'
           exit 0 ;;
-*) echo "gpu_check: unknown option '$1' (--first, --full)" >&2; exit 2 ;;
esac
if [ "$mode" = all ]; then
    "$0" --first ${1:+"$1-first"}; a=$?
    "$0" --full ${1:+"$1-full"}; b=$?
    [ "$a" -eq 3 ] && exit 3
    [ "$a" -ge "$b" ] && exit "$a"
    exit "$b"
fi

host=$(hostname 2>/dev/null || echo host)
out=${1:-results/gpu-$mode-$host-$(date +%Y%m%d-%H%M%S)}
build=${BUILD:-build-gpu}
cuda=${CUDA_HOME:-/usr/local/cuda}
bundle=${GPU_BUNDLE:-.gpu-bundle}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: > "$summary"
t0=$(date +%s)
step_t=$t0
step_name=

say() { echo "$*" | tee -a "$summary"; }
step() {
    now=$(date +%s)
    [ -n "$step_name" ] && say "TIME $step_name $((now - step_t)) s"
    step_name=$1
    step_t=$now
    echo "gpu_check: $1" >&2
}
# checks: gpu_check.py CHECK ARGS, its lines into the summary
checks() { "$py" "$here/gpu_check.py" "$@" | tee -a "$summary"; }
pack() {
    [ -n "$step_name" ] && step end
    nf=$(grep -c '^FAIL' "$summary")
    np=$(grep -c '^PASS' "$summary")
    say "TOTAL $mode: $np passed, $nf failed, $(($(date +%s) - t0)) s"
    if [ -n "${GPU_CHECK_PACK:-}" ]; then
        mkdir -p "$GPU_CHECK_PACK"
        cp "$summary" "$GPU_CHECK_PACK/$mode-summary.txt"
        tar czf "$GPU_CHECK_PACK/$mode.tgz" --exclude='*.npy' --exclude=tools \
            -C "$(dirname "$out")" "$(basename "$out")"
    fi
}
finish() { # $1: exit status when nothing failed
    pack
    if grep -q '^FAIL' "$summary"; then exit 1; fi
    exit "$1"
}

# ---- preflight ---------------------------------------------------------
step preflight
tools=$out/tools
missing=
for t in gcc g++ "$py" tar timeout; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -x "$cuda/bin/nvcc" ] || missing="$missing $cuda/bin/nvcc"
if [ -n "$missing" ]; then
    say "FAIL preflight: missing:$missing"
    finish 2
fi
# meson and ninja: the system's, else the bundle's wheels
meson_ok() {
    v=$(meson --version 2>/dev/null) || return 1
    "$py" -c "import sys; v=tuple(int(x) for x in '$v'.split('.')[:2]); \
sys.exit(0 if v >= (0, 63) else 1)"
}
force=${GPU_BUNDLE_FORCE:-0}
if [ "$force" = 1 ] || ! meson_ok || ! command -v ninja >/dev/null 2>&1
then
    if ls "$bundle"/wheels/*.whl >/dev/null 2>&1; then
        "$py" -m pip install -q --no-index --no-deps --no-compile \
            --target "$tools/site" "$bundle"/wheels/*.whl \
            > "$out/pip.log" 2>&1
        PATH=$tools/site/bin:$PATH
        PYTHONPATH=$tools/site${PYTHONPATH:+:$PYTHONPATH}
        export PATH PYTHONPATH
    fi
fi
if ! meson_ok || ! command -v ninja >/dev/null 2>&1; then
    say "FAIL preflight: meson >= 0.63 and ninja are needed (have:" \
        "meson $(meson --version 2>/dev/null || echo none), ninja" \
        "$(ninja --version 2>/dev/null || echo none)); carry" \
        "scripts/gpu_bundle.sh's $bundle"
    finish 2
fi
# cJSON and libcsv: the system's, else the bundle's .deb files
extra=
if [ "$force" = 1 ] ||
   ! { [ -f /usr/include/cjson/cJSON.h ] && [ -f /usr/include/csv.h ]; }; then
    if ls "$bundle"/debs/*.deb >/dev/null 2>&1; then
        root=$tools/sysroot
        "$py" "$here/gpu_check.py" extract-debs "$bundle/debs" "$root" \
            > "$out/debs.log" 2>&1 || { say "FAIL preflight: unpacking" \
            "$bundle/debs (see debs.log)"; finish 2; }
        libdir=$root/usr/lib
        for d in "$root"/usr/lib/*-linux-gnu; do
            [ -d "$d" ] && libdir=$d && break
        done
        PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
        LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export PKG_CONFIG_PATH LD_LIBRARY_PATH
        extra="-Dc_args=-I$root/usr/include -Dc_link_args=-L$libdir"
        say "INFO preflight: cJSON and libcsv from $bundle/debs"
    else
        say "FAIL preflight: cJSON and libcsv headers are missing" \
            "(/usr/include/cjson/cJSON.h, /usr/include/csv.h); carry" \
            "scripts/gpu_bundle.sh's $bundle"
        finish 2
    fi
fi
# CUDA 13.0 Update 1+: CUPTI's record layouts (cupti_tally.c) and the
# cuptiActivityDisable deadlock of 13.0 GA (review WF4, WF5)
cupti_v=$(sed -n 's/^#define CUPTI_API_VERSION \([0-9]*\).*/\1/p' \
    "$cuda/include/cupti_version.h" 2>/dev/null)
nvcc_v=$("$cuda/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
say "INFO preflight: nvcc $nvcc_v, CUPTI API ${cupti_v:-none}," \
    "libcupti: $(cd "$cuda/lib64" 2>/dev/null && ls libcupti.so* 2>/dev/null |
    tr '\n' ' ')"
case "$cupti_v" in
1300[0-9][0-9])
    if [ "$cupti_v" -lt 130001 ]; then
        say "FAIL preflight: CUPTI $cupti_v is 13.0 GA, whose" \
            "cuptiActivityDisable may deadlock: use 13.0 Update 1"
        finish 2
    fi ;;
*)  say "FAIL preflight: this tbench reads CUPTI 13.0's record layouts;" \
        "the toolkit has CUPTI API '${cupti_v:-none}'"
    finish 2 ;;
esac
gpu=
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1
    gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max \
        --format=csv,noheader 2>/dev/null | head -n 1)
fi
say "INFO preflight: GPU: ${gpu:-none (no nvidia-smi or no device)}"
tv=$("$py" -c 'import torch; print(torch.__version__,
"with CUDA" if torch.cuda.is_available() else "without CUDA")' 2>/dev/null)
say "INFO preflight: PyTorch ${tv:-none}"
sanitizer=$(command -v compute-sanitizer 2>/dev/null ||
    ls "$cuda/bin/compute-sanitizer" 2>/dev/null)
say "INFO preflight: compute-sanitizer ${sanitizer:-none}," \
    "nsys $(command -v nsys 2>/dev/null || echo none)," \
    "meson $(meson --version), ninja $(ninja --version), gcc" \
    "$(gcc -dumpfullversion), $jobs cores"

# ---- build -------------------------------------------------------------
step build
archs=${GPU_ARCHS:-}
if [ -z "$archs" ] && [ -n "$gpu" ]; then
    archs=$(echo "$gpu" | cut -d, -f2 | tr -d ' .')
fi
archs=${archs:-90}
setup=setup
[ -d "$build" ] && setup="setup --reconfigure"
# shellcheck disable=SC2086  # $setup and $extra are word lists
if ! { meson $setup "$build" -Dbuildtype=release -Dcuda=enabled \
           -Dcudatoolkit="$cuda" -Dtests=disabled -Dgpu_archs="$archs" \
           $extra && ninja -C "$build" -j "$jobs"; } > "$out/build.log" 2>&1
then
    tail -n 30 "$out/build.log"
    say "FAIL build: see build.log"
    finish 2
fi
if ! grep -Eq 'CUPTI *: *(YES|True|true)' "$out/build.log"; then
    say "FAIL build: CUPTI not found: the counting pass would be missing"
    finish 2
fi
say "PASS build: sm_$archs, $(grep -E 'cuda module *:' "$out/build.log" |
    sed 's/^ *//')"
tb=$build/tbench
TBENCH_PEAK_CACHE=$build/peak-cache.json
export TBENCH_PEAK_CACHE

# ---- probe -------------------------------------------------------------
step probe
"$tb" list > "$out/list.txt" 2>&1
cu=$(grep -A1 '^  cuda ' "$out/list.txt" | head -n 2 | tr -s ' ' | tr '\n' ' ')
if ! grep -q '^  cuda *available' "$out/list.txt"; then
    say "INFO probe: $cu"
    say "SKIP every GPU check: NO GPU here: nothing was checked on a GPU"
    pack
    echo "gpu_check: NO GPU: the build and the probe ran; nothing was" \
        "checked on a GPU" >&2
    exit 3
fi
say "PASS probe: $cu"

if [ "$mode" = first ]; then
    # ---- check: every kernel of gpu-check.json -----------------------------
    step check
    timeout 300 "$tb" run configs/gpu-check.json -b cuda \
        --exclude '*pool=true*' -o "$out/check" -q > "$out/check.log" 2>&1
    say "INFO check: tbench run exit $?"
    checks cases "$out/check/results.json" check
    checks counts "$out/check/results.json" check --require-all
    checks dispatch "$out/check/results.json" check
    checks timing "$out/check/results.json" check
    checks clocks "$out/check/results.json" check
    checks env "$out/check/results.json" "$out/nvidia-smi.txt"

    # ---- torch, sanitizer and the big case at once ----------------------
    step torch+sanitizer+big
    timeout 200 "$tb" run --op add --shape 2147483655 -d f32 -b cuda \
        --min-samples 3 --max-time 0.5 --timeout 180 -o "$out/big" -q \
        > "$out/big.log" 2>&1 &
    big_pid=$!
    if [ -n "$sanitizer" ]; then
        (
            timeout 200 "$sanitizer" --tool memcheck --error-exitcode 9 \
                --print-limit 50 "$tb" run configs/gpu-sanitize.json \
                --no-isolate -o "$out/sanitize" -q \
                > "$out/sanitize.log" 2>&1
            echo $? > "$out/sanitize.rc"
        ) &
        san_pid=$!
    fi
    ex=$out/torch-exec
    mkdir -p "$ex"
    TB=$tb EX=$ex
    export TB EX
    "$py" "$here/gpu_torch.py" plan "$out/check/results.json" \
        --per-op "${GPU_TORCH_PER_OP:-0}" > "$out/torch-plan.txt" \
        2> "$out/torch.log"
    awk '{print NR, $0}' "$out/torch-plan.txt" |
        timeout 200 xargs -P "$jobs" -L 1 sh -c '
            p=$3; [ "$p" = - ] && p=
            "$TB" exec "$1" -s "$2" ${p:+-p "$p"} -d "$4" --seed "$5" \
                -b cuda -o "$EX/$0" > /dev/null 2> "$EX/$0.err" ||
                echo "exec $0 ($1 $2 $3 $4): exit $?: $(head -c 300 "$EX/$0.err")"
        ' >> "$out/torch.log" 2>&1 &
    wait $!
    n_exec=$(wc -l < "$out/torch-plan.txt")
    n_fail=$(grep -c '^exec ' "$out/torch.log")
    if [ "$n_exec" -gt 0 ]; then
        say "$([ "$n_fail" -eq 0 ] && echo PASS || echo FAIL) torch:" \
            "tbench exec -b cuda: $((n_exec - n_fail)) of $n_exec ran" \
            "$(grep -m1 '^exec ' "$out/torch.log")"
        # shellcheck disable=SC2046  # one argument per exec folder
        "$py" "$here/gpu_torch.py" compare $(ls -d "$ex"/*/ 2>/dev/null) \
            > "$out/torch-compare.txt" 2>> "$out/torch.log"
        crc=$?
        tee -a "$summary" < "$out/torch-compare.txt"
        # a compare that stopped (a traceback) printed no FAIL of its own
        if [ "$crc" -ne 0 ] && ! grep -q '^FAIL' "$out/torch-compare.txt"
        then
            say "FAIL torch: gpu_torch.py compare stopped (exit $crc):" \
                "$(tail -n 1 "$out/torch.log")"
        fi
        find "$ex" -name '*.npy' -delete
    else
        say "FAIL torch: no ok cuda case to compare"
    fi
    if [ -n "$sanitizer" ]; then
        wait "$san_pid"
        rc=$(cat "$out/sanitize.rc" 2>/dev/null || echo none)
        errs=$(grep -m1 'ERROR SUMMARY' "$out/sanitize.log")
        if [ "$rc" = 0 ]; then
            say "PASS sanitizer: memcheck on configs/gpu-sanitize.json:" \
                "${errs:-no errors}"
        else
            say "FAIL sanitizer: memcheck exit $rc: ${errs:-see" \
                "sanitize.log}: $(grep -m1 'Invalid\|ERROR' \
                "$out/sanitize.log")"
        fi
        checks cases "$out/sanitize/results.json" sanitizer
    else
        say "SKIP sanitizer: compute-sanitizer is not installed"
    fi
    wait "$big_pid"
    if [ -f "$out/big/results.json" ]; then
        checks big "$out/big/results.json"
    else
        say "FAIL 64-bit indices: add of 2^31 + 7 elements: no results:" \
            "$(tail -n 2 "$out/big.log" | tr '\n' ' ')"
    fi
    finish 0
fi

# ---- --full --------------------------------------------------------------
step peaks
timeout 120 "$tb" peak --quick --json -o "$out/peaks.json" \
    > "$out/peak.log" 2>&1
checks peaks "$out/peaks.json"

step gpu
timeout 300 "$tb" run configs/gpu.json -b cuda --max-time 0.5 -o "$out/gpu" -q \
    > "$out/gpu.log" 2>&1
checks cases "$out/gpu/results.json" gpu
checks counts "$out/gpu/results.json" gpu
checks timing "$out/gpu/results.json" gpu
checks clocks "$out/gpu/results.json" gpu
checks roofline "$out/gpu/results.json" gpu
link=$(echo "$gpu" | awk -F, '{g=$5+0; w=$6+0;
    r = g>=5 ? 3.938 : g==4 ? 1.969 : g==3 ? 0.985 : 0;
    if (r*w > 0) printf "%.1f", r*w}')
checks transfers "$out/gpu/results.json" "$link"

step torch-time
if timeout 180 "$py" "$here/gpu_torch.py" time "$out/gpu/results.json" \
    "$out/torch-times.json" > "$out/torch-times.txt" 2>&1; then
    say "INFO torch-time: $(grep -c us "$out/torch-times.txt") cases" \
        "timed through PyTorch CUDA (torch-times.txt)"
else
    say "FAIL torch-time: $(tail -n 1 "$out/torch-times.txt")"
fi

step detach
timeout 120 "$tb" run configs/gpu-detach.json -o "$out/detach" -q \
    > "$out/detach.log" 2>&1
TBENCH_CUPTI_DETACH=0 timeout 120 "$tb" run configs/gpu-detach.json \
    -o "$out/attached" -q > "$out/attached.log" 2>&1
checks detach "$out/detach/results.json" "$out/attached/results.json"
if "$cuda/bin/nvcc" -O2 -std=c++17 -arch="sm_$archs" -I"$cuda/include" \
       -o "$out/cupti_overhead" tests/gpu/cupti_overhead.cu \
       -L"$cuda/lib64" -lcupti -Xlinker -rpath="$cuda/lib64" \
       > "$out/cupti_overhead.log" 2>&1; then
    timeout 60 "$out/cupti_overhead" >> "$out/cupti_overhead.log" 2>&1
fi
checks cupti-overhead "$out/cupti_overhead.log"
rm -f "$out/cupti_overhead"

step pool
timeout 300 "$tb" run configs/gpu-check.json -b cuda --filter '*pool=true*' \
    -o "$out/pool" -q > "$out/pool.log" 2>&1
checks cases "$out/pool/results.json" pool
checks counts "$out/pool/results.json" pool

step alloc
timeout 120 "$tb" run configs/gpu-alloc.json -b cuda -o "$out/alloc" -q \
    > "$out/alloc.log" 2>&1
checks cases "$out/alloc/results.json" alloc
checks counts "$out/alloc/results.json" alloc

step l2
timeout 120 "$tb" run configs/gpu-l2.json -o "$out/l2" -q \
    > "$out/l2.log" 2>&1
timeout 120 "$tb" run configs/gpu-l2.json --filter '*l2=warm*' \
    --sample-ms 0.001 -o "$out/l2-single" -q > "$out/l2-single.log" 2>&1
checks l2 "$out/l2/results.json" "$out/l2-single/results.json"

step ptx
CUDA_FORCE_PTX_JIT=1 timeout 180 "$tb" run configs/gpu-check.json -b cuda \
    --filter 'add/*' --filter 'sum*' --filter 'softmax*' \
    --exclude '*pool=true*' --exclude '*/f64/*' -o "$out/ptx" -q \
    > "$out/ptx.log" 2>&1
checks cases "$out/ptx/results.json" ptx

step determinism
for run in a b; do
    mkdir -p "$out/det/$run"
    i=0
    while read -r op shape params; do
        i=$((i + 1))
        set --
        [ "$params" != - ] && set -- -p "$params"
        timeout 60 "$tb" exec "$op" -s "$shape" "$@" -b cuda \
            -o "$out/det/$run/$i" >> "$out/det.log" 2>&1
    done <<EOF
sum 1048577 -
max 4194304 -
argmax 3x300001 axis=-1
var 4194304 correction=0
EOF
done
checks same "$out/det/a" "$out/det/b"
find "$out/det" -name '*.npy' -delete

step nsys
if command -v nsys >/dev/null 2>&1; then
    timeout 120 nsys profile -t cuda,nvtx -o "$out/nsys" --force-overwrite \
        true --stats=true "$tb" run configs/gpu-detach.json -o \
        "$out/nsys-run" -q > "$out/nsys.log" 2>&1
    if grep -q 'tbench' "$out/nsys.log" && grep -qi 'k_binary_same' \
        "$out/nsys.log"; then
        say "PASS nsys: NVTX domain tbench and the kernels in its report"
    else
        say "FAIL nsys: NVTX ranges or kernels missing (see nsys.log)"
    fi
    rm -f "$out"/nsys.nsys-rep "$out"/nsys.sqlite
else
    say "SKIP nsys: not on PATH"
fi
finish 0
