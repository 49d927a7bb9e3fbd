#!/usr/bin/python3
"""Tests of the CUDA module that need no GPU, printed as TAP.

Usage: test_cuda_module.py TBENCH MODULE "ARCHS" CUDA_SRC_DIR
  ARCHS: what meson built for, e.g. "sm_75 sm_80 compute_80"
(run from the repository root)

- The module exists and `readelf -SW` shows its .nv_fatbin section.
- The fatbin holds, for every .cu file of the module, one ELF cubin per
  requested sm_XX (checked in the cubin's own ELF header too) and the
  PTX of the newest: parsed from the section bytes, so a missing
  architecture fails the test.
- `ldd` shows no libcuda (the driver) and no dynamic libcudart.
- On a machine without a CUDA driver, `tbench list --json` and
  `tbench run` (backends cpu and cuda) exit 0 and report cuda
  unavailable with the cudart reason; results record the archs.
- The module's create slot (through ctypes) refuses bad `device` and
  `pool` and `tf32` axis values with a one-line message before touching
  CUDA.
"""
import ctypes
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
MODULE = os.path.abspath(sys.argv[2])
ARCHS = sys.argv[3].split()
CUDA_SRC = sys.argv[4]
TMP = tempfile.mkdtemp(prefix="tbench-cuda-")

SM = sorted(int(a[3:]) for a in ARCHS if a.startswith("sm_"))
PTX = sorted(int(a[8:]) for a in ARCHS if a.startswith("compute_"))


