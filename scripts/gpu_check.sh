#!/bin/sh
# gpu_check.sh: build tbench with the CUDA module on a machine with an
# NVIDIA GPU, check every CUDA kernel against the reference, and leave
# everything in one folder to hand back.
#
# Usage (from the repository root):
#   scripts/gpu_check.sh [OUTDIR]
# OUTDIR defaults to results/gpu-check-HOST-YYYYmmdd-HHMMSS.  It receives
#   build.log        meson + ninja output
#   nvidia-smi.txt   the GPU and driver (nvidia-smi -q), when present
#   list.txt         `tbench list` (cuda available? its archs)
#   check/           `tbench run configs/gpu-check.json` results
#                    (results.json, results.csv): every kernel of the
#                    module (element-wise, activations, reductions,
#                    softmax, layout, creation, add_relu, optimizers,
#                    pooling, cuBLAS matmul/linear/conv2d) at sizes 1,
#                    7, 513, 4097 and with broadcasting, f32 and f64,
#                    each checked against the double reference before
#                    it is timed
#   gpu/             `tbench run configs/gpu.json` results: the seeds'
#                    tables on cpu, blas and cuda (long on a small CPU;
#                    GPU_JSON=0 skips it, GPU_JSON=cuda runs only the
#                    cuda cases)
#   alloc/           `tbench run configs/gpu-alloc.json`: the allocating
#                    forms on cuda with pool=false and pool=true (skipped
#                    with GPU_JSON=0)
#   tests.log        `meson test` output, when cmocka was found
#   summary.txt      case counts per status and every case not ok
#   l2/, l2.txt      `tbench run configs/gpu-l2.json` (cuda with l2=warm
#                    and l2=cold) and its assertions: cold cases are one
#                    prepared call per sample, add on 1M f32 is not
#                    faster cold than warm, every ok cuda case of every
#                    run has its clock record (gpu_clock); cases timed
#                    while the GPU throttled are listed
#   peaks.json, peak.txt  `tbench peak`: the GPU's measured bandwidth
#                    (copy/read/triad) and FMA (f32/f64) beside the
#                    vendor figures; fails when a figure is missing or
#                    above 1.15 x its vendor figure
#   counts.txt       the CUPTI count assertions (issue 12), one line each:
#                    add: 1 launch, 0 memcpys, 0 device allocs per
#                    iteration (resident buffers); add with "alloc": 1
#                    device alloc and 1 free; log_softmax: 1 launch;
#                    copy_h2d/d2h/d2d: 1 copy of the tensor's bytes in
#                    that direction, no launch; add with "transfers": 2
#                    h2d and 1 d2h copies, 1 launch; the module's count
#                    of device allocations equal to CUPTI's (pool=false;
#                    pool=true shows both); add alloc on the pool: 1;
#                    log_softmax_unfused: 6 launches (SKIP while the
#                    module lacks a step's kernel: unsupported); any ok
#                    cuda case with "cupti": null fails with its reason
# Exit status: 0 when every cuda case of its runs is ok or unsupported
# and every count assertion holds, 1 when a case failed its check or errored (or
# cuda is unavailable) or a count is wrong or missing, 2 when the build
# failed.
#
# Needs: nvcc (CUDA 13: /usr/local/cuda, or CUDA_HOME) with the
# toolkit's cuBLAS and cuSOLVER (the module links libcublas and
# libcusolver from CUDA_HOME/lib64), the NVIDIA driver, gcc, meson (>= 0.63) and ninja (pip install meson ninja works),
# pkg-config, python3, and the Debian packages libcjson-dev and
# libcsv-dev (with their runtime packages libcjson1 and libcsv3);
# libopenblas-dev, liblapacke-dev, libcmocka-dev and python3-jsonschema
# are optional.
#
# A machine without a package registry: on a Debian 12 machine that has
# one, fetch the .deb files (no root needed) and copy them over:
#     apt-get download libcjson-dev libcjson1 libcsv-dev libcsv3
# then point DEBS at their folder:
#     DEBS=/path/to/debs scripts/gpu_check.sh
# Each .deb is unpacked with `dpkg -x` into OUTDIR/sysroot (nothing is
# installed), its pkg-config files are moved there, and the build and
# the run use it.  With root, `dpkg -i *.deb` installs them instead.
#
# Environment: CUDA_HOME (toolkit root), GPU_ARCHS (e.g. "90" or
# "80,90"; default: the build's default, sm_75..sm_90 plus PTX),
# DEBS (folder of .deb files), BUILD (build folder, default build-gpu),
# GPU_JSON (1: configs/gpu.json on every backend, the default; cuda:
# its cuda cases only; 0: skip it and configs/gpu-alloc.json).
set -eu

