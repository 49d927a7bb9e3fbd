#!/usr/bin/env python3
"""A large result file for the readers' scale checks, without running it.

    gen_scale_file.py TEMPLATE N S OUT [--seed K] [--shift F]

TEMPLATE: a result file (a run folder's results.json) whose first "ok"
record is the model; OUT gets its head (env, configs, peaks) and N "ok"
records of S samples each: ids and shapes 1..N as scale_bench.sh's relu
cases have them, samples drawn around the model's median (lognormal,
sigma 2%; --shift F multiplies them all by F, so two files compare as a
change), stats made to agree (n, median, min, max, mean, a CI around the
median), "complete" true.  With the results.json of scale_bench.sh's
run of N cases as TEMPLATE (cut short or not) OUT is a file of that
run's plan: its configs, ids and order, so merge of its shards
(split_shards.py) builds the plan again and accepts them.  Written as
one line of compact JSON: the loader reads any layout.  The run itself takes minutes for 20,000 cases of 460 samples
(scripts/scale_bench.sh --big 20000:460); the readers' figures need only
the file.  tests/test_cli_scale_read.py uses it for its memory bounds
(500 cases of 920 samples; 300 and 3,000 tiny cases of 3 samples, also
split into shards by scripts/split_shards.py).
"""
import argparse
import json
import random
import statistics
import sys


def main(argv):
    ap = argparse.ArgumentParser(description='a large result file')
    ap.add_argument('template')
    ap.add_argument('n', type=int)
    ap.add_argument('s', type=int)
    ap.add_argument('out')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--shift', type=float, default=1.0)
    a = ap.parse_args(argv[1:])
    tpl, n, s, out, seed, shift = (a.template, a.n, a.s, a.out, a.seed,
                                   a.shift)
    with open(tpl) as f:
        doc = json.load(f)
    model = next(c for c in doc['cases'] if c['status'] == 'ok')
    base = model['stats']['median_ns']
    rng = random.Random(seed)
    cases = []
    for i in range(1, n + 1):
        c = json.loads(json.dumps(model))
        c['id'] = 'relu/%d/f32/cpu[isa=scalar,threads=1]' % i
        c.update(op='relu', dtype='f32', backend='cpu', shapes=[[i]],
                 out_shapes=[[i]], params={},
                 backend_params={'isa': 'scalar', 'threads': '1'})
        x = [base * shift * rng.lognormvariate(0, 0.02)
             for _ in range(s)]
        st = c['stats']
        med = statistics.median(x)
        st.update(n=s, samples_ns=x, median_ns=med, min_ns=min(x),
                  max_ns=max(x), mean_ns=statistics.fmean(x),
                  ci_low_ns=med * 0.999, ci_high_ns=med * 1.001,
                  ci_rel=0.001, round_medians_ns=[med], rounds=1)
        cases.append(c)
    doc['cases'] = cases
    # every case it names is there (a template cut short said false)
    doc['complete'] = True
    doc['summary'] = {'cases': n, 'ok': n}
    doc.pop('shard', None)
    with open(out, 'w') as f:
        json.dump(doc, f, separators=(',', ':'))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
