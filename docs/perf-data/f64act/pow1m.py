#!/usr/bin/python3
"""PyTorch pow, 1M f64, one thread: fastest and median of 30 calls
(alternated by hand with tbench run --op pow, see README)."""
import time, numpy as np, torch
torch.set_num_threads(1)
n=1<<20; rng=np.random.default_rng(1)
a=torch.from_numpy(rng.uniform(0.1,2,n)); b=torch.from_numpy(rng.uniform(-2,2,n)); o=torch.empty(n,dtype=torch.float64)
ts=[]
for _ in range(30):
    t=time.perf_counter(); torch.pow(a,b,out=o); ts.append(time.perf_counter()-t)
ts.sort(); print('torch', torch.__version__, 'pow 1M min %.2f med %.2f ms'%(ts[0]*1e3, ts[15]*1e3))