host=$(hostname 2>/dev/null || echo host)
out=${1:-results/gpu-check-$host-$(date +%Y%m%d-%H%M%S)}
build=${BUILD:-build-gpu}
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "gpu_check: results go to $out"

if [ -n "${DEBS:-}" ]; then
    root=$out/sysroot
    mkdir -p "$root"
    for d in "$DEBS"/*.deb; do
        dpkg -x "$d" "$root"
    done
    for pc in "$root"/usr/lib/*/pkgconfig/*.pc "$root"/usr/share/pkgconfig/*.pc; do
        [ -f "$pc" ] && sed -i "s|^prefix=/usr|prefix=$root/usr|" "$pc"
    done
    libdir=$root/usr/lib
    for d in "$root"/usr/lib/*-linux-gnu; do
        [ -d "$d" ] && libdir=$d && break
    done
    PKG_CONFIG_PATH=$libdir/pkgconfig:$root/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_PATH LD_LIBRARY_PATH
    extra="-Dc_args=-I$root/usr/include -Dc_link_args=-L$libdir"
else
    extra=
fi

archs=
if [ -n "${GPU_ARCHS:-}" ]; then
    archs="-Dgpu_archs=$GPU_ARCHS"
fi

# Tests only when cmocka is there (a GPU box often lacks it).
tests=disabled
if pkg-config --exists cmocka 2>/dev/null; then
    tests=enabled
fi

if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1 || true
fi

echo "gpu_check: building in $build"
# shellcheck disable=SC2086  # $extra and $archs are word lists
if ! { if [ -d "$build" ]; then
           meson setup --reconfigure "$build" -Dbuildtype=release \
               -Dcuda=enabled -Dcudatoolkit="$cuda" -Dtests=$tests \
               $archs $extra
       else
           meson setup "$build" -Dbuildtype=release -Dcuda=enabled \
               -Dcudatoolkit="$cuda" -Dtests=$tests $archs $extra
       fi && ninja -C "$build"; } > "$out/build.log" 2>&1; then
    tail -n 30 "$out/build.log"
    echo "gpu_check: build failed (see $out/build.log)"
    exit 2
fi

"$build/tbench" list > "$out/list.txt" 2>&1 || true
grep -A1 '^  cuda' "$out/list.txt" || true

# GPU peaks (tbench peak), first, into a cache of this folder that
# every run below reads (their cases get rooflines against them):
# measured, every figure > 0, and each at most 1.15 x its vendor figure
# where that is known (a measured rate above the hardware's is a
# counting bug).
TBENCH_PEAK_CACHE="$out/peak-cache.json"
export TBENCH_PEAK_CACHE
pk=0
"$build/tbench" peak --json \
    -o "$out/peaks.json" > "$out/peak.log" 2>&1 || pk=$?
python3 - "$out/peaks.json" > "$out/peak.txt" <<'EOF' || pk=1
import json, sys
try:
    g = json.load(open(sys.argv[1], encoding="utf-8")).get("gpu") or {}
except (OSError, ValueError) as e:
    print(f"FAIL no peaks: {e}")
    sys.exit(1)
if not g.get("available"):
    print(f"FAIL GPU peaks unavailable: {g.get('reason')}")
    sys.exit(1)
bad = 0
d = g["device"]
print(f"GPU {d['name']} (cc {d['compute_capability']}, {d['sm_count']} "
      f"SMs), arrays {(g.get('array_bytes') or 0) / 2**20:.0f} MiB")
for e, unit, key in [(e, "GB/s", "gb_s") for e in g["bandwidth"]] + \
                    [(e, "GFLOP/s", "gflop_s") for e in g["flops"]]:
    best, ven = e[f"best_{key}"], e[f"vendor_{key}"]
    ok = best > 0 and (ven is None or best <= 1.15 * ven)
    bad += not ok
    name = e.get("kernel") or e.get("dtype")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: best {best:.1f} {unit}, "
          f"median {e[f'median_{key}'] or 0:.1f}, vendor "
          f"{'-' if ven is None else f'{ven:.1f}'}"
          f"{'' if not ven else f' ({best / ven:.0%} of it)'}")
if len(g["bandwidth"]) != 3 or len(g["flops"]) != 2:
    bad += 1
    print(f"FAIL missing figures: {g.get('reason')}")
print(f"peaks: {bad} failed")
sys.exit(1 if bad else 0)
EOF
cat "$out/peak.txt"

status=0
"$build/tbench" run configs/gpu-check.json -o "$out/check" -q \
    > "$out/check.log" 2>&1 || status=$?

gpu_status=0
case ${GPU_JSON:-1} in
0) ;;
cuda) "$build/tbench" run configs/gpu.json -b cuda -o "$out/gpu" -q \
          > "$out/gpu.log" 2>&1 || gpu_status=$? ;;
*) "$build/tbench" run configs/gpu.json -o "$out/gpu" -q \
       > "$out/gpu.log" 2>&1 || gpu_status=$? ;;
esac

# the allocating forms on both cuda allocators (axis pool)
alloc_status=0
if [ "${GPU_JSON:-1}" != 0 ]; then
    "$build/tbench" run configs/gpu-alloc.json -o "$out/alloc" -q \
        > "$out/alloc.log" 2>&1 || alloc_status=$?
fi

if [ "$tests" = enabled ]; then
    meson test -C "$build" --print-errorlogs > "$out/tests.log" 2>&1 || \
        echo "gpu_check: some tests failed (see $out/tests.log)"
fi

python3 - "$out/check/results.json" "$out/gpu/results.json" \
    "$out/alloc/results.json" > "$out/summary.txt" <<'EOF'
import collections, json, os, sys
for path in sys.argv[1:]:
    name = os.path.basename(os.path.dirname(path))
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except OSError as e:
        print(f"{name}: no results: {e}")
        continue
    cases = [c for c in doc["cases"] if c["backend"] == "cuda"]
    n = collections.Counter(c["status"] for c in cases)
    print(f"cuda cases ({name}):",
          ", ".join(f"{k} {v}" for k, v in sorted(n.items())))
    shown = set()
    for c in cases:
        if c["status"] == "unavailable":  # one reason for all: say it once
            if "unavailable" not in shown:
                print("unavailable", c["id"], "and the rest:", c["message"])
            shown.add("unavailable")
        elif c["status"] not in ("ok", "unsupported"):
            print(c["status"], c["id"], c.get("message", ""))
EOF
cat "$out/summary.txt"

# The CUPTI counts (issue 12): only meaningful on a GPU, so only here.
counts=0
python3 - "$out/check/results.json" > "$out/counts.txt" <<'EOF' || counts=1
import json, sys
try:
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
except OSError as e:
    print(f"FAIL no results: {e}")
    sys.exit(1)
bad = 0


def check(c, what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {c['id']}: {what} {got:g}, want "
          f"{want:g}")


seen = set()
for c in doc["cases"]:
    if c["backend"] != "cuda" or c["status"] != "ok":
        if c["backend"] == "cuda" and c["op"] == "log_softmax_unfused":
            print(f"SKIP {c['id']}: {c['status']}: {c.get('message')}")
        continue
    cu = c.get("cupti")
    if cu is None:
        bad += 1
        print(f"FAIL {c['id']}: cupti not measured: "
              f"{c.get('cupti_reason')}")
        continue
    copies = sum(d["count"] for d in cu["memcpy"].values())
    op, alloc = c["op"], c.get("alloc_outputs", False)
    pool = c.get("backend_params", {}).get("pool") == "true"
    tr = c.get("transfers", False)
    # the module's own count of allocations against CUPTI's MEMORY2
    # records: equal with cudaMalloc; with the pool (cudaMallocAsync)
    # shown only, as what CUPTI reports for pool allocations has not yet
    # been seen on a GPU
    mine = c["counters"]["device_allocs"]
    if pool:
        print(f"info {c['id']}: device allocs: module {mine:g}, "
              f"CUPTI {cu['device_allocs']:g}")
    else:
        check(c, "device allocs (module = CUPTI)", mine, cu["device_allocs"])
    if op in ("copy_h2d", "copy_d2h", "copy_d2d"):
        way = {"copy_h2d": "h2d", "copy_d2h": "d2h", "copy_d2d": "d2d"}[op]
        n = 1
        for d in c["shapes"][0]:
            n *= d
        nb = n * (4 if c["dtype"] == "f32" else 8)
        check(c, "kernel launches", cu["kernel_launches"], 0)
        check(c, f"{way} memcpys", cu["memcpy"][way]["count"], 1)
        check(c, f"{way} bytes", cu["memcpy"][way]["bytes"], nb)
        check(c, "memcpys", copies, 1)
        seen.add(op)
        continue
    if tr:
        if op == "add":
            check(c, "kernel launches", cu["kernel_launches"], 1)
            check(c, "h2d memcpys", cu["memcpy"]["h2d"]["count"], 2)
            check(c, "d2h memcpys", cu["memcpy"]["d2h"]["count"], 1)
            check(c, "device allocs", mine, 1 if alloc else 0)
            seen.add("add@transfers")
        continue
    if op == "add" and alloc and pool:
        check(c, "device allocs (module)", mine, 1)
        seen.add("add@alloc+pool")
        continue
    if op == "add" and not alloc:
        check(c, "kernel launches", cu["kernel_launches"], 1)
        check(c, "memcpys", copies, 0)
        check(c, "device allocs", cu["device_allocs"], 0)
    elif op == "add":
        check(c, "kernel launches", cu["kernel_launches"], 1)
        check(c, "device allocs", cu["device_allocs"], 1)
        check(c, "device frees", cu["device_frees"], 1)
    elif op == "log_softmax":
        check(c, "kernel launches", cu["kernel_launches"], 1)
    elif op == "log_softmax_unfused":
        check(c, "kernel launches", cu["kernel_launches"], 6)
    else:
        continue
    seen.add(op + ("@alloc" if alloc else ""))
for want in ("add", "add@alloc", "log_softmax", "copy_h2d", "copy_d2h",
             "copy_d2d", "add@transfers", "add@alloc+pool"):
    if want not in seen:
        bad += 1
        print(f"FAIL no ok cuda case of {want} to check the counts on")
print(f"counts: {bad} failed")
sys.exit(1 if bad else 0)
EOF
cat "$out/counts.txt"

# Warm and cold L2 (configs/gpu-l2.json, axis l2) and the clock record
# (gpu_clock): every cold case is one prepared call per sample; add on
# 1M elements (fits the L2) is not faster cold than warm on the device;
# every ok cuda case of every run has its clock record (NVML present),
# and a case timed while the GPU throttled is listed (not a failure:
# the figures of such a case are low, run it again).
l2=0
"$build/tbench" run configs/gpu-l2.json -o "$out/l2" -q \
    > "$out/l2.log" 2>&1 || l2=$?
python3 - "$out/l2/results.json" "$out/check/results.json" \
    "$out/gpu/results.json" > "$out/l2.txt" <<'EOF' || l2=1
import json, sys
bad = 0
docs, l2doc = [], None
for i, p in enumerate(sys.argv[1:]):
    try:
        docs.append(json.load(open(p, encoding="utf-8")))
        l2doc = docs[0] if i == 0 else l2doc
    except OSError as e:
        print(f"{'FAIL' if i == 0 else 'SKIP'} no results: {e}")
        bad += i == 0
if l2doc:
    dev = {}
    for c in l2doc["cases"]:
        if c["status"] != "ok":
            bad += 1
            print(f"FAIL {c['id']}: {c['status']}: {c.get('message')}")
            continue
        l2 = c["backend_params"].get("l2")
        tm, st = c["timing"], c["stats"]
        if l2 == "cold" and not (tm.get("prepared_samples") and
                                 st["iters_per_sample"] == 1):
            bad += 1
            print(f"FAIL {c['id']}: cold but not one prepared call per "
                  f"sample")
        if tm.get("device"):
            dev[(c["op"], c["shapes"][0][0], l2)] = tm["device"]["median_ns"]
    w = dev.get(("add", 1048576, "warm"))
    k = dev.get(("add", 1048576, "cold"))
    if w is None or k is None:
        bad += 1
        print("FAIL no device time of add 1M warm and cold")
    else:
        ok = k >= w
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} add 1M f32 device median: warm "
              f"{w:.0f} ns, cold {k:.0f} ns (cold/warm {k / w:.2f})")
    for op, n in (("add", 16777216), ("sum", 4194304)):
        a, b = dev.get((op, n, "warm")), dev.get((op, n, "cold"))
        if a is not None and b is not None:
            print(f"info {op} {n} f32 device median: warm {a:.0f} ns, "
                  f"cold {b:.0f} ns")
for d in docs:
    for c in d["cases"]:
        if c["backend"] != "cuda" or c["status"] != "ok":
            continue
        k = c.get("gpu_clock")
        if not k or not k["available"]:
            bad += 1
            print(f"FAIL {c['id']}: no clock record: "
                  f"{k['reason'] if k else 'gpu_clock null'}")
        elif k["throttled"]:
            print(f"THROTTLED {c['id']}: SM {k['sm_mhz_min']}-"
                  f"{k['sm_mhz_max']} MHz: "
                  f"{', '.join(k['throttle_reasons'])}")
print(f"l2/clocks: {bad} failed")
sys.exit(1 if bad else 0)
EOF
cat "$out/l2.txt"

if [ "$counts" -eq 0 ] && [ "$l2" -eq 0 ] && [ "$pk" -eq 0 ] &&
   grep -q '^cuda cases (check):' "$out/summary.txt" &&
   ! grep -Eq '^(failed-check|error|crashed|timeout|unavailable|skipped) ' \
       "$out/summary.txt" && [ "$status" -eq 0 ] && [ "$gpu_status" -eq 0 ] &&
   [ "$alloc_status" -eq 0 ]
then
    echo "gpu_check: every CUDA kernel passed its check and its counts"
    exit 0
fi
echo "gpu_check: failures (tbench run exit $status, gpu.json exit" \
     "$gpu_status, gpu-alloc.json exit $alloc_status; see" \
     "$out/summary.txt)"
exit 1
