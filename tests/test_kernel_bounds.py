#!/usr/bin/python3
"""Tests of scripts/kernel_bounds.py (stated compute bounds of CPU kernel
rows by llvm-mca), printed as TAP.

Usage: test_kernel_bounds.py BUILD_DIR   (run from the repository root)

The path search on hand-written assembly (the short path through a
region whose fall-through is the long one, jumps back, ret, a missing
end marker, a jump to an unknown label), the merge into a bounds file
(hand-stated entries kept, generated ones replaced) and its failure
paths (one line naming the file, exit 2), and, where llvm-mca and the
build's SIMD sources are there, a derivation with BUILD_DIR's flags:
every loop of scripts/kernel_bounds.c at both levels gives a positive
bound, and the committed docs/perf-data/compute-bounds.json states every
one of those rows with a figure within 15% of this build's (the release
build the file comes from compiles at -O3, this one may not: the
figures agreed within 11% when this was written; an unoptimized or
sanitized build skips that comparison, and one below -O3 skips it for
the rows of several passes, whose inner loops only -O3 unrolls).  A kernel changed
without `scripts/kernel_bounds.py` run again fails the last check once
its step changes by more than that.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

BUILD = os.path.abspath(sys.argv[1])
SCRIPT = os.path.abspath("scripts/kernel_bounds.py")
BOUNDS = os.path.abspath("docs/perf-data/compute-bounds.json")
TMP = tempfile.mkdtemp(prefix="tbench-kbounds-")

sys.path.insert(0, os.path.abspath("scripts"))
import kernel_bounds as kb  # noqa: E402

# A region whose fall-through (the check failed) is long and whose
# jump target (every lane fast) is short, as gcc lays out vs_tanh.
ASM = """\
\t.text
\t.globl\tkb_t
\t.type\tkb_t, @function
kb_t:
.LFB1:
\t.cfi_startproc
\ttestq\t%rdx, %rdx
\tjle\t.L2
.L3:
#APP
# 12 "k.c" 1
\t# LLVM-MCA-BEGIN t
# 0 "" 2
#NO_APP
\tvmovups\t(%rdi,%rax,4), %zmm0
\tvcmpps\t$25, %zmm1, %zmm0, %k1
\tkortestw\t%k1, %k1
\tjc\t.L5
\tvaddps\t%zmm0, %zmm0, %zmm2
\tvaddps\t%zmm2, %zmm0, %zmm2
\tvaddps\t%zmm2, %zmm0, %zmm2
\tvdivps\t%zmm2, %zmm0, %zmm0
\tjmp\t.L6
.L5:
\tvmulps\t%zmm0, %zmm0, %zmm0
.L6:
\tvmovups\t%zmm0, (%rsi,%rax,4)
#APP
\t# LLVM-MCA-END t
#NO_APP
\taddq\t$16, %rax
\tcmpq\t%rax, %rdx
\tjg\t.L3
.L2:
\tret
\t.cfi_endproc
\t.size\tkb_t, .-kb_t
"""


@case("the shortest path takes the jump to the short form")
def _short():
    ins = kb.shortest_region(kb.parse_function(ASM, "kb_t"), "t")
    want = ["vmovups\t(%rdi,%rax,4), %zmm0",
            "vcmpps\t$25, %zmm1, %zmm0, %k1", "kortestw\t%k1, %k1",
            "jc\t.L5", "vmulps\t%zmm0, %zmm0, %zmm0",
            "vmovups\t%zmm0, (%rsi,%rax,4)"]
    expect(ins == want, f"path {ins}")


@case("the fall-through is taken when it is the shorter path")
def _fall():
    asm = ASM.replace("\tvmulps\t%zmm0, %zmm0, %zmm0\n",
                      "\tvmulps\t%zmm0, %zmm0, %zmm0\n" * 9)
    ins = kb.shortest_region(kb.parse_function(asm, "kb_t"), "t")
    expect(len(ins) == 10 and ins[4].startswith("vaddps") and
           ins[-2] == "jmp\t.L6" and "vmulps\t%zmm0, %zmm0, %zmm0"
           not in ins, f"path {ins}")


@case("a region without its end, a jump to an unknown label, a missing "
      "function: ValueError")
def _bad():
    for asm, fn, what in (
            (ASM.replace("\t# LLVM-MCA-END t\n", ""), "kb_t", "no path"),
            (ASM.replace("jc\t.L5", "jc\t.L99"), "kb_t", "unknown label"),
            (ASM, "kb_u", "not found"),
            (ASM, "kb_t", "no LLVM-MCA-BEGIN")):
        try:
            kb.shortest_region(kb.parse_function(asm, fn),
                               "u" if what.startswith("no LLVM") else "t")
        except ValueError as e:
            expect(what in str(e), f"{what}: got '{e}'")
        else:
            raise AssertionError(f"{what}: no error")


@case("ret ends a path: a region left only by ret has no path")
def _ret():
    asm = ASM.replace("\tjc\t.L5\n", "\tret\n").replace(
        "\tjmp\t.L6\n", "\tret\n")
    try:
        kb.shortest_region(kb.parse_function(asm, "kb_t"), "t")
    except ValueError as e:
        expect("no path" in str(e), str(e))
    else:
        raise AssertionError("a path through ret")


def write(name, doc):
    p = os.path.join(TMP, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return p


@case("merge keeps hand-stated entries and other models' entries, "
      "replaces those of the same row and model")
def _merge():
    p = write("b.json", {"schema": kb.SCHEMA, "about": "x", "bounds": [
        {"impl": "rand_normal_f32_avx512", "cycles_per_element": 3.16,
         "derivation": "by hand"},
        {"impl": "exp_f32_avx512", "mcpu": "icelake-server",
         "cycles_per_element": 9.0, "derivation": "old"},
        {"impl": "exp_f32_avx512", "mcpu": "znver4",
         "cycles_per_element": 7.0, "derivation": "other model"}]})
    new = [{"impl": "exp_f32_avx512", "mcpu": "icelake-server",
            "cycles_per_element": 0.5, "derivation": "mca"},
           {"impl": "log_f32_avx512", "mcpu": "icelake-server",
            "cycles_per_element": 0.9, "derivation": "mca"}]
    doc = kb.merge(p, new)
    got = [(e["impl"], e.get("mcpu"), e["cycles_per_element"])
           for e in doc["bounds"]]
    expect(got == [("rand_normal_f32_avx512", None, 3.16),
                   ("exp_f32_avx512", "znver4", 7.0),
                   ("exp_f32_avx512", "icelake-server", 0.5),
                   ("log_f32_avx512", "icelake-server", 0.9)],
           f"merged {got}")
    expect(doc["about"] == "x", "about lost")


@case("a bad bounds file or build: one line naming it, exit 2")
def _bad_files():
    cases = [
        (["-o", write("nj.json", "{")], "nj.json: not JSON"),
        (["-o", write("ns.json", {"schema": "x", "bounds": []})],
         "not a compute bounds file"),
        (["-o", os.path.join(TMP, "absent.json")], "cannot read"),
        (["--build", os.path.join(TMP, "nobuild"), "--print"],
         "compile_commands.json: cannot read"),
    ]
    write("compile_commands.json", "[]")
    cases.append((["--build", TMP, "--print"],
                  "no compile command for vmath_avx512.c"))
    for args, want in cases:
        if args[0] == "-o":
            args = ["--build", "/nonexistent"] + args
        r = subprocess.run([sys.executable, SCRIPT, *args],
                           capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        expect(r.returncode == 2 and len(lines) == 1 and want in lines[0],
               f"{args}: rc {r.returncode}, stderr {r.stderr!r}")


def derivable():
    if kb.find_tool("icelake-server") is None:
        return "SKIP llvm-mca is not installed"
    try:
        with open(os.path.join(BUILD, "compile_commands.json")) as f:
            cmds = json.load(f)
    except (OSError, ValueError):
        return "SKIP no compile_commands.json in the build"
    names = {os.path.basename(c.get("file", "")) for c in cmds}
    if not {"vmath_avx512.c", "vmath_avx2.c", "f64_avx512.c",
            "f64_avx2.c"} <= names:
        return "SKIP the build has no SIMD sources"
    return None


def half_rows():
    """kernel_bounds_half.c's regions, ROW_DTYPE_LEVEL: each op of its
    five lists (KB_*_OPS) for each dtype at each level
    kernel_bounds.py's HALF_LEVELS gives it."""
    with open("scripts/kernel_bounds_half.c", encoding="utf-8") as f:
        src = f.read()
    ops = set()
    # each list's #define and its continued lines
    lists = re.findall(r"#define KB_\w+_OPS\(X, DT\)((?:.*\\\n)*.*)", src)
    expect(len(lists) == 5, f"kernel_bounds_half.c: {len(lists)} op lists")
    for body in lists:
        ops |= set(re.findall(r"X\((\w+),", body))
    # KB_POW: pow's regions at the 16-lane levels only (avx2's pow loop
    # is the f32 row's on widened chunks)
    pow16 = {kb.impl_name(f"pow_{dt}", None, lv)
             for lv, dts in kb.HALF_LEVELS.items() if lv != "avx2"
             for dt in dts} if "KB_POW(bf16)" in src else set()
    # KB_NORM: layer_norm's and rms_norm's bf16 step at avx512bf16 only
    norm = {f"{op}_bf16_avx512bf16" for op in ("layer_norm", "rms_norm")} \
        if "KB_NORM(bf16)" in src else set()
    # KB_LSM16: softmax's and log_softmax's step at every level and dtype
    lsm16 = {kb.impl_name(f"{op}_{dt}", None, lv)
             for op in ("softmax", "log_softmax")
             for lv, dts in kb.HALF_LEVELS.items() for dt in dts} \
        if "KB_LSM16(softmax, 1, bf16" in src else set()
    # KB_LSMBW16: log_softmax_backward's step at every level and dtype
    lsmbw16 = {kb.impl_name(f"log_softmax_backward_{dt}", None, lv)
               for lv, dts in kb.HALF_LEVELS.items() for dt in dts} \
        if "KB_LSMBW16(bf16)" in src else set()
    # KB_BWBIN: mul_backward's and div_backward's bf16 step (f16 runs
    # the avx2 loop at the AVX-512 levels)
    bwbin = {kb.impl_name(f"{op}_bf16", None, lv)
             for op in ("mul_backward", "div_backward")
             for lv, dts in kb.HALF_LEVELS.items() if "bf16" in dts} \
        if "KB_BWBIN(mul_backward, HB_MUL, bf16)" in src else set()
    # KB_NBW2: layer_norm_backward's and rms_norm_backward's passes, f32
    # and bf16 at avx512 (KB_NB_ON_<DT>: f16's loops are not priced)
    nbw = {f"{op}_backward_{dt}_avx512" for op in ("layer_norm", "rms_norm")
           for dt in ("f32", "bf16")} if "KB_NBW2(f32, 4)" in src else set()
    return ({kb.impl_name(f"{op}_{dt}", None, lv)
             for op in ops for lv, dts in kb.HALF_LEVELS.items()
             for dt in dts} | pow16 | norm | lsm16 | lsmbw16 | bwbin |
            nbw) - kb.HALF_LEFT_OUT


