#!/usr/bin/python3
"""Every Debian package the project uses is one that scripts/setup.sh
installs (issue 25), as TAP.

Usage: test_setup_deps.py   (from the repository root; Debian's
/usr/bin/python3 resolves the modules; needs dpkg: skipped without it)

What the code uses is read from the files themselves:
- Python modules: every import (ast) in scripts/ and tests/, and in the
  Python heredocs and `python3 -c` strings of the shell scripts; found
  with /usr/bin/python3's importlib.util.find_spec.  The project's own
  modules (a .py file of that name in scripts/ or tests/) need none.
- external commands, found with shutil.which on Debian's PATH
  (/usr/sbin:/usr/bin:/sbin:/bin: what a fresh machine has, whatever
  the PATH of this run holds):
  - shell scripts (scripts/, tests/, .ci/run) and README's two commands:
    the first word of every simple command (also after command -v,
    exec, env, nice, sudo, timeout), and CC=NAME;
  - Python: the first element of a list given to subprocess.* or
    os.exec*, and shutil.which's argument, also through a name bound by
    `NAME = "x"` or `for NAME in ("x", ...)` in the file, and the
    commands of INDIRECT below;
  - C: the programs src/ executes (RUNTIME_SITES below, which must
    name every exec/popen/system/posix_spawn/dlopen call in src/);
  - meson: find_program('NAME') in every meson.build, and cc (meson
    builds C);
  - literal absolute paths into the system written in shell or Python
    (/usr/share/benchmark/compare.py, /usr/bin/python3, ...);
- C headers: every #include <...> of the .c and .h files of src/,
  tests/, include/ and examples/, found on the C compiler's search path.

Each file found is mapped to its package with dpkg -S (the path as
found, then with links resolved, then its /usr-merged twin).  The
package passes when it is in setup.sh's list (`sh scripts/setup.sh
--list --tests`), or is pulled in by a package of the list (Depends and
Pre-Depends, transitively, as installed here: dpkg-query; not
Recommends, which setup.sh does not install), or is in every Debian
system's base (Essential, or of priority required: what debootstrap's
minbase holds).  What tbench itself uses (src/'s programs and headers,
the top meson.build, README's first command) must be covered by the
main set alone (`--list`), which README's first command installs.  A
case fails naming the module, command or header, where it is used, and
the package it comes from (or that nothing provides it here).
"""
import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys

from tap import case, expect, run as run_cases

ROOT = os.getcwd()
SYSPATH = "/usr/sbin:/usr/bin:/sbin:/bin"
PY = "/usr/bin/python3"

# Not Debian packages, so nothing setup.sh could install.  Each is
# optional: the code that uses it reports "unavailable" without it.
NOT_DEBIAN = {
    # CUDA toolkit (/usr/local/cuda) and the NVIDIA driver
    "nvcc": "CUDA toolkit", "nvidia-smi": "NVIDIA driver",
    "compute-sanitizer": "CUDA toolkit", "ncu": "CUDA toolkit",
    "nsys": "CUDA toolkit",
    "libnvidia-ml.so.1": "NVIDIA driver (NVML)",
    "libcupti.so": "CUDA toolkit (CUPTI)",
    "cuda_runtime.h": "CUDA toolkit", "cublas_v2.h": "CUDA toolkit",
    "cusolverDn.h": "CUDA toolkit", "cupti.h": "CUDA toolkit",
    "nvtx3/nvToolsExt.h": "CUDA toolkit",
    # this workplace's own tool (scripts/house_metrics.py counts its
    # pairs when it is there and says so when it is not)
    "duplicates": "the development workplace's tool library",
    # the project's own
    "tbench": "this project (build/tbench)",
    "tbench/plugin.h": "this project (include/)",
}

