#!/usr/bin/python3
"""Plugins (include/tbench/plugin.h, docs/PLUGINS.md), printed as TAP.

Usage: test_cli_plugin.py TBENCH MESON BUILD_ROOT FIXTURE_DIR
(run from the repository root; meson test does this)

The example plugins are built the way a user builds theirs: `meson
install --tags devel` puts the header and tbench-plugin.pc into a
temporary DESTDIR, and examples/plugins/*/Makefile compiles against them
through pkg-config (PKG_CONFIG_SYSROOT_DIR), never against the source
tree.  Their cases go through tbench's reference check; the minimal
plugin's matmul is also compared with NumPy on the exec files.  The
fixtures (tests/plugins/fixture.c, built by meson) give each documented
status: wrong ABI, no entry point, failing probe, NULL required slot,
wrong results (failed-check), a crash in a kernel (crashed), a name
taken by a built-in backend (usage error), a constructor, entry point or
probe that crashes, exits or hangs (unavailable after the trial load in
a child process; tbench lives on).  Needs python3-jsonschema and
python3-numpy: run with /usr/bin/python3.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import numpy as np

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
MESON = sys.argv[2]
BUILD = os.path.abspath(sys.argv[3])
FIX = os.path.abspath(sys.argv[4])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-plugin-")
DEST = os.path.join(TMP, "dest")
BUILT = {}  # example name -> .so path


def fixture(kind):
    return os.path.join(FIX, f"fixture_{kind}.so")


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def tb(args, env=None, timeout=300):
    e = dict(os.environ)
    e.pop("TBENCH_PLUGIN_PATH", None)
    e.pop("TBENCH_FAULT", None)
    e.update(env or {})
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=timeout, env=e)


def load(out):
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.validate(doc, SCHEMA)
    return doc


def listing(*plugins, env=None):
    args = ["list", "--json"]
    for p in plugins:
        args += ["--plugin", p]
    p = tb(args, env=env)
    expect(p.returncode == 0, f"list: exit {p.returncode}: {p.stderr}")
    return {b["name"]: b for b in json.loads(p.stdout)["backends"]}


def pc_env():
    pcdirs = glob.glob(os.path.join(DEST, "**", "pkgconfig"),
                       recursive=True)
    expect(pcdirs, "no pkgconfig folder installed")
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = pcdirs[0]
    env["PKG_CONFIG_SYSROOT_DIR"] = DEST
    return env


SMALL = """{
  "name": "plugin-test",
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.2, "min_samples": 3, "max_samples": 20,
              "ci_target": 0.5, "max_time_s": 0.05, "timeout_s": 20},
  "dtypes": ["f32", "f64"],
  "backends": BACKENDS,
  "ops": OPS
}
"""


def config(name, backends, ops):
    return write(name, SMALL.replace("BACKENDS", json.dumps(backends))
                 .replace("OPS", json.dumps(ops)))


@case("meson install --tags devel installs plugin.h and tbench-plugin.pc; "
      "pkg-config points into the DESTDIR")
def t_install():
    p = subprocess.run([MESON, "install", "-C", BUILD, "--no-rebuild",
                        "--tags", "devel", "--destdir", DEST],
                       capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"meson install: {p.stdout}{p.stderr}")
    hdr = glob.glob(os.path.join(DEST, "**", "tbench", "plugin.h"),
                    recursive=True)
    expect(len(hdr) == 1, f"plugin.h installed: {hdr}")
    q = subprocess.run(["pkg-config", "--cflags", "tbench-plugin"],
                       capture_output=True, text=True, env=pc_env())
    expect(q.returncode == 0 and DEST in q.stdout,
           f"pkg-config: {q.stdout}{q.stderr}")
    v = subprocess.run(["pkg-config", "--variable=abi_major",
                        "tbench-plugin"], capture_output=True, text=True,
                       env=pc_env())
    expect(v.stdout.strip() == "1", f"abi_major {v.stdout!r}")


@case("the installed header compiles as C11, C99 and C++ with -Wall "
      "-Wextra -Werror -pedantic")
def t_header_langs():
    src = write("hdr.c", "#include <tbench/plugin.h>\n"
                "int f(void);\nint f(void) { return TBP_ABI_MAJOR; }\n")
    cpp = write("hdr.cpp", "#include <tbench/plugin.h>\n"
                "static tbp_plugin p;\n"
                "int main() { tbp_op o = tbp_op(); "
                "return (int)sizeof p + tbp_param_index(&o, \"x\"); }\n")
    inc = glob.glob(os.path.join(DEST, "**", "include"), recursive=True)[0]
    for cc, std, f in (("cc", "c11", src), ("cc", "c99", src),
                       ("c++", "c++11", cpp)):
        if not shutil.which(cc):
            continue
        p = subprocess.run([cc, f"-std={std}", "-Wall", "-Wextra",
                            "-Werror", "-pedantic", "-fsyntax-only",
                            "-I", inc, f], capture_output=True, text=True)
        expect(p.returncode == 0, f"{cc} -std={std}: {p.stderr}")


def build_example(name):
    out = os.path.join(TMP, "ex-" + name)
    os.makedirs(out, exist_ok=True)
    p = subprocess.run(["make", "-s", "-C",
                        os.path.join("examples", "plugins", name),
                        f"OUT={out}"], capture_output=True, text=True,
                       env=pc_env(), timeout=300)
    expect(p.returncode == 0, f"make {name}: {p.stdout}{p.stderr}")
    so = os.path.join(out, name + ".so")
    expect(os.path.exists(so), f"{so} not built")
    BUILT[name] = so
    return so


@case("examples/plugins/minimal builds out of tree; list shows it "
      "available with its doc and version")
def t_minimal_build():
    so = build_example("minimal")
    b = listing(so)
    expect("minimal" in b, f"backends {list(b)}")
    m = b["minimal"]
    expect(m["available"] is True and m["reason"] is None, f"{m}")
    expect("version 1.0" in m["doc"] and so in m["doc"], m["doc"])
    expect(m["axes"] == [], f"axes {m['axes']}")


@case("minimal: its cases are checked against the reference and timed; "
      "an op it lacks is unsupported; counters are its own")
def t_minimal_run():
    so = BUILT.get("minimal") or build_example("minimal")
    cfg = config("mini.json", ["cpu", "minimal"], [
        {"op": "add", "shapes": [[33, 17]]},
        {"op": "relu", "shapes": [[100]]},
        {"op": "matmul", "shapes": [[[20, 30], [30, 10]],
                                    [[2, 5, 7], [2, 7, 3]]]},
        {"op": "sub", "shapes": [[8]]}])
    out = os.path.join(TMP, "mini")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", so])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = load(out)
    expect(doc["env"]["plugins"] == [{"name": "minimal", "path": so,
                                      "version": "1.0", "loaded": True}],
           f"env.plugins {doc['env']['plugins']}")
    mine = [c for c in doc["cases"] if c["backend"] == "minimal"]
    expect(len(mine) == 10, f"{len(mine)} minimal cases")
    for c in mine:
        if c["op"] == "sub":
            expect(c["status"] == "unsupported", f"{c['id']}: {c['status']}")
            continue
        expect(c["status"] == "ok", f"{c['id']}: {c['status']} "
               f"{c['message']}")
        expect(c["check"]["passed"] is True, f"{c['id']}: check")
        expect(c["impl"] == f"minimal_{c['op']}_{c['dtype']}", c["impl"])
        expect(c["counters"]["kernel_launches"] == 1,
               f"{c['id']}: launches {c['counters']['kernel_launches']}")
    ids = {c["id"] for c in mine}
    expect("matmul/2x5x7,2x7x3/f64/minimal" in ids, f"ids {sorted(ids)}")
    # the report shows its cases and how to load it again
    md = os.path.join(TMP, "mini-report", "report.md")
    p = tb(["report", out, "-o", md, "--no-charts"])
    expect(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}")
    text = open(md, encoding="utf-8").read()
    expect(f"--plugin {so}:minimal -o {out}\n" in text,
           "reproduce line without --plugin")
    expect("| matmul | 20x30,30x10 | f64 | minimal |" in text,
           "matmul row of minimal missing")


@case("minimal matmul via exec equals NumPy's on the same inputs "
      "(rtol 1e-5 f32, 1e-12 f64)")
def t_minimal_numpy():
    so = BUILT.get("minimal") or build_example("minimal")
    for dt, rtol in (("f32", 1e-5), ("f64", 1e-12)):
        out = os.path.join(TMP, "exec-" + dt)
        p = tb(["exec", "matmul", "-s", "3x19x23,3x23x11", "-d", dt,
                "-b", "minimal", "--plugin", so, "-o", out])
        expect(p.returncode == 0, f"exec {dt}: {p.returncode} {p.stderr}")
        a = np.load(os.path.join(out, "input0.npy")).astype(np.float64)
        b = np.load(os.path.join(out, "input1.npy")).astype(np.float64)
        y = np.load(os.path.join(out, "output0.npy")).astype(np.float64)
        want = a @ b
        err = np.max(np.abs(y - want) / (np.abs(want) + 1e-3))
        expect(y.shape == (3, 19, 11), f"shape {y.shape}")
        expect(err < rtol, f"{dt}: max rel err {err}")


@case("a plugin's wrong results are failed-check, not timed")
def t_wrong():
    cfg = config("wrong.json", ["fixture"], [{"op": "add",
                                              "shapes": [[64]]}])
    out = os.path.join(TMP, "wrong")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", fixture("wrong")])
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    for c in load(out)["cases"]:
        expect(c["status"] == "failed-check" and c["stats"] is None,
               f"{c['id']}: {c['status']}")


@case("ABI 1.1: a 1.1 plugin is asked for bf16 (its add checked ok; f16, "
      "no kernel, unsupported); a plugin built for 1.0 is never asked for "
      "bf16/f16 (unsupported with the reason), its f32 still runs")
def t_abi11():
    cfg = config("abi11.json", ["new", "old"], [
        {"op": "add", "shapes": [[64]], "dtypes": ["f32", "bf16", "f16"]}])
    out = os.path.join(TMP, "abi11")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin",
            fixture("good") + ":new", "--plugin", fixture("old10") + ":old"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    by = {(c["backend"], c["dtype"]): c for c in load(out)["cases"]}
    for who in ("new", "old"):
        c = by[(who, "f32")]
        expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
    c = by[("new", "bf16")]
    expect(c["status"] == "ok" and c["check"]["passed"] and
           c["impl"] == "fixture_add", f"{c['id']}: {c['status']} "
                                       f"{c.get('message')}")
    c = by[("new", "f16")]
    expect(c["status"] == "unsupported" and
           "no kernel" in c["message"], f"{c['id']}: {c['message']}")
    for dt in ("bf16", "f16"):
        c = by[("old", dt)]
        expect(c["status"] == "unsupported" and "ABI 1.0" in c["message"]
               and "1.1" in c["message"], f"{c['id']}: {c['message']}")


@case("a crash inside a plugin kernel is a crashed case; the next case "
      "(another plugin) still runs")
def t_crash():
    cfg = config("crash.json", ["crashy", "good"], [
        {"op": "add", "shapes": [[64]]}])
    out = os.path.join(TMP, "crash")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin",
            fixture("crash") + ":crashy", "--plugin",
            fixture("good") + ":good"])
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    by = {(c["backend"], c["dtype"]): c for c in load(out)["cases"]}
    for dt in ("f32", "f64"):
        c = by[("crashy", dt)]
        expect(c["status"] == "crashed", f"{c['id']}: {c['status']}")
        # SIGSEGV; under AddressSanitizer its handler reports the fault
        # and the worker exits instead
        expect(("killed by SIGSEGV" in c["message"] or
                "exited with status" in c["message"]) and
               "during check" in c["message"], c["message"])
        g = by[("good", dt)]
        expect(g["status"] == "ok", f"{g['id']}: {g['status']}")


@case("plugin memory slots: uploads, downloads and allocations counted by "
      "the plugin; launches as it reports them")
def t_devmem():
    cfg = config("mem.json", ["fixture"], [{"op": "add",
                                            "shapes": [[256]],
                                            "alloc": [False, True]}])
    out = os.path.join(TMP, "mem")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", fixture("good")])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    for c in load(out)["cases"]:
        expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
        k = c["counters"]
        expect(k["kernel_launches"] == 2, f"{c['id']}: launches {k}")
        if c["alloc_outputs"]:
            size = 4 if c["dtype"] == "f32" else 8
            expect(k["device_allocs"] == 1 and
                   k["device_alloc_bytes"] == 256 * size,
                   f"{c['id']}: allocs {k}")
        else:
            expect(k["device_allocs"] == 0, f"{c['id']}: allocs {k}")


@case("unusable plugins are unavailable with the reason: wrong ABI, no "
      "entry point, failing probe, NULL slot, a file that is no library")
def t_unavailable():
    notlib = os.path.join(TMP, "notlib.so")
    with open(notlib, "w", encoding="utf-8") as f:
        f.write("not an ELF file\n")
    b = listing(fixture("abi") + ":abi", fixture("noentry"),
                fixture("probe") + ":probe", fixture("nokernel") + ":nok",
                notlib)
    want = {
        "abi": "built for plugin ABI 2.0; this tbench has ABI 1.1",
        "fixture_noentry": "no tbench_plugin",
        "probe": "probe failed: fixture: no such device",
        "nok": "required slot 'kernel' is NULL",
        "notlib": "notlib.so",
    }
    for name, what in want.items():
        expect(name in b, f"{name} not listed: {list(b)}")
        expect(b[name]["available"] is False and what in b[name]["reason"],
               f"{name}: {b[name]}")
    # their cases are unavailable with the same reason, exit 0
    cfg = config("unav.json", ["abi", "probe"], [{"op": "add",
                                                  "shapes": [[4]]}])
    out = os.path.join(TMP, "unav")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin",
            fixture("abi") + ":abi", "--plugin",
            fixture("probe") + ":probe"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = load(out)
    expect([(x["name"], x["loaded"]) for x in doc["env"]["plugins"]] ==
           [("abi", False), ("probe", True)], f"{doc['env']['plugins']}")
    for c in doc["cases"]:
        expect(c["status"] == "unavailable" and
               want[c["backend"]] in c["message"],
               f"{c['id']}: {c['status']} {c['message']}")


@case("--plugin with a path that does not exist is a usage error (exit 2, "
      "one line naming it) for list, run and exec")
def t_missing():
    missing = os.path.join(TMP, "nope.so")
    cfg = config("miss.json", ["cpu"], [{"op": "add", "shapes": [[4]]}])
    out = os.path.join(TMP, "miss")
    for args in (["list"], ["run", cfg, "-q", "-o", out],
                 ["exec", "add", "-s", "4,4", "-o", out]):
        p = tb(args + ["--plugin", missing + ":m"])
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        expect(p.returncode == 2 and len(lines) == 1 and
               f"--plugin {missing}: no such file" in lines[0],
               f"{args[0]}: exit {p.returncode}: {p.stderr}")
        expect(not os.path.exists(out), f"{args[0]}: wrote {out}")


@case("a plugin whose constructor, entry point or probe crashes, exits or "
      "hangs is unavailable with the reason: tbench lives on, a run of "
      "its cases exits 0 with the cpu cases ok")
def t_trial():
    want = {
        "ctorcrash": "was killed by SIGSEGV (Segmentation fault) during "
                     "the load (dlopen: its constructors)",
        "entrycrash": "was killed by SIGSEGV (Segmentation fault) during "
                      "tbench_plugin()",
        "probecrash": "was killed by SIGSEGV (Segmentation fault) during "
                      "probe",
        "probeexit": "exited with status 0 during probe",
        "probehang": "did not finish within 10 s (killed) during probe",
    }
    b = listing(*(fixture(k) + ":" + k for k in want))
    for name, what in want.items():
        expect(name in b, f"{name} not listed: {list(b)}")
        expect(b[name]["available"] is False and
               "its trial load in a child process " + what in
               b[name]["reason"], f"{name}: {b[name]}")
    cfg = config("trial.json", ["cpu", "probecrash", "ctorcrash"],
                 [{"op": "add", "shapes": [[4]]}])
    out = os.path.join(TMP, "trial")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin",
            fixture("probecrash") + ":probecrash", "--plugin",
            fixture("ctorcrash") + ":ctorcrash"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = load(out)
    expect([(x["name"], x["loaded"]) for x in doc["env"]["plugins"]] ==
           [("probecrash", False), ("ctorcrash", False)],
           f"{doc['env']['plugins']}")
    for c in doc["cases"]:
        if c["backend"] == "cpu":
            expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
        else:
            expect(c["status"] == "unavailable" and
                   want[c["backend"]] in c["message"],
                   f"{c['id']}: {c['status']} {c['message']}")


@case("axes: a config sweeps a plugin's axis; a refused create is an "
      "error case naming the plugin's reason")
def t_axes():
    b = listing(fixture("axes"))
    ax = b["fixture"]["axes"]
    expect(len(ax) == 1 and ax[0]["name"] == "mode" and
           ax[0]["values"] == ["a", "b"], f"axes {ax}")
    cfg = config("axes.json", [{"name": "fixture", "mode": ["a", "b"]}],
                 [{"op": "add", "shapes": [[8]]}])
    out = os.path.join(TMP, "axes")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", fixture("axes")])
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    for c in load(out)["cases"]:
        mode = c["backend_params"]["mode"]
        if mode == "a":
            expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
        else:
            expect(c["status"] == "error" and
                   "fixture: mode b refused" in c["message"],
                   f"{c['id']}: {c['status']} {c['message']}")


@case("two plugins with one name: a usage error without labels; with "
      "labels both run and compare judges them case by case")
def t_labels():
    good = fixture("good")
    p = tb(["list", "--plugin", good, "--plugin", good])
    expect(p.returncode == 2 and "taken by plugin" in p.stderr and
           "PATH:LABEL" in p.stderr and p.stderr.count("\n") == 1,
           f"exit {p.returncode}: {p.stderr}")
    p = tb(["list", "--plugin", fixture("builtin")])
    expect(p.returncode == 2 and "built-in backend cpu" in p.stderr,
           f"exit {p.returncode}: {p.stderr}")
    p = tb(["list", "--plugin", good + ":bad label"])
    expect(p.returncode == 2 and "PATH:LABEL" in p.stderr,
           f"exit {p.returncode}: {p.stderr}")
    cfg = config("ab.json", ["v1", "v2"], [{"op": "add",
                                            "shapes": [[1024]]}])
    out = os.path.join(TMP, "ab")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", good + ":v1",
            "--plugin", good + ":v2"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = load(out)
    backends = sorted({c["backend"] for c in doc["cases"]})
    expect(backends == ["v1", "v2"], f"backends {backends}")
    med = {(c["backend"], c["dtype"]): c["stats"]["median_ns"]
           for c in doc["cases"]}
    res = os.path.join(out, "results.json")
    q = subprocess.run([TBENCH, "compare", res, res, "--backends", "v1,v2",
                        "--format", "json", "--fail-on", "none"],
                       capture_output=True, text=True)
    expect(q.returncode == 0, f"compare exit {q.returncode}: {q.stderr}")
    cmp = json.loads(q.stdout)
    rows = cmp["cases"]
    expect(len(rows) == 2, f"{len(rows)} compared cases: {q.stdout[:400]}")
    for r in rows:
        expect(r["id"].startswith("add/1024,1024/f") and
               r["id"].endswith("/*"), r["id"])
        dt = r["id"].split("/")[2]
        expect(r["time"]["old_median_ns"] == med[("v1", dt)] and
               r["time"]["new_median_ns"] == med[("v2", dt)],
               f"{r['id']}: {r['time']} vs {med}")


@case("TBENCH_PLUGIN_PATH: files and folders (their *.so, name order); "
      "a missing entry is a usage error")
def t_path():
    d = os.path.join(TMP, "pdir")
    os.makedirs(d, exist_ok=True)
    shutil.copy(fixture("probe"), os.path.join(d, "b_probe.so"))
    shutil.copy(fixture("abi"), os.path.join(d, "a_abi.so"))
    with open(os.path.join(d, "notes.txt"), "w", encoding="utf-8") as f:
        f.write("not a plugin\n")
    p = tb(["list", "--json", "--plugin", fixture("good") + ":g"],
           env={"TBENCH_PLUGIN_PATH": d + "::"})
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    bes = json.loads(p.stdout)["backends"]
    names = [b["name"] for b in bes]
    # the folder's plugins first, in name order, then --plugin's
    expect(names[-3:] == ["a_abi", "fixture", "g"], f"names {names}")
    expect(not bes[-3]["available"] and not bes[-2]["available"] and
           bes[-1]["available"], f"{bes[-3:]}")
    p = tb(["list"], env={"TBENCH_PLUGIN_PATH": os.path.join(TMP, "none")})
    expect(p.returncode == 2 and "TBENCH_PLUGIN_PATH" in p.stderr,
           f"exit {p.returncode}: {p.stderr}")


@case("who may change the plugins: a relative TBENCH_PLUGIN_PATH entry "
      "and a folder writable by every user are refused (exit 2); a file "
      "writable by every user, or in such a folder without the sticky "
      "bit, is unavailable with the reason")
def t_path_safety():
    d = os.path.join(TMP, "pdir2")
    os.makedirs(d, exist_ok=True)
    shutil.copy(fixture("good"), os.path.join(d, "good.so"))
    p = subprocess.run([TBENCH, "list"], capture_output=True, text=True,
                       cwd=TMP, env=dict(os.environ,
                                         TBENCH_PLUGIN_PATH="pdir2"))
    expect(p.returncode == 2 and "pdir2 is a relative path" in p.stderr,
           f"relative: exit {p.returncode}: {p.stderr}")
    for mode in (0o777, 0o1777):
        os.chmod(d, mode)
        p = tb(["list"], env={"TBENCH_PLUGIN_PATH": d})
        expect(p.returncode == 2 and "is writable by every user" in p.stderr,
               f"folder {mode:o}: exit {p.returncode}: {p.stderr}")
    # a file of ours in a sticky folder (as /tmp): loaded
    b = listing(os.path.join(d, "good.so") + ":sticky")
    expect(b["sticky"]["available"] is True, f"{b['sticky']}")
    os.chmod(d, 0o777)  # anyone may replace the file
    b = listing(os.path.join(d, "good.so") + ":open")
    expect(b["open"]["available"] is False and "without the sticky bit"
           in b["open"]["reason"], f"{b['open']}")
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "good.so"), 0o666)  # anyone may change it
    b = listing(os.path.join(d, "good.so") + ":w")
    expect(b["w"]["available"] is False and "is writable by every user "
           "(mode 0666)" in b["w"]["reason"], f"{b['w']}")


@case("examples/plugins/blis builds out of tree; its matmul, batched "
      "matmul and linear pass the reference check at 1 and 2 threads")
def t_blis():
    mult = subprocess.run(["cc", "-print-multiarch"], capture_output=True,
                          text=True).stdout.strip()
    if not os.path.exists(f"/usr/include/{mult}/blis-openmp/blis.h"):
        return "SKIP libblis-dev is not installed (scripts/setup.sh --tests)"
    so = build_example("blis")
    b = listing(so)
    expect(b["blis"]["available"] is True, f"{b['blis']}")
    expect(b["blis"]["axes"][0]["name"] == "threads", f"{b['blis']}")
    cfg = config("blis.json", ["blas", {"name": "blis",
                                         "threads": ["1", "2"]}], [
        {"op": "matmul", "shapes": [[[70, 50], [50, 30]],
                                    [[3, 20, 9], [3, 9, 14]]]},
        {"op": "linear", "shapes": [[[16, 24], [24, 12], [12]]]}])
    out = os.path.join(TMP, "blis")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", so],
           env={"OMP_WAIT_POLICY": "passive"})
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    mine = [c for c in load(out)["cases"] if c["backend"] == "blis"]
    expect(len(mine) == 12, f"{len(mine)} blis cases")
    for c in mine:
        expect(c["status"] == "ok" and c["check"]["passed"],
               f"{c['id']}: {c['status']} {c['message']}")
        want = 3 if c["shapes"][0] == [3, 20, 9] else 1
        expect(c["counters"]["kernel_launches"] == want,
               f"{c['id']}: launches {c['counters']['kernel_launches']}")


def mkl_rt():
    """libmkl_rt from TBENCH_MKL_RT or scripts/peers.sh's .peers, or None."""
    env = os.environ.get("TBENCH_MKL_RT")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    got = sorted(glob.glob(os.path.join(root, ".peers", "lib",
                                        "libmkl_rt.so.*")))
    return os.path.abspath(got[-1]) if got else None


