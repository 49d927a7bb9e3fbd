#!/usr/bin/python3
"""CLI and browser tests of `tbench report --html`, printed as TAP.

Usage: test_cli_html.py PATH/TO/tbench   (run from the repository root,
with Debian's /usr/bin/python3)

The page is made from test_cli_report.py's golden fixture
(tests/data/report/: mixed.json with baseline.json and numpy.json) and
checked against the Markdown report of the same files: every section
heading and every table, the charts inline as SVG (one per image line
of the Markdown), nothing loaded from the network, ids escaped.  The
browser cases load it in headless Chromium (Debian's `chromium`; skipped
with the reason when it is not installed): no console message, the
script's sort handlers in place, a click on a header sorting by value
("150 ns" < "9.00 us"), the filter box hiding rows and cases, and a
screenshot that is 1280 wide and not one colour.

TBENCH_NOHTML=PATH names a tbench built with -Dhtml=disabled: its
--html must say why in one line and exit 2 (skipped without it, or
checked on PATH/TO/tbench itself when that one lacks cmark-gfm).
"""
import html
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
DATA = os.path.abspath("tests/data/report")
TMP = tempfile.mkdtemp(prefix="tbench-html-")
CHROMIUM = shutil.which("chromium")
HAVE_GNUPLOT = shutil.which("gnuplot") is not None
GOLDEN_ARGS = ["mixed.json", "--baseline", "baseline.json",
               "--with", "numpy.json"]
ODD = "<b>&x"  # a backend axis value that HTML must escape


def workdir(name):
    """A fresh folder with the golden fixture's files."""
    d = tempfile.mkdtemp(prefix=name + "-", dir=TMP)
    for f in ("mixed.json", "baseline.json", "numpy.json"):
        shutil.copy(os.path.join(DATA, f), d)
    return d


def run(args, cwd, exe=TBENCH):
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def make(d, *extra, name="report"):
    """(Markdown, page, stdout of --html) of the fixture in d."""
    p = run(["report", *GOLDEN_ARGS, *extra, "-o", name + ".md"], d)
    expect(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}")
    p = run(["report", *GOLDEN_ARGS, *extra, "--html", "-o",
             name + ".html"], d)
    expect(p.returncode == 0, f"--html: exit {p.returncode}: {p.stderr}")
    return (read(os.path.join(d, name + ".md")),
            read(os.path.join(d, name + ".html")), p.stdout)