# The programs and libraries src/ starts or loads at run time: file ->
# (number of exec*/popen/system/posix_spawn/dlopen calls in it, what
# they run).  A new call fails the "every call site" case until it is
# listed here, with its program (and that program's package in
# setup.sh's main set).
RUNTIME_SITES = {
    "src/harness/instr.c": (1, ["valgrind"]),   # callgrind counts
    "src/report/plot.c": (1, ["gnuplot"]),      # charts
    "src/harness/xworker.c": (1, []),           # tbench itself (worker)
    "src/backends/plugin.c": (1, []),           # the user's plugins
    "src/harness/gpu_clock.c": (1, ["libnvidia-ml.so.1"]),
    "src/harness/env_gpu.c": (1, ["libnvidia-ml.so.1"]),
    "src/backends/cuda/cupti_pass.c": (1, ["libcupti.so"]),
    # tbench profile: the profilers (nsys, ncu: NOT_DEBIAN, GPU only)
    "src/cli/cmd_profile.c": (1, ["perf", "valgrind", "nsys", "ncu"]),
}
SITE_RE = re.compile(r"\b(exec[lv]p?e?|popen|system|posix_spawnp?|"
                     r"dlopen)\s*\(")

# Commands a Python script reaches only through a value the scanner
# cannot follow (an argparse default, a list built in steps): file ->
# commands.  Each must appear as a string in its file.
INDIRECT = {
    "scripts/kernel_bounds.py": ["llvm-mca"],    # --llvm-mca's default
}

# Uses the scanner must find: if it stops finding them it is broken.
KNOWN = {"command": ["gnuplot", "valgrind", "llvm-mca", "sbatch", "make",
                     "clang", "/usr/share/benchmark/compare.py", "munged"],
         "module": ["numpy", "torch", "scipy", "mpmath", "jsonschema"],
         "header": ["cjson/cJSON.h", "cmocka.h", "csv.h"]}

SH_SKIP = set("""if then else elif fi do done while until for in case esac
function { } ! [[ ]] cd set shift exit return echo printf read test [
export local trap wait kill true false eval getopts unset break continue
umask type : . source pwd alias let readonly times ulimit hash jobs
shopt declare typeset""".split())
# words after which the next word is a command too
SH_WRAPPERS = {"command", "exec", "env", "nice", "sudo", "timeout",
               "nohup", "time"}
NAME_RE = re.compile(r"^[A-Za-z_][\w.+-]*$")
ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)


def rel(p):
    return os.path.relpath(p, ROOT)


def files(patterns):
    out = []
    for p in patterns:
        out += glob.glob(os.path.join(ROOT, p), recursive=True)
    return sorted(set(f for f in out if os.path.isfile(f)))


def shell_files():
    """scripts/, tests/ and .ci/ files that are shell scripts."""
    out = []
    for f in files(["scripts/**/*", "tests/**/*.sh", ".ci/*"]):
        if f.endswith(".sh"):
            out.append(f)
            continue
        try:
            with open(f, encoding="utf-8") as fh:
                first = fh.readline()
        except (OSError, UnicodeDecodeError):
            continue
        if re.match(r"#!\s*/(usr/)?bin/(env\s+)?(ba|da)?sh\b", first):
            out.append(f)
    return out


# ---- shell -----------------------------------------------------------------

class Word:
    def __init__(self):
        self.text, self.literal = "", True


class Ctx:
    """Where the tokenizer is: kind "cmd" (the script), "sub" ($(...)),
    "bq" (`...`) or "dq" (double quotes); parens: open ( subshells;
    cases: open case ... esac; outer: the word a substitution sits in."""
    def __init__(self, kind, outer=None):
        self.kind, self.parens, self.cases, self.outer = kind, 0, 0, outer


