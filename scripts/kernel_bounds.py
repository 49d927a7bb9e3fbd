#!/usr/bin/env python3
"""State the compute bounds of CPU kernel rows with llvm-mca.

Usage:
    scripts/kernel_bounds.py [--build DIR] [--mcpu CPU] [-o FILE] [--print]

For every loop of scripts/kernel_bounds.c (the fast path of an f32 kernel
row: exp, log, tanh, sigmoid, silu, gelu, gelu_tanh, softplus, sqrt, pow,
sigmoid_backward, tanh_backward, the softmax family's long rows and
log_softmax_backward's), of scripts/kernel_bounds_f64.c (the
f64 rows: exp, log, sigmoid, tanh, silu, gelu_tanh, softplus, gelu, pow,
rand_normal, sigmoid_backward, tanh_backward, gelu_backward, log_softmax,
softmax, cross_entropy, their backward), at both
SIMD levels, and of scripts/kernel_bounds_half.c (the bf16 and f16 fused
element-wise rows of half_simd.h: bf16 at avx512bf16, avx512 (without
AVX512_BF16: integer narrowing) and avx2, f16 at avx512 and avx2; layer_norm and rms_norm bf16 at avx512bf16; softmax and
log_softmax bf16 and f16, half_lsm_fused.h's passes; log_softmax_backward
bf16 and f16: the f32 row's work on widened values; mul_backward and
div_backward bf16 with a broadcast row, half_bwbin_simd.h's step;
layer_norm_backward and rms_norm_backward f32 and bf16 at avx512,
norm16_simd.h's two passes over a quad of rows, regions ROW__p1 and
ROW__p2 whose cycles an element are added into ROW's entry) and of scripts/kernel_bounds_rand.c (rand_uniform f32,
bf16, f16, f64, rand_normal f32, bf16, f16 and dropout f32, f64 at
avx512 and avx2):

1. compiles the file to assembly with the flags DIR's build gives the
   level's own source (DIR/compile_commands.json: the entries of
   vmath_avx512.c and vmath_avx2.c for the f32 loops, f64_avx512.c and
   f64_avx2.c for the f64 ones, half_avx512bf16.c, half_avx512.c and
   half_avx2.c for the 16-bit ones, rand_avx512.c and rand_avx2.c for
   the random ops' and dropout's; DIR should be a release build, as the
   table's rows are: default `build`);
2. in each loop function kb_ROW, follows from the region's start marker
   the shortest path to its end marker (0-1 search over the assembly's
   jumps: each instruction costs 1): the step where every lane takes the
   fast form, which is what the benchmark's inputs take (the .c files'
   headers say why);
3. hands those instructions to llvm-mca (-mcpu, default icelake-server:
   the port model of this project's AVX-512 Xeons, two 512-bit ports
   p0/p5, three 256-bit ones; znver4 for Zen 4, which runs 512-bit
   operations on 256-bit halves) and reads its "Block RThroughput": the
   cycles one step needs on the model's ports when nothing but port
   pressure limits it, a lower bound on the step's time on that model;
4. writes ROW_DTYPE_LEVEL entries of the compute-bounds file (-o,
   default docs/perf-data/compute-bounds.json), each tagged with the
   model (mcpu): cycles per element = the step's cycles / its elements
   (a step is two vectors unless the file's KB-VECTORS line says
   otherwise), and a one-line derivation (tool, model, instructions,
   uops, the two busiest ports).  Entries of the same row and model are
   replaced; those of other models and those stated by hand are kept.
   --print writes the entries to stdout instead.

scripts/op_limits.py holds each such row to max(memory bound, elements x
cycles / the measured core clock), with the entries of the model of the
machine it runs on (icelake-server on Intel, znver4 on an AMD CPU with
AVX-512).  The loop control (one add, one compare and branch) is left
out of the region, which only lowers the bound.  LLVM 14 (Debian 12's
llvm-mca) has no znver4 model: its llvm-19 package has (--llvm-mca auto
finds llvm-mca-19).

Exit status: 0 done; 1 a tool failed (the compiler, llvm-mca) or its
output was not understood; 2 bad arguments or input (one line naming the
file and the place).
"""
import argparse
import heapq
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "scripts", "kernel_bounds.c")
SOURCE_F64 = os.path.join(ROOT, "scripts", "kernel_bounds_f64.c")
SOURCE_HALF = os.path.join(ROOT, "scripts", "kernel_bounds_half.c")
SOURCE_RAND = os.path.join(ROOT, "scripts", "kernel_bounds_rand.c")
BOUNDS = os.path.join(ROOT, "docs", "perf-data", "compute-bounds.json")
SCHEMA = "tbench.compute_bounds/1"
# (the loops' file, their dtype (None: each region's name ends in its
# dtype), level name -> (the source whose flags are used, lanes per vector))
SOURCES = [
    (SOURCE, "f32", {"avx512": ("vmath_avx512.c", 16),
                     "avx2": ("vmath_avx2.c", 8)}),
    (SOURCE_F64, "f64", {"avx512": ("f64_avx512.c", 8),
                         "avx2": ("f64_avx2.c", 4)}),
    (SOURCE_HALF, None, {"avx512bf16": ("half_avx512bf16.c", 16),
                         "avx512": ("half_avx512.c", 16),
                         "avx2": ("half_avx2.c", 8)}),
    # the random ops' and dropout's rows (region names carry the dtype;
    # lanes: 64-bit lanes of the counters, KB-VECTORS per step)
    (SOURCE_RAND, None, {"avx512": ("rand_avx512.c", 8),
                         "avx2": ("rand_avx2.c", 4)}),
]
# the 16-bit dtypes whose regions kernel_bounds_half.c compiles at each
# level (its #if lines): the rows this project's CPUs run; f16's binary
# ops and leaky_relu at avx512 are left out there (ymm steps, a wrong
# model: the file says why)
HALF_LEVELS = {"avx512bf16": ("bf16",), "avx512": ("bf16", "f16"),
               "avx2": ("bf16", "f16")}
