#!/usr/bin/env python3
"""The house's measures of issue 26, computed the same way every time.

Usage: house_metrics.py [--list] [--no-duplicates]   (from the repository root)

  files over 1,500 lines      .c .h .cu .cuh .inc files in src/
  functions over 150 lines    universal-ctags' function extents (kind f,
                              field end) of the .c and .cu files in src/
  raw result-key reads        calls that read a JSON object by key
                              (cJSON_GetObjectItem*, cJSON_HasObjectItem,
                              jget, tb_json_*) in the code that consumes
                              result files: src/report/ and src/cli/,
                              except the one loader (report/resultsio*.c:
                              resultsio.c and its parts _case, _json, _run,
                              _breakdown);
                              the writer (harness/results.c) and the
                              config parser are not consumers
  circles of files            pairs of .c files of one folder that each
                              call a non-static function the other defines
  duplicates' pairs           `duplicates --repo src --most 200`: every row
                              not marked boilerplate
--list prints the offenders under each figure.
"""
import os
import re
import subprocess
import sys

SRC = "src"
EXTS = (".c", ".h", ".cu", ".cuh", ".inc")
KEY_READ = re.compile(r"\b(cJSON_GetObjectItem(CaseSensitive)?|"
                      r"cJSON_HasObjectItem|jget|tb_json_[a-z_]+)\s*\(")
LOADER = {os.path.join("src", "report", f"resultsio{part}.c")
          for part in ("", "_case", "_json", "_run", "_breakdown")}


def files(exts=EXTS):
    for d, _, fs in os.walk(SRC):
        for f in sorted(fs):
            if f.endswith(exts):
                yield os.path.join(d, f)


def big_files():
    out = []
    for p in files():
        n = sum(1 for _ in open(p, encoding="utf-8", errors="replace"))
        if n > 1500:
            out.append(f"{p} {n}")
    return out


def ctags(paths):
    p = subprocess.run(["ctags", "-x", "--_xformat=%N %K %F %n %e",
                        "--kinds-C=f", "--kinds-C++=f", "--language-force=C++",
                        *paths], capture_output=True, text=True)
    for ln in p.stdout.splitlines():
        parts = ln.split()
        if len(parts) == 5 and parts[1] == "function" and \
                parts[4].isdigit():
            yield parts[0], parts[2], int(parts[3]), int(parts[4])


def long_functions():
    out = []
    for name, path, a, b in ctags(list(files((".c", ".cu")))):
        if b - a + 1 > 150:
            out.append(f"{path}:{a} {name} {b - a + 1}")
    return out


def key_reads():
    out = []
    for p in files((".c",)):
        top = p.split(os.sep)[1]
        if top not in ("report", "cli") or p in LOADER:
            continue
        n = 0
        for ln in open(p, encoding="utf-8", errors="replace"):
            s = ln.strip()
            if s.startswith(("//", "*", "/*")):
                continue
            n += len(KEY_READ.findall(ln))
        if n:
            out.append((p, n))
    return out


def circles():
    defs = {}
    static = set()
    for p in files((".c",)):
        text = open(p, encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"^static\b[^;{(]*?\b(\w+)\s*\(", text, re.M):
            static.add((p, m.group(1)))
    for name, path, _, _ in ctags(list(files((".c",)))):
        # a macro that names the defined function (TB_CPU_KFN(op, dt,
        # level)(...): a kernel row) is no function of that file: every
        # file using the macro would seem to call it
        if (path, name) not in static and not re.fullmatch(r"[A-Z0-9_]+",
                                                             name):
            defs.setdefault(name, set()).add(path)
    calls = {}
    for p in files((".c",)):
        text = open(p, encoding="utf-8", errors="replace").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in re.finditer(r"\b(\w+)\s*\(", text):
            where = defs.get(m.group(1), set())
            if p in where:  # its own (same-named per-ISA copies)
                continue
            for q in where:
                if os.path.dirname(q) == os.path.dirname(p):
                    calls.setdefault(p, set()).add(q)
    out = []
    for p, qs in calls.items():
        for q in qs:
            if p < q and p in calls.get(q, set()):
                out.append(f"{p} <-> {q}")
    return sorted(out)


def duplicates():
    try:
        p = subprocess.run(["duplicates", "--repo", SRC, "--most", "200",
                            "--seconds", "300"], capture_output=True,
                           text=True)
    except OSError:
        return None
    rows = [ln for ln in p.stdout.splitlines() if re.match(r"^D\d+ ", ln)]
    real = [ln for ln in rows if "boilerplate" not in ln]
    more = re.search(r"\(\+(\d+) more pairs\)", p.stdout)
    return real, rows, int(more.group(1)) if more else 0, p.stdout


def main(argv):
    show = "--list" in argv
    res = [("files over 1,500 lines", big_files()),
           ("functions over 150 lines", long_functions())]
    kr = key_reads()
    res.append(("raw result-key reads", [f"{p} {n}" for p, n in kr]))
    res.append(("circles of files", circles()))
    for name, items in res:
        n = sum(int(x.split()[-1]) for x in items) \
            if name == "raw result-key reads" else len(items)
        print(f"{name}: {n}")
        if show:
            for x in items:
                print(f"  {x}")
    if "--no-duplicates" not in argv:
        d = duplicates()
        if d is None:
            print("duplicates' pairs: not counted (the `duplicates` tool "
                  "of the development workplace is not on PATH)")
            return 0
        real, rows, more, text = d
        print(f"duplicates' pairs (not boilerplate): {len(real)} of "
              f"{len(rows)} listed" + (f" (+{more} not listed)" if more
                                       else ""))
        if show:
            for x in real:
                print(f"  {x}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