def sh_tokens(src):
    """The words and separators of shell text (heredoc bodies removed):
    a list of Word, "SEP", "DSEMI" (;;), "PAT" (a case pattern's ")")
    and "REDIR".  Command substitutions $(...) and `...`, also inside
    double quotes, become separated commands of their own."""
    toks, word = [], None
    ctx = [Ctx("cmd")]
    i, n = 0, len(src)

    def end():
        nonlocal word
        if word is not None:
            toks.append(word)
            if word.literal and word.text == "case":
                ctx[-1].cases += 1
            elif word.literal and word.text == "esac":
                ctx[-1].cases -= 1
        word = None

    def w():
        nonlocal word
        if word is None:
            word = Word()
        return word

    def enter(kind):            # $( or ` starts a command of its own
        nonlocal word
        w().literal = False
        ctx.append(Ctx(kind, word))
        word = None
        toks.append("SEP")

    def leave():
        nonlocal word
        end()
        toks.append("SEP")
        word = ctx.pop().outer

    while i < n:
        c, kind, two = src[i], ctx[-1].kind, src[i:i + 2]
        if kind == "dq":
            if c == "\\":
                w().text += src[i + 1:i + 2]
                i += 2
            elif c == '"':
                ctx.pop()
                i += 1
            elif two == "$(" and src[i:i + 3] != "$((":
                enter("sub")
                i += 2
            elif c == "`":
                enter("bq")
                i += 1
            else:
                if c == "$":
                    w().literal = False
                w().text += c
                i += 1
        elif c in " \t":
            end()
            i += 1
        elif c == "\n":
            end()
            toks.append("SEP")
            i += 1
        elif c == "#" and word is None:
            while i < n and src[i] != "\n":
                i += 1
        elif c == "\\":
            if src[i + 1:i + 2] == "\n":
                end()
            else:
                w().text += src[i + 1:i + 2]
            i += 2
        elif c == "'":
            j = src.find("'", i + 1)
            j = n if j < 0 else j
            w().text += src[i + 1:j]
            i = j + 1
        elif c == '"':
            w()
            ctx.append(Ctx("dq"))
            i += 1
        elif src[i:i + 3] == "$((":        # arithmetic: part of the word
            depth, j = 0, i + 1
            while j < n:
                depth += {"(": 1, ")": -1}.get(src[j], 0)
                j += 1
                if depth == 0:
                    break
            w().literal = False
            w().text += src[i:j]
            i = j
        elif two == "${":
            j = src.find("}", i)
            j = n if j < 0 else j
            w().literal = False
            w().text += src[i:j + 1]
            i = j + 1
        elif two == "$(":
            enter("sub")
            i += 2
        elif c == "`":
            if kind == "bq":
                leave()
            else:
                enter("bq")
            i += 1
        elif c == "(":
            end()
            ctx[-1].parens += 1
            toks.append("SEP")
            i += 1
        elif c == ")":
            if ctx[-1].parens > 0:
                end()
                ctx[-1].parens -= 1
                toks.append("SEP")
            elif ctx[-1].cases > 0 or kind != "sub":
                end()
                toks.append("PAT")
            else:
                leave()
            i += 1
        elif two == ";;":
            end()
            toks.append("DSEMI")
            i += 2
        elif c in ";&|":
            end()
            toks.append("SEP")
            i += 1
        elif c in "<>":
            end()
            while i < n and src[i] in "<>&-":
                i += 1
            toks.append("REDIR")
        else:
            if c == "$":
                w().literal = False
            w().text += c
            i += 1
    end()
    return toks


HEREDOC_RE = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_]\w*)\2")


def split_heredocs(text):
    """(the text without heredoc bodies, [bodies])"""
    lines, out, bodies = text.split("\n"), [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        code = line.split(" #")[0] if not line.lstrip().startswith("#") \
            else ""
        for m in HEREDOC_RE.finditer(code):
            body = []
            while i < len(lines):
                end = lines[i].lstrip("\t") if m.group(1) else lines[i]
                i += 1
                if end == m.group(3):
                    break
                body.append(lines[i - 1])
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


def shell_uses(text, where):
    """{command: where}, [(python source, where)], {abs path: where}"""
    code, bodies = split_heredocs(text)
    funcs = set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)", code, re.M))
    cmds, paths = {}, {}
    pysrc = [(b, where + " (heredoc)") for b in bodies]
    # simple commands as lists of words
    segs, seg = [], []
    arm = None          # where in segs the current case arm starts
    target = False      # the next word is a redirection's target
    for t in sh_tokens(code) + ["SEP"]:
        if isinstance(t, Word):
            if not target:
                seg.append(t)
            target = False
        elif t == "REDIR":
            target = True
        elif t == "PAT":        # `pat1|pat2)`: drop the pattern's words
            del segs[len(segs) if arm is None else arm:]
            seg = []
        else:
            segs.append(seg)
            if seg and seg[0].literal and seg[0].text == "case":
                arm = len(segs)
            seg = []
            if t == "DSEMI":
                arm = len(segs)
    for words in segs:
        k = 0
        while k < len(words):
            wd = words[k]
            m = ASSIGN_RE.match(wd.text)
            if m:               # NAME=VALUE before the command
                if wd.literal and m.group(2).startswith("/"):
                    paths.setdefault(m.group(2), where)
                if wd.literal and m.group(1) in ("CC", "CXX") and \
                        NAME_RE.match(m.group(2)):
                    cmds.setdefault(m.group(2), where)
                k += 1
                continue
            if not wd.literal:  # "$TBENCH" ...: not a name to look up
                break
            name = wd.text
            if name in SH_WRAPPERS:
                # skip the wrapper's options (-v, -n N, -u NAME, NAME=V,
                # timeout's duration): the next word is a command
                k += 1
                while k < len(words) and words[k].literal and (
                        words[k].text.startswith("-") or
                        ASSIGN_RE.match(words[k].text) or
                        words[k].text[:1].isdigit() or
                        words[k - 1].text in ("-u", "-n")):
                    k += 1
                continue
            if name in ("if", "then", "else", "elif", "do", "while",
                        "until", "!", "{"):
                k += 1
                continue
            if name in SH_SKIP or name in funcs:
                break
            if name.startswith("/"):
                paths.setdefault(name, where)
            elif NAME_RE.match(name):
                cmds.setdefault(name, where)
            break
        # python's -c strings: any command that mentions python
        if words and "py" in words[0].text.lower():
            for a, b in zip(words, words[1:]):
                if a.text == "-c" and b.literal:
                    pysrc.append((b.text, where + " (-c)"))
    return cmds, pysrc, paths