HALF_LEFT_OUT = {f"{op}_f16_avx512" for op in (
    "add", "sub", "mul", "div", "add_relu", "leaky_relu")}
STEP_VECTORS = 2  # vectors per loop step unless a KB-VECTORS line says
# a region ROW__pN is pass N of ROW (kernel_bounds_half.c's normalization
# gradients: loops run one after the other over the same elements): one
# entry for ROW, the passes' cycles an element added
PASS = re.compile(r"^(\w+?)__(p\d+)$")
# (impl, mcpu) pairs stated by hand from a measurement, where the model is
# wrong: not written here (their hand entries are kept).  dropout's
# AVX-512 rows on znver4: the model gives the step 5 cycles for 16 f32
# elements; this Zen 4 runs it in 12.8 (vpsrlq zmm one a cycle;
# scripts/mix_tp.c)
# gelu and gelu_tanh f32 at avx512 on znver4: the model gives the step
# 0.5625 cycles an element, this Zen 4 runs it in 0.75 in L1 (a zmm
# vpermps beside FMAs; scripts/gelu16_tp.c, gelu_lut_bench.c)
HAND_STATED = {("dropout_f32_avx512", "znver4"),
               ("dropout_f64_avx512", "znver4"),
               ("gelu_f32_avx512", "znver4"),
               ("gelu_tanh_f32_avx512", "znver4")}
# the rows whose znver4 bound is their own loop's rate in L1 measured by
# scripts/mix_tp.c (scripts/mix_tp_rows.py: kb_ROW on L1-resident
# buffers): the model puts rand_uniform's mix at 0.5 cycles a zmm shift
# (1.0 here) and its block reciprocal throughput of these loops below
# their busiest FP pipe's pressure, which they run at 1.07-1.40x of
HAND_STATED |= {(r, "znver4") for r in (
    "rand_uniform_f32_avx512", "rand_uniform_f16_avx512",
    "rand_uniform_bf16_avx512", "rand_uniform_f64_avx512",
    "pow_bf16_avx512bf16", "pow_f16_avx512",
    "sigmoid_backward_bf16_avx512bf16", "sigmoid_backward_f16_avx512",
    "tanh_backward_bf16_avx512bf16", "tanh_backward_f16_avx512",
    "pow_f64_avx512", "tanh_f64_avx512", "sigmoid_backward_f64_avx512",
    "tanh_backward_f64_avx512", "log_bf16_avx512bf16", "log_f16_avx512",
    # rand_normal: 1.14-1.16x the busiest pipe (branch randn, 2026-11-30)
    "rand_normal_f32_avx512", "rand_normal_f16_avx512",
    "rand_normal_bf16_avx512", "rand_normal_f64_avx512",
    # exp f32: the model puts all 41 instructions of its step on two FP
    # pipes (20.5 cycles); the loop runs in 19.3, and the row measured
    # faster than the model's bound (op_limits, 0.94x)
    "exp_f32_avx512")}