class Page(html.parser.HTMLParser):
    """Headings, tables (header cells), svg roots, links and the
    case details' ids of a page, with text unescaped by the parser."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.headings, self.tables, self.details = [], [], []
        self.svgs, self.urls, self.classes = [], [], []
        self._text = None
        self._in_svg = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("class"):
            self.classes.append(a["class"])
        for k in ("src", "href", "xlink:href"):
            if k in a:
                self.urls.append(a[k])
        if tag == "svg":
            if not self._in_svg:
                self.svgs.append(a.get("class", ""))
            self._in_svg += 1
        elif tag == "table":
            self.tables.append([])
        elif tag == "details":
            self.details.append(a.get("data-id"))
        if tag in ("h1", "h2", "h3", "h4", "th"):
            self._text = ""

    def handle_endtag(self, tag):
        if tag == "svg":
            self._in_svg -= 1
        elif tag in ("h1", "h2", "h3", "h4") and self._text is not None:
            self.headings.append(self._text.strip())
            self._text = None
        elif tag == "th" and self._text is not None:
            self.tables[-1].append(self._text.strip())
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text += data


def parse(page):
    p = Page()
    p.feed(page)
    p.close()
    return p


def md_text(s):
    """Markdown inline text as the page shows it (code spans, escapes)."""
    return s.replace("`", "").replace("\\|", "|").strip()


def md_headings(md):
    out, fence = [], False
    for line in md.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,4} ", line):
            out.append(md_text(line.lstrip("#")))
    return out


def md_tables(md):
    """The header cells of every table of the Markdown."""
    lines = md.split("\n")
    return [[md_text(c) for c in re.split(r"(?<!\\)\|", lines[i])[1:-1]]
            for i in range(len(lines) - 1)
            if lines[i].startswith("|") and
            re.match(r"^\|(-+\|)+$", lines[i + 1])]


# ---- the page against the Markdown ---------------------------------------

@case("--html page has every section heading and table of the Markdown")
def t_sections():
    md, page, _ = make(workdir("sections"), "--no-charts")
    p = parse(page)
    want = md_headings(md)
    expect(len(want) > 15, f"only {len(want)} headings in the Markdown")
    expect(p.headings[:len(want)] == want,
           f"headings differ:\n  md:   {want}\n  html: {p.headings}")
    expect(p.headings[len(want):] == ["Case details"],
           f"after the Markdown's sections: {p.headings[len(want):]}")
    tabs = md_tables(md)
    expect(p.tables == tabs, f"{len(p.tables)} tables, the Markdown has "
           f"{len(tabs)}; first difference: " +
           str(next(((a, b) for a, b in zip(p.tables, tabs) if a != b),
                    None)))
    expect(page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">'
           in page, "not an HTML5 page in UTF-8")
    # one detail per ok case of the main run
    ok = [c["id"] for c in json.load(open(os.path.join(DATA, "mixed.json")))
          ["cases"] if c["status"] == "ok"]
    expect(p.details == ok, f"case details {p.details}, ok cases {ok}")


@case("--html charts are inline SVG, one per image line; no network")
def t_charts():
    if not HAVE_GNUPLOT:
        return "SKIP gnuplot is not installed (sh scripts/setup.sh)"
    d = workdir("charts")
    md, page, out = make(d)
    images = re.findall(r"^!\[.*\]\(perf/[^)]+\.png\)$", md, re.M)
    expect(len(images) >= 8, f"only {len(images)} charts in the Markdown")
    p = parse(page)
    charts = [c for c in p.svgs if c == "tb-chart"]
    expect(len(charts) == len(images),
           f"{len(charts)} inline charts, {len(images)} image lines")
    expect(f"({len(images)} charts inline)" in out, f"stdout: {out}")
    expect(len(p.svgs) == len(charts) + len(p.details),
           f"{len(p.svgs)} svg: not one per chart and one per case")
    expect("<img" not in page and "<?xml" not in page,
           "an <img> or an XML prolog left in the page")
    for u in p.urls:
        expect(not re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", u, re.I),
               f"a link or source outside the page: {u}")
    # ids of one chart do not collide with another's
    ids = re.findall(r"\sid=['\"]([^'\"]+)['\"]", page)
    dup = sorted({i for i in ids if ids.count(i) > 1})
    expect(not dup, f"ids used twice: {dup[:5]}")
    expect(sorted(os.listdir(d)) == ["baseline.json", "mixed.json",
                                     "numpy.json", "perf", "report.html",
                                     "report.md"],
           f"--html left files behind: {sorted(os.listdir(d))}")


@case("--html escapes ids with < > & (text, attributes, charts)")
def t_escaped():
    d = workdir("odd")
    doc = json.load(open(os.path.join(d, "mixed.json")))
    odd = []
    for c in doc["cases"]:
        if c["backend"] == "cpu" and c["backend_params"].get("threads") == "1":
            c["backend_params"]["tag"] = ODD
            c["id"] = c["id"][:-1] + ",tag=" + ODD + "]"
            if c["status"] == "ok":
                odd.append(c["id"])
    with open(os.path.join(d, "odd.json"), "w") as f:
        json.dump(doc, f)
    p = run(["report", "odd.json", "--html", "-o", "odd.html"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    page = read(os.path.join(d, "odd.html"))
    expect(ODD not in page and "<b>" not in page,
           "the raw id text is in the page")
    expect(page.count("&lt;b&gt;&amp;x") >= 2 * len(odd),
           "the escaped id is not in the text")
    got = [i for i in parse(page).details if ODD in i]
    expect(got == odd, f"details' ids {got}, want {odd}")


@case("--html: a bad -o or --charts is one line, exit 2")
def t_bad_out():
    d = workdir("badout")
    os.mkdir(os.path.join(d, "dir"))
    open(os.path.join(d, "file"), "w").close()
    for out in ("dir", "file/report.html"):
        p = run(["report", "mixed.json", "--html", "-o", out], d)
        expect(p.returncode == 2, f"-o {out}: exit {p.returncode}")
        expect(len(p.stderr.splitlines()) == 1 and "-o" in p.stderr,
               f"-o {out}: {p.stderr!r}")
    p = run(["report", "mixed.json", "--html", "--charts", "c", "-o",
             "r.html"], d)
    expect(p.returncode == 2 and "--charts" in p.stderr,
           f"--charts: exit {p.returncode}: {p.stderr!r}")
    expect(sorted(os.listdir(d)) == ["baseline.json", "dir", "file",
                                     "mixed.json", "numpy.json"],
           f"files written: {sorted(os.listdir(d))}")


@case("--html without gnuplot: the page without charts, a note, exit 0")
def t_no_gnuplot():
    d = workdir("nognuplot")
    p = subprocess.run([TBENCH, "report", "mixed.json", "--html", "-o",
                        "r.html"], cwd=d, capture_output=True, text=True,
                       env=dict(os.environ,
                                TBENCH_GNUPLOT="/nonexistent/gnuplot"),
                       timeout=300)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    expect("(0 charts inline)" in p.stdout and "gnuplot not found" in
           p.stderr, f"stdout {p.stdout!r}, stderr {p.stderr!r}")
    page = read(os.path.join(d, "r.html"))
    expect('class="tb-chart"' not in page and "<img" not in page,
           "a chart or an image in the page")
    expect(sorted(os.listdir(d)) == ["baseline.json", "mixed.json",
                                     "numpy.json", "r.html"],
           f"files left: {sorted(os.listdir(d))}")


def have_cmark(exe):
    cfg = os.path.join(os.path.dirname(exe), "tb_config.h")
    if not os.path.exists(cfg):
        return None
    return "#define HAVE_CMARK_GFM 1" in read(cfg)


@case("--html without cmark-gfm is one line, exit 2")
def t_no_cmark():
    exe = os.environ.get("TBENCH_NOHTML")
    if not exe and have_cmark(TBENCH) is False:
        exe = TBENCH
    if not exe:
        return ("SKIP this tbench has cmark-gfm; set TBENCH_NOHTML to a "
                "tbench built with -Dhtml=disabled")
    d = workdir("nocmark")
    p = run(["report", "mixed.json", "--html", "-o", "r.html"], d,
            exe=os.path.abspath(exe))
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect(len(p.stderr.splitlines()) == 1 and "cmark-gfm" in p.stderr,
           f"stderr: {p.stderr!r}")
    expect(not os.path.exists(os.path.join(d, "r.html")), "page written")


# ---- in a browser -------------------------------------------------------

def chromium(args, page_path):
    """Run headless Chromium on the file: (stdout, console lines, s)."""
    prof = tempfile.mkdtemp(prefix="chromium-", dir=TMP)
    t = time.monotonic()
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--enable-logging=stderr", "--v=0", "--user-data-dir=" + prof,
         *args, "file://" + page_path],
        capture_output=True, text=True, timeout=120)
    console = [l for l in p.stderr.splitlines()
               if ":CONSOLE" in l or "Uncaught" in l]
    return p.stdout, console, time.monotonic() - t


# After the page's own script: sort the Element-wise table by Median,
# twice, and filter by "relu"; the results go into the DOM.
PROBE = """<script>
(function () {
  var h2 = Array.prototype.filter.call(document.querySelectorAll('h2'),
    function (h) { return h.textContent === 'Element-wise'; })[0];
  var t = h2.nextElementSibling;
  while (t.tagName !== 'TABLE') t = t.nextElementSibling;
  var th = Array.prototype.filter.call(t.tHead.rows[0].cells,
    function (c) { return c.textContent === 'Median'; })[0];
  function col() {
    return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
      return r.cells[th.cellIndex].textContent; }).join('|');
  }
  th.click();
  document.body.setAttribute('data-up', col());
  th.click();
  document.body.setAttribute('data-down', col());
  var box = document.getElementById('tb-filter');
  box.value = 'RELU';
  box.dispatchEvent(new Event('input'));
  var shown = Array.prototype.filter.call(
    document.querySelectorAll('details.tb-case'),
    function (d) { return !d.hidden; }).length;
  var rows = Array.prototype.filter.call(t.tBodies[0].rows,
    function (r) { return !r.hidden; }).length;
  document.body.setAttribute('data-filter', shown + ' ' + rows + ' ' +
    document.getElementById('tb-count').textContent);
})();
</script>"""


def unfilter_row(ft, row, prev, bpp):
    """One PNG row without its filter (None, Sub, Up, Average, Paeth)."""
    if ft == 0:
        return row
    if ft == 2:
        return (row + prev) & 255
    if ft == 1:  # each channel a running sum mod 256
        return (numpy.cumsum(row.reshape(-1, bpp), axis=0,
                             dtype=numpy.uint64) & 255
                ).astype(numpy.int64).reshape(-1)
    out = row.tolist()
    up = prev.tolist()
    for x in range(len(out)):
        a = out[x - bpp] if x >= bpp else 0
        b = up[x]
        if ft == 3:
            out[x] = (out[x] + (a + b) // 2) & 255
        else:
            c = up[x - bpp] if x >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
            out[x] = (out[x] + pr) & 255
    return numpy.array(out, dtype=numpy.int64)


def png_pixels(path):
    """(width, height, number of distinct pixels) of an 8-bit RGB(A)
    PNG, decoded with zlib and the five row filters."""
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    expect(depth == 8 and ctype in (2, 6), f"PNG type {depth}/{ctype}")
    bpp = 3 if ctype == 2 else 4
    idat, i = b"", 8
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        if kind == b"IDAT":
            idat += data[i + 8:i + 8 + n]
        i += 12 + n
    raw = numpy.frombuffer(zlib.decompress(idat), dtype=numpy.uint8)
    raw = raw.reshape(h, w * bpp + 1).astype(numpy.int64)
    prev = numpy.zeros(w * bpp, dtype=numpy.int64)
    pixels = numpy.empty((h, w * bpp), dtype=numpy.uint8)
    for y in range(h):
        prev = unfilter_row(int(raw[y, 0]), raw[y, 1:], prev, bpp)
        pixels[y] = prev
    px = pixels.reshape(-1, bpp).astype(numpy.uint64)
    packed = px[:, 0] << 16 | px[:, 1] << 8 | px[:, 2]
    if bpp == 4:
        packed = packed * 256 + px[:, 3]
    return w, h, len(numpy.unique(packed))


def browser_page():
    d = workdir("browser")
    _, page, _ = make(d)
    return d, page


@case("browser: the page loads with no console message; sort handlers set")
def t_browser_load():
    if not CHROMIUM:
        return "SKIP chromium is not installed (sh scripts/setup.sh --tests)"
    d, page = browser_page()
    expect('class="tb-sortable"' not in page,
           "the marker is in the file itself")
    dom, console, secs = chromium(["--dump-dom"],
                                  os.path.join(d, "report.html"))
    expect(not console, "console: " + "\n".join(console))
    n = len(re.findall(r"<table[^>]*class=\"tb-sortable\"", dom))
    expect(n == page.count("<table>") and n > 10,
           f"{n} tables with sort handlers of {page.count('<table>')}")
    expect(re.search(r'id="tb-count">14 cases<', dom), "case count unset")
    toc = re.search(r'<nav class="tb-toc"[^>]*>(.*?)</nav>', dom)
    expect(toc, "no contents")
    links = re.findall(r'<a href="#([^"]+)">', toc.group(1))
    ids = re.findall(r'<h2 id="([^"]+)">', dom)
    expect(links == ids and len(ids) == page.count("<h2"),
           f"contents {links}, sections {ids}")
    print(f"# chromium --dump-dom: {secs:.1f} s")


@case("browser: a header click sorts by value, the box filters")
def t_browser_sort():
    if not CHROMIUM:
        return "SKIP chromium is not installed (sh scripts/setup.sh --tests)"
    d, page = browser_page()
    probe = os.path.join(d, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "\n</body>"))
    dom, console, _ = chromium(["--dump-dom"], probe)
    expect(not console, "console: " + "\n".join(console))
    up = re.search(r'data-up="([^"]*)"', dom)
    down = re.search(r'data-down="([^"]*)"', dom)
    filt = re.search(r'data-filter="([^"]*)"', dom)
    expect(up and down and filt, "the probe did not run")
    want = "150 ns|900 ns|9.00 us|12.0 us|90.0 us|150 us"
    expect(up.group(1) == want, f"ascending: {up.group(1)}")
    expect(down.group(1) == "|".join(reversed(want.split("|"))),
           f"descending: {down.group(1)}")
    # relu's 3 cases and add_relu's one
    expect(filt.group(1) == "4 0 4 of 14 cases match",
           f"filter 'RELU': {filt.group(1)}")


@case("browser: the screenshot is 1280 wide and not one colour")
def t_browser_shot():
    if not CHROMIUM:
        return "SKIP chromium is not installed (sh scripts/setup.sh --tests)"
    d, _ = browser_page()
    blank = os.path.join(d, "blank.html")
    with open(blank, "w") as f:
        f.write("<!DOCTYPE html><html><body></body></html>")
    for page, want_blank in ((os.path.join(d, "report.html"), False),
                             (blank, True)):
        shot = page + ".png"
        _, console, secs = chromium(["--hide-scrollbars",
                                     "--window-size=1280,600",
                                     "--screenshot=" + shot], page)
        expect(os.path.exists(shot), f"no screenshot of {page}")
        t = time.monotonic()
        w, h, colours = png_pixels(shot)
        print(f"# screenshot {secs:.1f} s, decoded in "
              f"{time.monotonic() - t:.1f} s")
        expect((w, h) == (1280, 600), f"screenshot {w}x{h}")
        expect((colours == 1) == want_blank,
               f"{os.path.basename(page)}: {colours} colour(s)")


if __name__ == "__main__":
    t0 = time.monotonic()
    rc = run_cases(lambda failed: failed or shutil.rmtree(TMP, True))
    print(f"# {time.monotonic() - t0:.1f} s in all")
    sys.exit(rc)
