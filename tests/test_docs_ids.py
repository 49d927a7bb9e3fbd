#!/usr/bin/python3
"""The docs against the code they describe (issue 32 item 9), as TAP.

Usage: test_docs_ids.py PATH/TO/tbench   (run from the repository root)

- Every case id written in README.md and docs/*.md (all but the
  generated PERFORMANCE.md) is one the current code could make: a known
  op, parameters
  of that op, one shape per input, a dtype the op has, and for a backend
  that `tbench list --json` describes (cpu, blas) exactly its axes in its
  order.  Backends of other programs (compare_numpy.py's numpy and
  torch, the plugin labels of an example) are named below, with why.
- Every id on a README command line that names a config is a case of that
  config (`tbench run CONFIG --list-cases`).
- A config that states its number of cases in a comment ("N cases")
  states what --list-cases counts.
- No doc points outside the repository (`../shared/...`).
"""
import glob
import json
import os
import re
import subprocess
import sys

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
DOCS = ["README.md"] + sorted(p for p in glob.glob("docs/*.md")
                              if not p.endswith("PERFORMANCE.md"))
# backends that are not tbench's: the peers of scripts/compare_numpy.py
# and the labels of one plugin loaded twice (docs/PLUGINS.md section 5);
# cuda's axes are the module's, unknown on a machine that cannot load it
FOREIGN = {"numpy", "torch", "v1", "v2"}
NO_AXES_HERE = {"cuda"}

ID = re.compile(r"(?<![\w/.-])([a-z][a-z_0-9]*(?:@alloc)?(?:@layout=[a-z]+)?"
                r"(?:\[[^\]\s`'\"]*\])?"
                r"/[0-9x,]+/(?:f32|f64|bf16|f16)/[a-z][a-z0-9_]*"
                r"(?:\[[^\]\s`'\"]*\])?(?:@transfers)?)")


def tb(*args):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=300)


LIST = json.loads(tb("list", "--json").stdout)
OPS = {o["name"]: o for o in LIST["ops"]}
BACKENDS = {b["name"]: [a["name"] for a in b.get("axes", [])]
            for b in LIST["backends"]}


def ids_in(path):
    text = open(path, encoding="utf-8").read()
    for m in ID.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1), text


def problem(i):
    """What is wrong with id i, or None."""
    head, shapes, dtype, be = i.split("/")
    m = re.fullmatch(r"([a-z_0-9]+)(@alloc)?(?:@layout=(?:transposed|strided"
                     r"|sliced))?(?:\[([^\]]*)\])?", head)
    if not m:
        return "the op part does not parse"
    op = OPS.get(m.group(1))
    if not op:
        return f"no op '{m.group(1)}'"
    names = {p["name"] for p in op["params"]}
    # a piece without '=' continues the value before it (a string
    # parameter's text, einsum's equation, holds commas: FORMAT.md)
    for kv in filter(None, (m.group(3) or "").split(",")):
        if "=" in kv and kv.split("=")[0] not in names:
            return f"{op['name']} has no parameter '{kv.split('=')[0]}'"
    n = len(shapes.split(","))
    want = max(op["inputs"], 1)
    if n != want:
        return f"{n} shapes, {op['name']} takes {want}"
    if dtype not in op["dtypes"]:
        return f"{op['name']} has no {dtype}"
    b = re.fullmatch(r"([a-z0-9_]+)(?:\[([^\]]*)\])?(@transfers)?", be)
    if not b:
        return "the backend part does not parse"
    name = b.group(1)
    if name in FOREIGN or name in NO_AXES_HERE:
        return None
    if name not in BACKENDS:
        return f"no backend '{name}'"
    axes = [kv.split("=")[0] for kv in (b.group(2) or "").split(",") if kv]
    if axes != BACKENDS[name]:
        return f"axes {axes}, {name} has {BACKENDS[name]}"
    return None


@case("every case id in README.md and docs/*.md is one the code makes")
def t_ids():
    seen = 0
    for path in DOCS:
        for line, i, _ in ids_in(path):
            seen += 1
            why = problem(i)
            expect(why is None, f"{path}:{line}: {i}: {why}")
    expect(seen >= 20, f"only {seen} ids found: the pattern is broken")


@case("README's ids on a command line naming a config are its cases")
def t_readme_configs():
    listed = {}
    checked = 0
    text = open("README.md", encoding="utf-8").read().splitlines()
    for n, line in enumerate(text, 1):
        cfgs = re.findall(r"configs/[a-z0-9_-]+\.json", line)
        ids = [m.group(1) for m in ID.finditer(line)]
        if not cfgs or not ids:
            continue
        cfg = cfgs[0]
        if cfg not in listed:
            p = tb("run", cfg, "--list-cases")
            expect(p.returncode == 0, f"{cfg}: {p.stderr}")
            listed[cfg] = set(p.stdout.split())
        for i in ids:
            checked += 1
            expect(i in listed[cfg], f"README.md:{n}: {i} is no case of "
                   f"{cfg}")
    expect(checked >= 1, "no id on a config's command line found")


@case("configs that state their number of cases state it right")
def t_counts():
    stated = 0
    for cfg in sorted(glob.glob("configs/*.json")):
        head = "".join(l for l in open(cfg, encoding="utf-8")
                       if l.lstrip().startswith("//"))
        m = re.search(r"(\d[\d,]*) cases\.", head)
        if not m:
            continue
        stated += 1
        p = tb("run", cfg, "--list-cases")
        got = len(p.stdout.split())
        want = int(m.group(1).replace(",", ""))
        expect(got == want, f"{cfg} says {want} cases, --list-cases "
               f"gives {got}")
    expect(stated >= 1, "configs/quick.json states none")


@case("no doc points outside the repository")
def t_no_outside():
    for path in DOCS:
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"\.\./shared|/work/", text):
            expect(False, f"{path}:{text.count(chr(10), 0, m.start()) + 1}:"
                   f" {m.group(0)}")


run_cases()