# ---- Python ----------------------------------------------------------------

def py_imports(tree):
    mods = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            mods |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            mods.add(n.module.split(".")[0])
    return mods


def const_str(n):
    return n.value if isinstance(n, ast.Constant) and \
        isinstance(n.value, str) else None


def py_bindings(tree):
    """{name: {strings}} from `NAME = "x"` and `for NAME in ("x", ...)`
    (also `for (A, B) in (("x", ..), ...)`)."""
    b = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and const_str(n.value) is not None:
            for t in n.targets:
                if isinstance(t, ast.Name):
                    b.setdefault(t.id, set()).add(n.value.value)
        elif isinstance(n, ast.For) and isinstance(n.iter,
                                                   (ast.Tuple, ast.List)):
            for e in n.iter.elts:
                if isinstance(n.target, ast.Name) and const_str(e):
                    b.setdefault(n.target.id, set()).add(e.value)
                elif isinstance(n.target, ast.Tuple) and \
                        isinstance(e, (ast.Tuple, ast.List)):
                    for t, v in zip(n.target.elts, e.elts):
                        if isinstance(t, ast.Name) and const_str(v):
                            b.setdefault(t.id, set()).add(v.value)
    return b


SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output"}


def py_uses(tree, where):
    """{command: where}, {abs path: where} of one module."""
    binds = py_bindings(tree)
    cmds, paths = {}, {}

    def values(n):
        s = const_str(n)
        if s is not None:
            return {s}
        if isinstance(n, ast.Name):
            return binds.get(n.id, set())
        return set()

    for n in ast.walk(tree):
        s = const_str(n)
        if s and re.match(r"^/(usr/(?!local/)|s?bin/|lib/)[^\s*?:]*[^/]$",
                          s):
            paths.setdefault(s, where)
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else \
            f.id if isinstance(f, ast.Name) else ""
        base = f.value.id if isinstance(f, ast.Attribute) and \
            isinstance(f.value, ast.Name) else ""
        first = n.args[0] if n.args else None
        if first is None:
            continue
        if base == "subprocess" and fname in SUBPROCESS:
            got = values(first.elts[0]) if isinstance(
                first, (ast.List, ast.Tuple)) and first.elts else set()
        elif base == "os" and fname.startswith(("exec", "spawn")) or \
                fname == "which":
            got = values(first)
        else:
            continue
        for c in got:
            if c.startswith("/"):
                paths.setdefault(c, where)
            elif NAME_RE.match(c):
                cmds.setdefault(c, where)
    return cmds, paths


# ---- C and meson -----------------------------------------------------------

def c_sites():
    """{file: number of exec/popen/system/posix_spawn/dlopen calls}"""
    out = {}
    for f in files(["src/**/*.c", "src/**/*.h"]):
        with open(f, encoding="utf-8") as fh:
            text = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
        k = len(SITE_RE.findall(text))
        if k:
            out[rel(f)] = k
    return out


