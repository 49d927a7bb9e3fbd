#!/usr/bin/python3
"""Write tests/data/ab/wilcoxon.json: vectors and SciPy's two-sided
scipy.stats.wilcoxon p values for tests/test_abstats.c.

Needs SciPy (Debian python3-scipy; made with 1.10.1).  Run from the
repository root:  /usr/bin/python3 tests/data/ab/gen_wilcoxon.py

Each vector is one kind of input the A/B statistics meet: log ratios of
block medians.  SciPy's defaults are used (zero_method "wilcox", no
continuity correction), with method "auto" (exact up to 50 values when
there is no zero, else the normal approximation) except for vectors with
tied |d|, where tbench uses the normal approximation with the tie
correction and SciPy is asked for method "approx" (its exact method
truncates the half ranks of ties).
"""
import json
import warnings

import numpy as np
from scipy import stats

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261125)
out = []


def add(name, d, method="auto"):
    d = [float(x) for x in d]
    r = stats.wilcoxon(d, method=method)
    nz = [x for x in d if x != 0]
    rp = float(sum(stats.rankdata(np.abs(nz))[np.array(nz) > 0])) if nz else 0.0
    out.append({"name": name, "d": d, "method": method,
                "p": float(r.pvalue), "w_plus": rp, "n": len(nz)})


for n in (6, 8, 10, 12, 15, 20, 30, 50):
    add("exact null n=%d" % n, rng.normal(0, 0.01, n))
    add("exact shift n=%d" % n, rng.normal(0.01, 0.01, n))
add("exact all positive n=12", np.abs(rng.normal(0.02, 0.01, 12)) + 1e-6)
add("exact all negative n=7", -np.abs(rng.normal(0.02, 0.01, 7)) - 1e-6)
for n in (51, 64, 200):
    add("approx n=%d" % n, rng.normal(0.002, 0.01, n))
add("approx with zeros", np.concatenate([rng.normal(0.005, 0.01, 20),
                                         np.zeros(3)]))
ties = np.round(rng.normal(0.003, 0.01, 25), 3)
add("approx ties", ties, method="approx")
add("approx ties and zeros", np.concatenate([ties, [0.0, 0.0]]),
    method="approx")
add("approx many ties", [0.01, -0.01, 0.01, 0.02, 0.02, -0.02, 0.01, 0.03,
                         0.01, -0.01, 0.02, 0.01], method="approx")
json.dump({"scipy": __import__("scipy").__version__, "vectors": out},
          open("tests/data/ab/wilcoxon.json", "w"), indent=1)