def die(msg, code=2):
    print(f"kernel_bounds: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- compiler flags ----------------------------------------------------------

def level_flags(build, source):
    """The -I/-D/-O/-m/-f/-std flags of `source`'s compile command in
    build/compile_commands.json, -I paths made absolute."""
    path = os.path.join(build, "compile_commands.json")
    try:
        with open(path, encoding="utf-8") as f:
            cmds = json.load(f)
    except OSError as e:
        die(f"{path}: cannot read: {e.strerror} (configure the build with "
            "meson first)")
    except ValueError as e:
        die(f"{path}: not JSON: {e}")
    if not isinstance(cmds, list):
        die(f"{path}: expected a list of compile commands")
    for i, c in enumerate(cmds):
        if not isinstance(c, dict) or not isinstance(c.get("file"), str):
            die(f"{path}: entry {i}: expected an object with 'file'")
        if os.path.basename(c["file"]) != source:
            continue
        if not isinstance(c.get("command"), str) or \
                not isinstance(c.get("directory"), str):
            die(f"{path}: entry {i} ({source}): expected 'command' and "
                "'directory' strings")
        argv = shlex.split(c["command"])
        out, skip = [], False
        for a in argv[1:]:
            if skip:
                skip = False
                continue
            if a in ("-o", "-MQ", "-MF", "-c"):
                skip = True
                continue
            if a.startswith("-I"):
                out.append("-I" + os.path.join(c["directory"], a[2:]))
            elif a.startswith(("-D", "-O", "-m", "-std=")) or \
                    (a.startswith("-f") and "diagnostics" not in a):
                out.append(a)
        return argv[0], out
    die(f"{path}: no compile command for {source} (a build without the "
        "SIMD levels, or not a tbench build)")


# ---- assembly: the shortest path through a region --------------------------

LABEL = re.compile(r"^([.\w$]+):")
MARK = re.compile(r"^\s*#\s*LLVM-MCA-(BEGIN|END)\s+(\S+)")


def parse_function(asm, name):
    """The items of function `name` in gcc's AT&T output: ("label", L),
    ("begin", R), ("end", R) or ("ins", text)."""
    items, inside = [], False
    for line in asm.splitlines():
        if not inside:
            inside = line.startswith(name + ":")
            continue
        if re.match(r"^\s*\.size\s+" + re.escape(name) + r"\b", line):
            return items
        m = MARK.match(line)
        if m:
            items.append((m.group(1).lower(), m.group(2)))
            continue
        m = LABEL.match(line)
        if m:
            items.append(("label", m.group(1)))
            continue
        s = line.strip()
        if not s or s.startswith(("#", ".")):
            continue  # comments, #APP, directives
        items.append(("ins", s))
    raise ValueError(f"function {name} not found or not closed by .size")


def shortest_region(items, region):
    """The instructions on the shortest path from a ("begin", region)
    item to an ("end", region) one, in order.  Jumps: jmp L goes to L
    only, jCC L to L or the next item; ret and ud2 end a path."""
    labels = {it[1]: i for i, it in enumerate(items) if it[0] == "label"}
    starts = [i for i, it in enumerate(items) if it == ("begin", region)]
    if not starts:
        raise ValueError(f"no LLVM-MCA-BEGIN {region}")

    def succ(i):
        kind, text = items[i]
        if kind != "ins":
            return [i + 1]
        op = text.split()[0]
        if op in ("ret", "ud2") or op.startswith("ret"):
            return []
        if op.startswith("j"):
            tgt = text.split()[-1]
            if tgt not in labels:
                raise ValueError(f"jump to an unknown label: {text}")
            return [labels[tgt]] if op == "jmp" else [i + 1, labels[tgt]]
        return [i + 1]

    dist = {s: 0 for s in starts}
    prev = {}
    heap = [(0, s) for s in starts]
    while heap:
        d, i = heapq.heappop(heap)
        if d > dist.get(i, 1 << 60) or i >= len(items):
            continue
        if items[i] == ("end", region):
            path = []
            j = i
            while j in prev:
                j = prev[j]
                if items[j][0] == "ins":
                    path.append(items[j][1])
            return path[::-1]
        w = 1 if items[i][0] == "ins" else 0
        for k in succ(i):
            if d + w < dist.get(k, 1 << 60):
                dist[k] = d + w
                prev[k] = i
                heapq.heappush(heap, (d + w, k))
    raise ValueError(f"no path from LLVM-MCA-BEGIN {region} to its END")


# ---- llvm-mca ---------------------------------------------------------------

def mca(tool, mcpu, ins):
    """llvm-mca's figures for the instructions: (block reciprocal
    throughput, instructions, uops, [(pressure, port)] busiest first)."""
    text = "".join("\t" + s + "\n" for s in ins)
    r = subprocess.run([tool, f"-mcpu={mcpu}", "-iterations=100"],
                       input=text, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{tool} -mcpu={mcpu} failed: "
            f"{(r.stderr.strip().splitlines() or ['?'])[0]}", 1)
    out = r.stdout

    def num(key):
        m = re.search(r"^" + re.escape(key) + r":\s+([\d.]+)", out, re.M)
        if not m:
            die(f"{tool}: no '{key}' in its output", 1)
        return float(m.group(1))

    rthr = num("Block RThroughput")
    n_ins, uops = num("Instructions"), num("Total uOps")
    # "[2]   - ICXPort0" lines name the columns of the pressure table
    names = dict(re.findall(r"^\[(\d+)\]\s+-\s+(\S+)", out, re.M))
    m = re.search(r"Resource pressure per iteration:\n(.*)\n(.*)\n", out)
    ports = []
    if m:
        heads = re.findall(r"\[(\d+)\]", m.group(1))
        vals = m.group(2).split()
        for h, v in zip(heads, vals):
            if v != "-":
                ports.append((float(v), names.get(h, h)))
        ports.sort(reverse=True)
    return rthr, n_ins / 100, uops / 100, ports


def mca_version(tool):
    r = subprocess.run([tool, "--version"], capture_output=True, text=True)
    m = re.search(r"LLVM version ([\d.]+)", r.stdout + r.stderr)
    return m.group(1) if m else "?"


def port_name(p):
    """ICXPort05 -> p05, SKXDivider -> divider"""
    m = re.match(r"^[A-Z]+Port(\w+)$", p)
    return "p" + m.group(1) if m else p.lower()


def rows_of(asm):
    return sorted(set(re.findall(r"LLVM-MCA-BEGIN\s+(\w+)", asm)))


def step_vectors(asm):
    """The KB-VECTORS lines (kernel_bounds_f64.c, kernel_bounds_rand.c):
    region -> vectors a step."""
    return {r: int(v) for r, v in
            re.findall(r"#\s*KB-VECTORS\s+(\w+)\s+(\d+)", asm)}


def impl_name(row, dtype, level):
    """exp (kernel_bounds.c) -> exp_f32_LEVEL; exp_f64 -> exp_f64_LEVEL;
    dtype None (kernel_bounds_half.c): exp_bf16 -> exp_bf16_LEVEL"""
    if dtype is None:
        return f"{row}_{level}"
    base = row if row.endswith("_" + dtype) else f"{row}_{dtype}"
    return f"{base}_{level}"


def derive(build, mcpu, tool):
    ver = mca_version(tool)
    entries = []
    with tempfile.TemporaryDirectory() as tmp:
        for source, dtype, levels in SOURCES:
            for level, (src, lanes) in levels.items():
                entries += derive_one(build, mcpu, tool, ver, tmp, source,
                                      dtype, level, src, lanes)
    return entries


def derive_one(build, mcpu, tool, ver, tmp, source, dtype, level, src,
               lanes):
    cc, flags = level_flags(build, src)
    name = os.path.basename(source)
    out = os.path.join(tmp, f"{name}_{level}.s")
    # warnings ignored (not shown), but a call to an undeclared function
    # (a shipped inline renamed under the loop) is an error: compiled as
    # an external call, its region would price the call, not the row's
    # step (-w would silence that error too)
    cmd = [cc, *flags, "-Werror=implicit-function-declaration", "-S",
           "-o", out, source]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"compiling {source} for {level} failed: "
            f"{(r.stderr.strip().splitlines() or ['?'])[0]}", 1)
    with open(out, encoding="utf-8") as f:
        asm = f.read()
    vectors = step_vectors(asm)
    entries, passes = [], {}
    for row in rows_of(asm):
        try:
            ins = shortest_region(parse_function(asm, "kb_" + row), row)
        except ValueError as e:
            die(f"{source} ({level}): kb_{row}: {e}", 1)
        rthr, n_ins, uops, ports = mca(tool, mcpu, ins)
        nv = vectors.get(row, STEP_VECTORS)
        elems = nv * lanes
        busiest = ", ".join(f"{port_name(p)} {v:g}" for v, p in ports[:2])
        if (impl_name(row, dtype, level), mcpu) in HAND_STATED:
            continue
        part = PASS.match(row)
        if part:  # a pass of a row: added to its other passes below
            passes.setdefault(part.group(1), []).append(
                (part.group(2), rthr, elems, n_ins, uops, ports))
            continue
        entries.append({
            "impl": impl_name(row, dtype, level),
            "mcpu": mcpu,
            "cycles_per_element": round(rthr / elems, 4),
            "derivation": (
                f"llvm-mca {ver} -mcpu={mcpu} (scripts/kernel_bounds.py, "
                f"{name}): kb_{row}'s step of {nv} x {lanes} elements, "
                f"every lane on the fast path, release flags: {n_ins:g} "
                f"instructions, {uops:g} uops, block reciprocal throughput "
                f"{rthr:g} cycles (busiest: {busiest})"),
        })
    for row, ps in sorted(passes.items()):
        cpe = sum(p[1] / p[2] for p in ps)
        each = "; ".join(
            f"kb_{row}__{p[0]}: {p[3]:g} instructions, {p[4]:g} uops a "
            f"step of {p[2]}, block reciprocal throughput {p[1]:g} cycles "
            "(busiest: " + ", ".join(f"{port_name(q)} {v:g}"
                                     for v, q in p[5][:2]) + ")"
            for p in sorted(ps))
        entries.append({
            "impl": impl_name(row, dtype, level),
            "mcpu": mcpu,
            "cycles_per_element": round(cpe, 4),
            "derivation": (
                f"llvm-mca {ver} -mcpu={mcpu} (scripts/kernel_bounds.py, "
                f"{name}): the row's {len(ps)} passes, their cycles an "
                f"element added, every lane on the fast path, release "
                f"flags: {each}"),
        })
    return entries


