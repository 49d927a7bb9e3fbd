#!/usr/bin/python3
"""Which f64 ops run a portable C row at the machine's best cpu level.

Usage: /usr/bin/python3 scripts/f64_c_rows.py [--tbench build/tbench]
                                                 [--config configs/quick.json]

Issue 34 item 1 asks for a SIMD row for every f64 op still on portable C.
The kernel that runs is what the harness records (a case's "impl", the
name of kreg.h's row: "<op>_f64_<level>"), so this asks tbench itself
rather than reading kreg.h: it writes a config with every op entry of
the quick config (its first shape, contiguous layout, f64 where the op
has it), runs it once on the cpu backend at isa=auto, 1 thread, with
minimal sampling, and prints one line per op: the impl and whether it is
portable (a name ending in _c or _scalar).  The last line counts them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def strip_comments(text):
    """The config's // comments removed (outside strings)."""
    out, i, in_str = [], 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if c == '\\':
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith('//', i):
            while i < len(text) and text[i] != '\n':
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return ''.join(out)


def f64_ops(tbench):
    listing = json.loads(subprocess.run([tbench, 'list', '--json'],
                                        capture_output=True, check=True,
                                        text=True).stdout)
    return {o['name'] for o in listing['ops'] if 'f64' in o['dtypes']}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tbench', default='build/tbench')
    ap.add_argument('--config', default='configs/quick.json')
    args = ap.parse_args()
    with open(args.config, encoding='utf-8') as f:
        cfg = json.loads(strip_comments(f.read()))
    have = f64_ops(args.tbench)
    seen, entries = set(), []
    for e in cfg['ops']:
        if e['op'] in seen or e['op'] not in have or 'layouts' in e:
            continue
        seen.add(e['op'])
        e = dict(e, shapes=e['shapes'][:1], dtypes=['f64'])
        entries.append(e)
    run_cfg = {
        'name': 'f64_c_rows', 'seed': 1, 'dtypes': ['f64'],
        'backends': ['cpu'],
        'warmup': {'min_time_ms': 0.1, 'min_iters': 1},
        'measure': {'sample_time_ms': 0.1, 'min_samples': 3, 'max_samples': 3,
                    'max_time_s': 0.05, 'rounds': 1},
        'ops': entries,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'config.json')
        with open(path, 'w', encoding='utf-8') as f:
            json.dump(run_cfg, f)
        res = subprocess.run([args.tbench, 'run', path, '-o', '-'],
                             capture_output=True, text=True)
    if not res.stdout:
        sys.exit('tbench run failed: ' + res.stderr[-2000:])
    impls = {}
    for c in json.loads(res.stdout)['cases']:
        if c['dtype'] == 'f64' and c['status'] == 'ok':
            impls.setdefault(c['op'], c['impl'])
    n_c = 0
    for op in sorted(have):
        impl = impls.get(op)
        portable = impl is not None and impl.endswith(('_c', '_scalar'))
        n_c += portable
        print(f"{op:28s} {impl or '(not run)':36s} "
              f"{'portable' if portable else ''}")
    print(f'# {n_c} of {len(have)} f64 ops on a portable row')


if __name__ == '__main__':
    main()
