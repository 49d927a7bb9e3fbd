#!/usr/bin/python3
"""Summarise a run of configs/training.json (issue 14).

Usage:
    /usr/bin/python3 scripts/training_summary.py RESULTS.json [TORCH.json]
                                                [--stat median|p5|min]

Prints, per backend, from the medians of the run: forward and backward
time of the MLP at batch 128 with each hook setting, the hook overhead in
percent and in ns per hook call (6 forward and 6 backward hook calls per
MLP step: one per op on the tape); api_add's per-call time at each layer
and each layer's cost over the raw kernel in ns and percent; MLP and CNN
training and inference steps/s and samples/s by batch; the pool's effect
(time, and backend allocations and bytes per step from the counters).
TORCH.json (scripts/compare_torch_training.py -o, a result file in
tbench's schema) adds PyTorch's figures for the same cases.  --stat picks tbench's statistic (default median; on
a machine shared with other jobs, whose time slices add whole ~4 ms
quanta to many samples, p5 or min is closer to the work itself).
"""
import json
import re
import sys

HOOK_CALLS = {1: (6, 0), 2: (0, 6), 3: (6, 6)}  # (fwd, bwd) per MLP step


def load(path):
    with open(path) as f:
        return json.load(f)


def key(case_id):
    return re.sub(r"/(cpu|blas|torch)\[.*\]$", "", case_id)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--stat")]
    stat = "median"
    for i, a in enumerate(sys.argv):
        if a == "--stat" and i + 1 < len(sys.argv):
            stat = sys.argv[i + 1]
            args.remove(stat)
    run = load(args[0])
    torch = {}
    if len(args) > 1:
        for c in load(args[1])["cases"]:
            if c.get("status") == "ok":
                torch[key(c["id"])] = c["stats"][f"{stat}_ns"]
    by_be = {}
    for c in run["cases"]:
        if c["status"] != "ok":
            print(f"# {c['id']}: {c['status']} {c.get('message') or ''}")
            continue
        by_be.setdefault(c["backend"], {})[key(c["id"])] = c
    for be, cs in by_be.items():
        med = {k: c["stats"][f"{stat}_ns"] for k, c in cs.items()}
        print(f"# statistic: {stat}")
        print(f"\n== backend {be} ==")
        print(f"-- hooks: MLP 784-256-128-10, batch 128 ({stat}) --")
        base = "mlp_train_step[phase={},hooks={},lr=0.01,momentum=0.9,pool=0]" \
               "/128x784/f32"
        f0 = med.get(base.format(0, 0))
        fb0 = med.get(base.format(1, 0))
        if f0 and fb0:
            print(f"forward {f0 / 1e6:.3f} ms, backward {(fb0 - f0) / 1e6:.3f}"
                  f" ms, forward+backward {fb0 / 1e6:.3f} ms")
        for ph, hk in ((0, 1), (1, 1), (1, 2), (1, 3)):
            t, t0 = med.get(base.format(ph, hk)), med.get(base.format(ph, 0))
            if not (t and t0):
                continue
            nf, nb = HOOK_CALLS[hk]
            calls = nf + (nb if ph == 1 else 0)
            what = "forward" if ph == 0 else "forward+backward"
            print(f"{what:17s} hooks={hk}: {t / 1e6:.3f} ms, "
                  f"{100 * (t - t0) / t0:+.2f}%, "
                  f"{(t - t0) / calls:+.0f} ns per hook call ({calls} calls)")
        print(f"-- API layers: add ({stat} ns per call; cost over layer 0) --")
        for n in (16, 1048576):
            raw = med.get(f"api_add[layer=0,pool=0]/{n},{n}/f32")
            for layer in range(4):
                t = med.get(f"api_add[layer={layer},pool=0]/{n},{n}/f32")
                if t is None or raw is None:
                    continue
                tt = torch.get(f"api_add[layer={layer},pool=0]/{n},{n}/f32")
                tq = f"   torch {tt:.0f} ns" if tt else ""
                print(f"n={n:8d} layer {layer}: {t:12.0f} ns  "
                      f"{t - raw:+10.0f} ns  {100 * (t - raw) / raw:+7.1f}%"
                      f"{tq}")
        print("-- step rates (steps/s, samples/s; torch alongside) --")
        for kind in ("mlp", "cnn"):
            for mode in ("train", "infer"):
                for B in (1, 8, 32, 128, 512):
                    shape = f"{B}x784" if kind == "mlp" else f"{B}x1x28x28"
                    prm = "[phase=2,hooks=0,lr=0.01,momentum=0.9,pool=0]" \
                        if mode == "train" else "[hooks=0,pool=0]"
                    tprm = prm
                    k = f"{kind}_{mode}_step{prm}/{shape}/f32"
                    t = med.get(k)
                    if t is None:
                        continue
                    c = cs[k]["counters"] if "counters" in cs[k] else {}
                    tt = torch.get(f"{kind}_{mode}_step{tprm}/{shape}/f32")
                    tq = (f"  torch {1e9 / tt:9.1f} steps/s "
                          f"{B * 1e9 / tt:9.0f} samples/s") if tt else ""
                    print(f"{kind} {mode:5s} B={B:3d}: {1e9 / t:9.1f} steps/s"
                          f" {B * 1e9 / t:9.0f} samples/s  "
                          f"allocs/step {c.get('device_allocs', 0):.0f} "
                          f"({c.get('device_alloc_bytes', 0) / 1e6:.2f} MB)"
                          f"{tq}")
        print(f"-- pool ({stat}; backend allocations per step) --")
        for off, on in (
                ("mlp_train_step[phase=2,hooks=0,lr=0.01,momentum=0.9,"
                 "pool=0]/{}/f32", "mlp_train_step[phase=2,hooks=0,lr=0.01,"
                 "momentum=0.9,pool=1]/{}/f32"),):
            for shape in ("32x784", "128x784"):
                a, b = cs.get(off.format(shape)), cs.get(on.format(shape))
                if a and b:
                    pr(shape, "mlp train", a, b, stat)
        a = cs.get("cnn_train_step[phase=2,hooks=0,lr=0.01,momentum=0.9,"
                   "pool=0]/32x1x28x28/f32")
        b = cs.get("cnn_train_step[phase=2,hooks=0,lr=0.01,momentum=0.9,"
                   "pool=1]/32x1x28x28/f32")
        if a and b:
            pr("32x1x28x28", "cnn train", a, b, stat)
        a = cs.get("api_add[layer=2,pool=0]/16,16/f32")
        b = cs.get("api_add[layer=2,pool=1]/16,16/f32")
        if a and b:
            pr("16", "api_add layer 2", a, b, stat)


def pr(shape, what, a, b, stat):
    ta, tb = a["stats"][f"{stat}_ns"], b["stats"][f"{stat}_ns"]
    ca, cb = a.get("counters", {}), b.get("counters", {})
    print(f"{what} {shape}: off {ta / 1e3:.1f} us, on {tb / 1e3:.1f} us "
          f"({ta / tb:.2f}x); backend allocs/step {ca.get('device_allocs', 0):.1f}"
          f" -> {cb.get('device_allocs', 0):.1f}, bytes/step "
          f"{ca.get('device_alloc_bytes', 0) / 1e3:.0f} kB -> "
          f"{cb.get('device_alloc_bytes', 0) / 1e3:.0f} kB; tracked allocs/step "
          f"{ca.get('allocs', 0):.1f} -> {cb.get('allocs', 0):.1f}; peak "
          f"{ca.get('peak_bytes', 0) / 1e6:.2f} -> "
          f"{cb.get('peak_bytes', 0) / 1e6:.2f} MB")


main()