@case("examples/plugins/mkl builds without MKL; without libmkl_rt (or with "
      "a library lacking cblas_sgemm) it is unavailable with the reason; "
      "with MKL (scripts/peers.sh) matmul, batched matmul and linear pass "
      "the reference check at 1 and 2 threads")
def t_mkl():
    so = build_example("mkl")
    for rt, why in (("/nonexistent/libmkl_rt.so.3",
                     "TBENCH_MKL_RT: /nonexistent/libmkl_rt.so.3"),
                    ("libm.so.6", "libm.so.6 has no cblas_sgemm")):
        b = listing(so, env={"TBENCH_MKL_RT": rt})
        expect(b["mkl"]["available"] is False and why in b["mkl"]["reason"],
               f"TBENCH_MKL_RT={rt}: {b['mkl']}")
    rt = mkl_rt()
    if not rt:
        return "SKIP no libmkl_rt (sh scripts/peers.sh, or TBENCH_MKL_RT)"
    b = listing(so, env={"TBENCH_MKL_RT": rt})
    expect(b["mkl"]["available"] is True, f"{b['mkl']}")
    expect("Math Kernel Library" in b["mkl"]["doc"], b["mkl"]["doc"])
    cfg = config("mkl.json", [{"name": "mkl", "threads": ["1", "2"]}], [
        {"op": "matmul", "shapes": [[[70, 50], [50, 30]],
                                    [[3, 20, 9], [3, 9, 14]]]},
        {"op": "linear", "shapes": [[[16, 24], [24, 12], [12]]]},
        {"op": "add", "shapes": [[[8], [8]]]}])
    out = os.path.join(TMP, "mkl")
    p = tb(["run", cfg, "-q", "-o", out, "--plugin", so],
           env={"TBENCH_MKL_RT": rt, "OMP_WAIT_POLICY": "passive"})
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    cases = load(out)["cases"]
    add = [c for c in cases if c["op"] == "add"]
    expect(len(add) == 4 and all(c["status"] == "unsupported" for c in add),
           f"add: {[(c['id'], c['status']) for c in add]}")
    mine = [c for c in cases if c["op"] != "add"]
    expect(len(mine) == 12, f"{len(mine)} mkl cases")
    for c in mine:
        expect(c["status"] == "ok" and c["check"]["passed"],
               f"{c['id']}: {c['status']} {c['message']}")
        expect(c["impl"].startswith("mkl cblas_"), f"{c['id']}: {c['impl']}")
        want = 3 if c["shapes"][0] == [3, 20, 9] else 1
        expect(c["counters"]["kernel_launches"] == want,
               f"{c['id']}: launches {c['counters']['kernel_launches']}")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


sys.exit(run_cases(cleanup))