def c_headers(patterns):
    """{header: first file including it} of the .c/.h files"""
    out = {}
    for f in files(patterns):
        with open(f, encoding="utf-8", errors="replace") as fh:
            for m in re.finditer(r"^\s*#\s*include\s*<([^>]+)>", fh.read(),
                                 re.M):
                out.setdefault(m.group(1), rel(f))
    return out


def meson_programs(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"find_program\(\s*'([^'/]+)'", text)


# ---- what the project uses -------------------------------------------------

def readme_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        m = re.search(r"^```sh\n(.*?)^```", f.read(), re.S | re.M)
    return m.group(1).splitlines()[:2] if m else []


def gather():
    """uses[kind][name] = where, for kind command/module/path/header,
    and main[kind] the subset tbench itself needs."""
    uses = {k: {} for k in ("command", "module", "path", "header")}
    main = {k: {} for k in uses}

    def add(kind, found, also_main=False):    # the first place wins
        for k, v in found.items():
            uses[kind].setdefault(k, v)
            if also_main:
                main[kind].setdefault(k, v)

    pysrc = []
    for f in shell_files():
        with open(f, encoding="utf-8") as fh:
            c, p, paths = shell_uses(fh.read(), rel(f))
        add("command", c)
        add("path", paths)
        pysrc += p
    for i, cmdline in enumerate(readme_commands(), 1):
        c, _, paths = shell_uses(cmdline, f"README.md command {i}")
        add("command", c, also_main=i == 1)
        add("path", paths, also_main=i == 1)
    own = set()
    pyfiles = files(["scripts/**/*.py", "tests/**/*.py", "examples/**/*.py"])
    for f in pyfiles:
        own.add(os.path.splitext(os.path.basename(f))[0])
        with open(f, encoding="utf-8") as fh:
            pysrc.append((fh.read(), rel(f)))
    for src, where in pysrc:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue          # a heredoc that is JSON or text, not Python
        add("module", {m: where for m in py_imports(tree) if m not in own})
        c, paths = py_uses(tree, where)
        add("command", c)
        add("path", paths)
    for f, names in INDIRECT.items():
        add("command", {c: f for c in names})
    for f, (_, names) in RUNTIME_SITES.items():
        add("command", {c: f for c in names}, also_main=True)
    for f in files(["meson.build", "src/**/meson.build",
                    "tests/**/meson.build", "examples/**/meson.build"]):
        r = rel(f)
        progs = meson_programs(f) + (["cc"] if r == "meson.build" else [])
        add("command", {c: r for c in progs},
            also_main=not r.startswith("tests"))
    add("header", c_headers(["src/**/*.[ch]", "include/**/*.h"]),
        also_main=True)
    add("header", c_headers(["tests/**/*.[ch]", "examples/**/*.c"]))
    for p in [p for p in uses["path"] if os.path.isdir(p)]:
        del uses["path"][p]       # a folder: many packages own it
    for kind in uses:
        for d in (uses, main):
            for k in [k for k in d[kind] if k in NOT_DEBIAN]:
                del d[kind][k]
    return uses, main


# ---- resolving and packages --------------------------------------------------

def find_modules(names):
    """{module: file or None}: /usr/bin/python3's find_spec, run from an
    empty folder so that nothing of the project's shadows a module."""
    prog = r"""
import importlib.util, json, sys
out = {}
for m in json.load(sys.stdin):
    try:
        s = importlib.util.find_spec(m)
    except (ImportError, ValueError):
        s = None
    if s is None:
        out[m] = None
    elif s.origin in ("built-in", "frozen") or s.origin is None and \
            not s.submodule_search_locations:
        out[m] = sys.executable          # part of the interpreter
    elif s.origin:
        out[m] = s.origin
    else:                                # namespace package: its folder
        out[m] = list(s.submodule_search_locations)[0]
print(json.dumps(out))
"""
    r = subprocess.run([PY, "-I", "-c", prog], input=json.dumps(
        sorted(names)), capture_output=True, text=True, cwd="/")
    expect(r.returncode == 0, f"{PY}: {r.stderr[-800:]}")
    return json.loads(r.stdout)


def header_dirs():
    cc = shutil.which("cc", path=SYSPATH) or "cc"
    r = subprocess.run([cc, "-xc", "-E", "-v", "-"], input="",
                       capture_output=True, text=True)
    m = re.search(r"#include <\.\.\.> search starts here:\n(.*?)\nEnd",
                  r.stderr, re.S)
    return [d.strip() for d in m.group(1).splitlines()] if m else \
        ["/usr/include"]