def loop_rows():
    """Every row the four loop files state, as ROW_DTYPE_LEVEL."""
    out = set()
    for path, dtype in (("scripts/kernel_bounds.c", "f32"),
                        ("scripts/kernel_bounds_f64.c", "f64")):
        with open(path, encoding="utf-8") as f:
            src = f.read()
        rows = set(re.findall(r"^KB_(?:N?UNARY|BINARY|BWD|LSM)\((\w+),", src,
                              re.M)) | \
            set(re.findall(r"KB_BEGIN\((\w+)\);", src))
        rows.discard("ROW")  # the loop macros' own KB_BEGIN(ROW)
        for src_name, _, levels in kb.SOURCES:
            if os.path.basename(src_name) == os.path.basename(path):
                out |= {kb.impl_name(x, dtype, lv)
                        for x in rows for lv in levels}
    return out | half_rows() | rand_rows()


def rand_rows():
    """kernel_bounds_rand.c's regions (their names carry the dtype) at
    each of its levels."""
    with open("scripts/kernel_bounds_rand.c", encoding="utf-8") as f:
        src = f.read()
    rows = set(re.findall(r"^KB_(?:UNIFORM|NORMAL)\((\w+),", src, re.M)) | \
        set(re.findall(r"KB_BEGIN\((\w+)\);", src))
    rows.discard("ROW")
    expect("rand_uniform_bf16" in rows and "dropout_f64" in rows,
           f"kernel_bounds_rand.c: rows {sorted(rows)}")
    for src_name, _, levels in kb.SOURCES:
        if os.path.basename(src_name) == "kernel_bounds_rand.c":
            return {kb.impl_name(x, None, lv) for x in rows for lv in levels}
    expect(False, "kernel_bounds.py: no kernel_bounds_rand.c source")
    return set()