def merge(path, entries):
    """path's document with `entries` replacing the entries of the same
    impl and mcpu (or appended); other entries kept in their order."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        die(f"{path}: cannot read: {e.strerror}")
    except ValueError as e:
        die(f"{path}: not JSON: {e}")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or \
            not isinstance(doc.get("bounds"), list):
        die(f"{path}: not a compute bounds file (expected an object with "
            f"schema \"{SCHEMA}\" and a bounds list)")
    new = {(e["impl"], e.get("mcpu")) for e in entries}
    kept = []
    for i, e in enumerate(doc["bounds"]):
        if not isinstance(e, dict) or not isinstance(e.get("impl"), str):
            die(f"{path}: bounds[{i}]: expected an object with an impl")
        if (e["impl"], e.get("mcpu")) not in new:
            kept.append(e)
    doc["bounds"] = kept + entries
    return doc


def find_tool(mcpu):
    """The first llvm-mca on PATH whose models include mcpu: llvm-mca,
    then llvm-mca-NN newest first (Debian 12's llvm-mca is LLVM 14's,
    which has no znver4; its llvm-19 package has)."""
    versioned = set()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            versioned |= {n for n in os.listdir(d)
                          if re.fullmatch(r"llvm-mca-\d+", n)}
        except OSError:
            pass
    for n in ["llvm-mca"] + sorted(versioned,
                                   key=lambda n: -int(n.split("-")[-1])):
        if shutil.which(n) is None:
            continue
        r = subprocess.run([n, "-mcpu=help"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        if re.search(r"^\s*" + re.escape(mcpu) + r"\s", r.stdout + r.stderr,
                     re.M):
            return n
    return None


def main():
    ap = argparse.ArgumentParser(
        description="State compute bounds of CPU kernel rows with llvm-mca "
                    "(see the header of this script).")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="the meson build whose flags are used (default: "
                         "build, the release build)")
    ap.add_argument("--mcpu", default="icelake-server",
                    help="llvm-mca's CPU model (default icelake-server; "
                         "znver4 for Zen 4): each entry written is tagged "
                         "with it, and scripts/op_limits.py applies it on "
                         "machines of that model only")
    ap.add_argument("--llvm-mca", default="auto", dest="tool",
                    help="the llvm-mca program (default auto: the first "
                         "of llvm-mca, llvm-mca-NN on PATH that has the "
                         "--mcpu model)")
    ap.add_argument("-o", "--output", default=BOUNDS,
                    help="the compute-bounds file to update (default "
                         "docs/perf-data/compute-bounds.json)")
    ap.add_argument("--print", action="store_true",
                    help="print the entries instead of writing the file")
    a = ap.parse_args()
    if not a.print:
        merge(a.output, [])  # a bad file stops here, before any work
    tool = find_tool(a.mcpu) if a.tool == "auto" else a.tool
    if tool is None:
        die(f"--mcpu {a.mcpu}: no llvm-mca on PATH has that model (Debian "
            "12: apt-get install llvm-19 for znver4)", 1)
    entries = derive(a.build, a.mcpu, tool)
    if not entries:
        die(f"{SOURCE}: no LLVM-MCA-BEGIN region", 1)
    if a.print:
        json.dump(entries, sys.stdout, indent=1)
        print()
        return 0
    doc = merge(a.output, entries)
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.output)
    print(f"kernel_bounds: {len(entries)} rows written to {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