def find_header(h, dirs):
    for d in dirs:
        p = os.path.join(d, h)
        if os.path.isfile(p):
            return p
    # a header in a per-flavour folder (blis.h: -isystem
    # /usr/include/MULTIARCH/blis-openmp in its Makefile)
    hits = sorted(glob.glob(f"/usr/include/**/{h}", recursive=True))
    return hits[0] if hits else None


def candidates(path):
    out = [path]
    real = os.path.realpath(path)
    if real != path:
        out.append(real)
    for p in list(out):
        for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"),
                     ("/usr/lib/", "/lib/")):
            if p.startswith(a):
                out.append(b + p[len(a):])
            elif p.startswith(b):
                out.append(a + p[len(b):])
    return out


def owners(paths):
    """{path: [packages]} via one dpkg -S call (the first candidate path
    that dpkg knows)."""
    cand = {p: candidates(p) for p in paths}
    allp = sorted({c for cs in cand.values() for c in cs})
    known = {}
    for i in range(0, len(allp), 200):
        r = subprocess.run(["dpkg", "-S", *allp[i:i + 200]],
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            if line.startswith("diversion ") or ": " not in line:
                continue
            pk, p = line.split(": ", 1)
            known[p] = [x.strip().split(":")[0] for x in pk.split(",")]
    return {p: next((known[c] for c in cs if c in known), [])
            for p, cs in cand.items()}


def installed():
    """({package: [dependency alternatives]}, {virtual: [providers]},
    {base packages}): the installed packages.  The base is what every
    Debian system has: the Essential packages and those of priority
    required (debootstrap's minbase, the smallest Debian root and the
    one scripts/fresh_check.sh starts from, holds exactly these and
    apt)."""
    r = subprocess.run(["dpkg-query", "-W", "-f",
                        "${Package}\t${db:Status-Abbrev}\t${Essential}\t"
                        "${Priority}\t${Depends}, ${Pre-Depends}\t"
                        "${Provides}\n"],
                       capture_output=True, text=True)
    deps, prov, base = {}, {}, set()

    def names(s):
        return [re.split(r"[\s:(]", a.strip())[0] for a in s.split("|")
                if a.strip()]

    for line in r.stdout.splitlines():
        f = line.split("\t")
        if len(f) < 6 or not f[1].startswith("ii"):
            continue
        pkg = f[0]
        deps[pkg] = [names(d) for d in f[4].split(",") if d.strip()]
        for v in f[5].split(","):
            if v.strip():
                prov.setdefault(names(v)[0], []).append(pkg)
        if f[2] == "yes" or f[3] == "required":
            base.add(pkg)
    return deps, prov, base


def closure(roots, deps, prov):
    """The installed packages that installing roots brings: every
    installed alternative of each dependency, and providers of virtual
    ones."""
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen or p not in deps:
            continue
        seen.add(p)
        for alts in deps[p]:
            for a in alts:
                todo += [a] if a in deps else prov.get(a, [])
    return seen


def setup_list(tests):
    r = subprocess.run(["sh", "scripts/setup.sh", "--list"] +
                       (["--tests"] if tests else []),
                       capture_output=True, text=True)
    expect(r.returncode == 0, f"setup.sh --list: {r.stderr}")
    return r.stdout.split()


# ---- the cases ---------------------------------------------------------------

STATE = {}


def state():
    if not STATE:
        deps, prov, base = installed()
        STATE["uses"], STATE["main"] = gather()
        STATE["deps"] = deps
        STATE["all"] = setup_list(True)
        STATE["mainset"] = setup_list(False)
        STATE["cov_all"] = closure(STATE["all"], deps, prov) | base
        STATE["cov_main"] = closure(STATE["mainset"], deps, prov) | base
        res = {}
        mods = find_modules(STATE["uses"]["module"])
        for m, p in mods.items():
            res[("module", m)] = p
        for c in STATE["uses"]["command"]:
            res[("command", c)] = shutil.which(c, path=SYSPATH)
        for p in STATE["uses"]["path"]:
            res[("path", p)] = p if os.path.exists(p) else None
        dirs = header_dirs()
        for h in STATE["uses"]["header"]:
            res[("header", h)] = find_header(h, dirs)
        STATE["res"] = res
        STATE["own"] = owners([p for p in res.values() if p])
    return STATE


def hint(kind, name):
    """A Debian package that may hold a module that is not installed."""
    if kind != "module" or not shutil.which("apt-cache", path=SYSPATH):
        return ""
    pk = "python3-" + name.lower().replace("_", "-")
    r = subprocess.run(["apt-cache", "show", "--no-all-versions", pk],
                       capture_output=True, text=True)
    return f" (Debian has {pk})" if r.returncode == 0 and r.stdout else ""


def check(kind, main_only=False):
    s = state()
    uses = (s["main"] if main_only else s["uses"])[kind]
    cov = s["cov_main"] if main_only else s["cov_all"]
    where = "scripts/setup.sh's main set" if main_only else \
        "scripts/setup.sh --tests"
    bad = []
    for name, src in sorted(uses.items()):
        path = s["res"][(kind, name)]
        if path is None:
            bad.append(f"{kind} {name} (used by {src}): not found here; "
                       f"is its package in {where}, and installed?"
                       f"{hint(kind, name)}")
            continue
        pk = s["own"].get(path, [])
        if not pk:
            bad.append(f"{kind} {name} (used by {src}): {path} belongs to "
                       f"no Debian package")
        elif not any(p in cov for p in pk):
            bad.append(f"{kind} {name} (used by {src}): {path} comes from "
                       f"{', '.join(pk)}, which {where} does not install "
                       f"(add it to the list)")
    expect(not bad, "\n".join(bad))


def need_dpkg():
    if not shutil.which("dpkg", path=SYSPATH) or not os.path.exists(PY):
        return "SKIP not a Debian system (no dpkg or /usr/bin/python3)"
    return None


@case("the scanner finds the known uses (gnuplot, valgrind, llvm-mca, "
      "sbatch, compare.py, torch, ...)")
def t_known():
    if need_dpkg():
        return need_dpkg()
    s = state()
    for kind, names in KNOWN.items():
        pool = {**s["uses"][kind], **s["uses"]["path"]}
        for n in names:
            expect(n in pool, f"{kind} {n}: not found by the scanner")


@case("every exec/popen/system/posix_spawn/dlopen call in src/ is in "
      "RUNTIME_SITES with its program")
def t_sites():
    got = c_sites()
    bad = []
    for f, k in sorted(got.items()):
        want = RUNTIME_SITES.get(f)
        if want is None:
            bad.append(f"{f}: {k} call(s) that start or load another "
                       f"program: list it (and its package) in "
                       f"RUNTIME_SITES")
        elif want[0] != k:
            bad.append(f"{f}: {k} such calls, RUNTIME_SITES says {want[0]}")
    for f in RUNTIME_SITES:
        if f not in got:
            bad.append(f"{f}: in RUNTIME_SITES but has no such call")
    for f, (_, names) in RUNTIME_SITES.items():
        if os.path.exists(f):
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            bad += [f"{f}: names no \"{c}\"" for c in names
                    if f'"{c}"' not in text]
    for f, names in INDIRECT.items():
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        bad += [f"{f}: INDIRECT names {c}, the file does not"
                for c in names if f'"{c}"' not in text]
    expect(not bad, "\n".join(bad))


@case("every package of setup.sh --tests is installed here")
def t_installed():
    if need_dpkg():
        return need_dpkg()
    s = state()
    miss = [p for p in s["all"] if p not in s["deps"]]
    expect(not miss, f"not installed: {' '.join(miss)} (run sh "
           f"scripts/setup.sh --tests; the other cases cannot see what "
           f"they bring)")


for _kind, _what in (("module", "Python module imported by scripts/ or "
                      "tests/"),
                     ("command", "external command of the scripts, tests, "
                      "C code, meson or README"),
                     ("path", "system file named by a script or test"),
                     ("header", "C header")):
    case(f"every {_what} comes from a package setup.sh --tests installs")(
        lambda k=_kind: need_dpkg() or check(k))

for _kind in ("command", "header"):
    case(f"every {_kind} tbench itself uses (src/, meson.build, README's "
         f"first command) comes from setup.sh's main set")(
        lambda k=_kind: need_dpkg() or check(k, main_only=True))

sys.exit(run_cases())
