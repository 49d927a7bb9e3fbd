#!/usr/bin/python3
"""The peers of f64act3-cache.json in cache, 65536 f64, one thread: the
fastest of 400 calls (run by /usr/bin/python3 and /work/peers-try/bin/python)."""
import sys, time, numpy as np, torch
torch.set_num_threads(1)
n = 65536
rng = np.random.default_rng(1)
a = rng.uniform(0.1, 2, n); b = rng.uniform(-2, 2, n); x = rng.uniform(-8, 8, n)
g = rng.uniform(-1, 1, (64, 1024)); y = np.log(rng.uniform(0.01, 1, (64, 1024)))
ta, tb, tx, tg, ty = (torch.from_numpy(v) for v in (a, b, x, g, y))
o = np.empty(n); to = torch.empty(n, dtype=torch.float64)
def best(f, reps=400):
    m = 1e9
    for _ in range(reps):
        t = time.perf_counter(); f(); m = min(m, time.perf_counter() - t)
    return m * 1e9 / n
res = {
 'pow numpy': best(lambda: np.power(a, b, out=o)),
 'pow torch': best(lambda: torch.pow(ta, tb, out=to)),
 'softplus torch': best(lambda: torch.nn.functional.softplus(tx)),
 'hardswish torch': best(lambda: torch.nn.functional.hardswish(tx)),
 'lsm_bwd torch': best(lambda: torch._log_softmax_backward_data(tg, ty, 1, torch.float64)),
 'exp torch': best(lambda: torch.exp(tx, out=to)),
}
print(sys.executable, np.__version__, torch.__version__)
for k, v in res.items(): print(f'{k:18s} {v:.2f} ns/elem')