def _no_driver():
    """True when libcuda.so.1 cannot be loaded, as cudart loads it."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return False
    except OSError:
        return True


NO_DRIVER = _no_driver()
NO_DRIVER_REASON = ("no CUDA driver: cudaGetDeviceCount: CUDA driver "
                    "version is insufficient for CUDA runtime version "
                    "(error 35)")

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
EM_CUDA = 190


def fatbin_section():
    """(file offset, size) of .nv_fatbin from readelf -SW."""
    p = subprocess.run(["readelf", "-SW", MODULE], capture_output=True,
                       text=True, check=True)
    for line in p.stdout.splitlines():
        if " .nv_fatbin " in line + " ":
            f = line.split("]", 1)[1].split()
            # name type address offset size ...
            return int(f[3], 16), int(f[4], 16)
    return None


def fatbins(data):
    """Each fatbin of the section: a list of (kind, arch, payload)."""
    out, p = [], 0
    while p + 16 <= len(data):
        magic, _ver, hsize, fsize = struct.unpack_from("<IHHQ", data, p)
        if magic != FATBIN_MAGIC:
            break
        entries, q, end = [], p + hsize, p + hsize + fsize
        while q < end:
            kind, _x, ehs, psize = struct.unpack_from("<HHIQ", data, q)
            arch = struct.unpack_from("<I", data, q + 28)[0]
            entries.append((kind, arch, data[q + ehs:q + ehs + psize]))
            q += ehs + psize
        out.append(entries)
        p = (end + 7) & ~7
    return out


@case("the module is built and readelf shows its .nv_fatbin section")
def t_fatbin_section():
    expect(os.path.isfile(MODULE), f"{MODULE} missing")
    expect(fatbin_section() is not None, "no .nv_fatbin section")


@case("every .cu file has one cubin per requested sm_XX and the newest PTX")
def t_archs():
    off, size = fatbin_section()
    with open(MODULE, "rb") as f:
        f.seek(off)
        data = f.read(size)
    bins = fatbins(data)
    expect(bins, "no fatbin in .nv_fatbin")
    n_cu = len(glob.glob(os.path.join(CUDA_SRC, "*.cu")))
    full = 0
    for entries in bins:
        elf = sorted(a for k, a, _ in entries if k == KIND_ELF)
        ptx = sorted(a for k, a, _ in entries if k == KIND_PTX)
        for k, a, payload in entries:
            if k == KIND_ELF and payload[:4] == b"\x7fELF":
                machine = struct.unpack_from("<H", payload, 18)[0]
                flags = struct.unpack_from("<I", payload, 48)[0]
                expect(machine == EM_CUDA and (flags >> 8) & 0xff == a,
                       f"cubin for sm_{a}: e_machine {machine}, "
                       f"e_flags {flags:#x}")
        if elf == SM and ptx == PTX[-1:]:
            full += 1
    expect(full >= n_cu,
           f"{full} fatbins with cubins for {SM} and PTX {PTX[-1:]}; "
           f"expected one per .cu file ({n_cu}); found "
           + "; ".join(str(sorted((k, a) for k, a, _ in e)) for e in bins))


@case("ldd: no libcuda (the driver), no dynamic libcudart, no libcupti")
def t_ldd():
    p = subprocess.run(["ldd", MODULE], capture_output=True, text=True)
    expect(p.returncode == 0, p.stderr)
    expect("libcuda.so" not in p.stdout, p.stdout)
    expect("libcudart" not in p.stdout, p.stdout)
    # CUPTI is dlopen'ed by the counting pass, never linked
    expect("libcupti" not in p.stdout, p.stdout)


@case("list --json: cuda unavailable with the cudart reason, archs in doc")
def t_list():
    p = subprocess.run([TBENCH, "list", "--json"], capture_output=True,
                       text=True)
    expect(p.returncode == 0, p.stderr)
    cuda = {b["name"]: b for b in json.loads(p.stdout)["backends"]}["cuda"]
    expect(" ".join(ARCHS) in cuda["doc"], cuda["doc"])
    if not NO_DRIVER:
        expect(cuda["available"] or "cudaGetDeviceCount" in cuda["reason"],
               cuda["reason"])
        return "SKIP a CUDA driver is installed here"
    expect(not cuda["available"], "cuda available without a driver")
    expect(cuda["reason"] == NO_DRIVER_REASON, cuda["reason"])
    p = subprocess.run([TBENCH, "list"], capture_output=True, text=True)
    expect(p.returncode == 0 and "unavailable: " + NO_DRIVER_REASON
           in p.stdout, p.stdout)
    return None


@case("run cpu+cuda: exit 0, cuda cases unavailable with the reason")
def t_run():
    if not NO_DRIVER:
        return "SKIP a CUDA driver is installed here"
    cfg = os.path.join(TMP, "tiny.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write("""{
  "name": "cuda-tiny",
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.2, "min_samples": 3, "max_samples": 5,
              "max_time_s": 0.05},
  "dtypes": ["f32", "f64"],
  "backends": ["cpu", "cuda"],
  "ops": [{"op": "add", "shapes": [[[7, 1], [1, 13]]]},
          {"op": "log_softmax", "shapes": [[4, 10]]}]
}
""")
    out = os.path.join(TMP, "run")
    p = subprocess.run([TBENCH, "run", cfg, "-o", out, "-q"],
                       capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"),
                         encoding="utf-8"))
    cases = doc["cases"]
    cuda = [c for c in cases if c["backend"] == "cuda"]
    cpu = [c for c in cases if c["backend"] == "cpu"]
    expect(len(cuda) == 4 and len(cpu) == 4, f"{len(cases)} cases")
    for c in cuda:
        expect(c["status"] == "unavailable", c["status"])
        expect(NO_DRIVER_REASON in json.dumps(c), json.dumps(c)[:400])
        # never counted: null with the reason, never zero counts
        expect(c["cupti"] is None and
               c["cupti_reason"] == "not counted: the case is unavailable",
               f"{c['id']}: cupti {c.get('cupti')} {c.get('cupti_reason')}")
    for c in cpu:
        expect(c["status"] == "ok", c["status"])
        expect(c["cupti"] is None and c["cupti_reason"] ==
               "backend cpu counts no device activity",
               f"{c['id']}: cupti {c.get('cupti')} {c.get('cupti_reason')}")
    expect(doc["env"]["build"]["gpu_archs"] == " ".join(ARCHS),
           str(doc["env"]["build"].get("gpu_archs")))


# src/base/error.h: TB_E__BASE = -1000, then NOMEM, INVAL, SHAPE, DTYPE,
# PARAM, UNSUPPORTED, UNAVAILABLE
TB_EPARAM, TB_EUNAVAILABLE = -995, -993


@case("create: axis values device, pool and tf32 checked before CUDA is "
      "touched")
def t_create_axes():
    """The module's create slot called in this process through ctypes: a
    bad `pool`, `device` or `tf32` value is refused with a one-line message
    before any cudart call; good values reach cudaSetDevice, which fails
    here without a driver (TB_EUNAVAILABLE and cudart's reason)."""
    if not NO_DRIVER:
        return "SKIP a CUDA driver is installed here"
    lib = ctypes.CDLL(MODULE)
    lib.tb_module_backend_3.restype = ctypes.c_void_p
    be = lib.tb_module_backend_3()
    expect(be, "tb_module_backend_3 returned NULL")
    # struct tb_backend: name, doc, data, probe, axes, create, ...
    # (backend.h); create(self, values, ctx, err, errlen)
    slots = (ctypes.c_void_p * 6).from_address(be)
    create = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_char_p),
                              ctypes.POINTER(ctypes.c_void_p),
                              ctypes.c_char_p, ctypes.c_size_t)(slots[5])

    def call(dev, pool, tf32="off"):
        # axis 2, l2, is read only after the device
        vals = (dev, pool, "warm", tf32)
        arr = (ctypes.c_char_p * 4)(*[v.encode() for v in vals])
        ctx = ctypes.c_void_p(1)
        err = ctypes.create_string_buffer(256)
        rc = create(be, arr, ctypes.byref(ctx), err, 256)
        return rc, err.value.decode(), ctx.value

    for bad in ("maybe", "1", "True", ""):
        rc, msg, ctx = call("0", bad)
        expect(rc == TB_EPARAM and ctx is None, f"pool={bad!r}: {rc} {ctx}")
        expect(msg == f'cuda: pool="{bad}": expected false or true', msg)
    for bad in ("true", "tf32", ""):
        rc, msg, ctx = call("0", "false", bad)
        expect(rc == TB_EPARAM and ctx is None, f"tf32={bad!r}: {rc} {ctx}")
        expect(msg == f'cuda: tf32="{bad}": expected off or on', msg)
    rc, msg, _ = call("x", "false")
    expect(rc == TB_EPARAM and msg == 'cuda: device="x": expected a device '
           'index', f"{rc} {msg}")
    for good in ("false", "true"):
        rc, msg, ctx = call("0", good, "on" if good == "true" else "off")
        expect(rc == TB_EUNAVAILABLE and ctx is None, f"pool={good}: {rc}")
        expect(msg.startswith("cuda: cudaSetDevice: ") and
               "(error 35)" in msg, msg)
    return None


sys.exit(run_cases())