@case("every loop at both levels gets a bound for each model an llvm-mca "
      "here has; the committed file states each within 15% of this "
      "build's")
def _derive():
    why = derivable()
    if why:
        return why
    want = loop_rows()
    expect(any(x.endswith("_f64_avx512") for x in want) and
           any(x.endswith("_f32_avx2") for x in want) and
           "exp_bf16_avx512bf16" in want and "exp_f16_avx512" in want and
           "add_f16_avx512bf16" not in want, f"rows {want}")
    with open(BOUNDS, encoding="utf-8") as f:
        stated = {(e["impl"], e.get("mcpu")): e
                  for e in json.load(f)["bounds"]}
    # an unoptimized or sanitized build's code says nothing of the
    # release build's: only the shape of its figures is checked
    _, flags = kb.level_flags(BUILD, "vmath_avx512.c")
    optimized = any(f in ("-O2", "-O3") for f in flags) and \
        not any(f.startswith("-fsanitize") for f in flags)
    # the normalization gradients' passes (a region per pass, one entry
    # the sum) loop over a quad's rows inside the step, unrolled at -O3
    # only: at -O2 the shortest mark-to-mark path takes one row
    # (layer_norm_backward bf16 at avx512: 37 instructions in pass 1
    # against the release build's 67, 0.4 cycles/elem against 0.5734,
    # 2026-12-01), so they are compared on a release (-O3) build only
    release = optimized and "-O3" in flags
    skipped = []
    for model in ("icelake-server", "znver4"):
        if kb.find_tool(model) is None:
            skipped.append(model)  # znver4 needs llvm-mca-19 (llvm-19)
            continue
        r = subprocess.run([sys.executable, SCRIPT, "--build", BUILD,
                            "--mcpu", model, "--print"],
                           capture_output=True, text=True)
        expect(r.returncode == 0, f"{model}: rc {r.returncode}: {r.stderr}")
        got = {e["impl"]: e for e in json.loads(r.stdout)}
        # the rows stated by hand on this model are not derived
        want_m = want - {i for i, m in kb.HAND_STATED if m == model}
        expect(set(got) == want_m,
               f"{model}: rows {sorted(set(got) ^ want_m)}")
        for impl, e in sorted(got.items()):
            c = e["cycles_per_element"]
            expect(c > 0 and "llvm-mca" in e["derivation"] and
                   e["mcpu"] == model and f"-mcpu={model}" in
                   e["derivation"], f"{impl}: {e}")
            if not optimized or ("passes" in e["derivation"] and
                                 not release):
                continue
            expect((impl, model) in stated, f"{impl} ({model}): not in "
                   f"{BOUNDS} (run scripts/kernel_bounds.py --mcpu {model} "
                   "on the release build)")
            s = stated[(impl, model)]["cycles_per_element"]
            expect(abs(s - c) <= 0.15 * c, f"{impl} ({model}): stated {s} "
                   f"cycles/elem, this build's step gives {c}: the kernel "
                   f"changed; run scripts/kernel_bounds.py --mcpu {model} "
                   "on the release build")
    if len(skipped) == 2:
        return "SKIP no llvm-mca here has either model"
    for model in skipped:
        print(f"# {model}: no llvm-mca here has it (Debian 12: llvm-19); "
              "its entries were not checked")


