#!/bin/sh
# Stronger yardsticks (issue "Every op ahead of the strongest peers", item
# 2): a Python virtual environment with the newest NumPy and PyTorch from
# PyPI and Intel oneMKL's runtime (PyPI's `mkl` wheel), beside Debian's
# python3-numpy/python3-torch that /usr/bin/python3 has.
#
#   sh scripts/peers.sh [-d DIR] [-r]       (default DIR: .peers)
#     -d DIR   where the environment goes (ignored by git as .peers)
#     -r       remove DIR first (a fresh install of the newest releases)
#
# Installs with pip from PyPI (about 3.5 GB: PyPI's Linux torch wheel
# brings NVIDIA's CUDA libraries; tbench uses it on the CPU only), then
# writes DIR/peers.json: Python's, NumPy's, PyTorch's and MKL's versions,
# the BLAS each uses (NumPy's build dependencies and the library mapped
# after a matmul; PyTorch's BLAS_INFO and its MKL and oneDNN versions),
# and the path of libmkl_rt.  It then prints how to use them:
#
#   DIR/bin/python scripts/compare_numpy.py CONFIG -o pypi.json --label pypi
#       (backends numpy-pypi and torch-pypi, next to Debian's numpy and
#       torch from /usr/bin/python3 scripts/compare_numpy.py CONFIG ...)
#   TBENCH_MKL_RT=... tbench run CONFIG --plugin mkl.so
#       (examples/plugins/mkl: MKL's cblas_?gemm as a backend)
#
# Needs python3-venv (scripts/setup.sh --tests) and the network (PyPI).
set -eu
cd "$(dirname "$0")/.."
DIR=.peers
FRESH=0
while [ $# -gt 0 ]; do
    case $1 in
    -d) [ $# -ge 2 ] || { echo "peers.sh: -d needs a folder" >&2; exit 2; }
        DIR=$2; shift 2 ;;
    -r) FRESH=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
               exit 0 ;;
    *) echo "peers.sh: unknown argument '$1' (-d DIR, -r)" >&2; exit 2 ;;
    esac
done
[ "$FRESH" -eq 0 ] || rm -rf "$DIR"
if [ ! -x "$DIR/bin/python" ]; then
    /usr/bin/python3 -m venv "$DIR" || {
        echo "peers.sh: python3 -m venv failed (package python3-venv:" \
             "sh scripts/setup.sh --tests)" >&2; exit 2; }
fi
"$DIR/bin/python" -m pip install -q --upgrade pip
"$DIR/bin/python" -m pip install -q --upgrade numpy torch mkl
"$DIR/bin/python" - "$DIR" <<'PY'
import glob, json, os, platform, re, sys, time
from importlib.metadata import version
import numpy as np
import torch
d = sys.argv[1]
np.ones((64, 64)) @ np.ones((64, 64))
torch.ones(64, 64) @ torch.ones(64, 64)
maps = open("/proc/self/maps").read().split("\n")
libs = sorted({l.split()[-1] for l in maps if l.split() and
               re.search(r"(blas|lapack|mkl|dnnl)",
                         os.path.basename(l.split()[-1]))})
try:
    cfg = np.show_config(mode="dicts")
    npblas = cfg["Build Dependencies"]["blas"]
except Exception as e:  # noqa: BLE001
    npblas = {"error": str(e)}
tcfg = torch.__config__.show()
def grab(pat):
    m = re.search(pat, tcfg)
    return m.group(1).strip() if m else None
rt = sorted(glob.glob(os.path.join(d, "lib", "libmkl_rt.so.*")))
doc = {
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "python": platform.python_version(),
    "numpy": {"version": np.__version__, "blas": npblas},
    "torch": {"version": torch.__version__,
              "blas_info": grab(r"BLAS_INFO=([^,\n]+)"),
              "mkl": grab(r"(Intel\(R\) (?:oneAPI )?Math Kernel Library[^\n]*)"),
              "onednn": grab(r"(Intel\(R\) MKL-DNN[^\n]*|oneDNN[^\n]*)"),
              "cpu_capability": torch.backends.cpu.get_cpu_capability()},
    "mkl": {"rt": os.path.abspath(rt[-1]) if rt else None,
            "version": version("mkl")},
    "libraries_mapped": libs,
}
with open(os.path.join(d, "peers.json"), "w") as f:
    json.dump(doc, f, indent=1)
print(json.dumps(doc, indent=1))
PY
RT=$("$DIR/bin/python" -c "import json,sys; print(json.load(open(sys.argv[1]))['mkl']['rt'] or '')" "$DIR/peers.json")
cat <<MSG
peers.sh: $DIR/peers.json written.  Use:
  $DIR/bin/python scripts/compare_numpy.py CONFIG -o pypi.json --label pypi
  make -C examples/plugins/mkl OUT=\$PWD/build PLUGIN_CFLAGS=-I\$PWD/include
  TBENCH_MKL_RT=$RT build/tbench run CONFIG --plugin build/mkl.so
MSG