@case("every row stated by hand has its entry, from a measurement")
def _hand_stated():
    with open(BOUNDS, encoding="utf-8") as f:
        stated = {(e["impl"], e.get("mcpu")): e
                  for e in json.load(f)["bounds"]}
    for impl, model in sorted(kb.HAND_STATED):
        e = stated.get((impl, model))
        expect(e is not None, f"{impl} ({model}): no entry in {BOUNDS}")
        if e is None:
            continue
        d = e["derivation"]
        expect(d.startswith("measured") and
               re.search(r"scripts/\w+_tp\.c", d) is not None and
               e["cycles_per_element"] > 0,
               f"{impl} ({model}): not stated from a measurement: {d}")
    # a row measured by its own loop in L1 (mix_tp_rows.py) cites its
    # figure: the entry is that figure
    cited = 0
    for (impl, model), e in sorted(stated.items()):
        m = re.search(r"L1-resident buffers of \d+ elements, ([\d.]+) "
                      r"cycles an element", e["derivation"])
        if m:
            cited += 1
            expect(abs(float(m.group(1)) - e["cycles_per_element"]) <=
                   0.0005, f"{impl} ({model}): entry "
                   f"{e['cycles_per_element']}, cites {m.group(1)}")
    expect(cited >= 17, f"{cited} entries cite an L1 figure")


@case("find_tool: a model no llvm-mca has gives None")
def _find_tool():
    expect(kb.find_tool("no-such-cpu-model") is None, "found one")


sys.exit(run_cases(lambda failed: shutil.rmtree(TMP, ignore_errors=True)))
