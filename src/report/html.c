/* The report as one web page (html.h): the Markdown through cmark-gfm,
 * the charts' SVG inline, the per-case details (html_case.c), a style
 * sheet and the sort and filter script, all in the one file. */
#include "html.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/strbuf.h"
#include "tb_config.h"

#if HAVE_CMARK_GFM
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#endif

const char *tb_report_html_missing(void)
{
#if HAVE_CMARK_GFM
    return NULL;
#else
    return "this tbench was built without cmark-gfm (install "
           "libcmark-gfm-dev and libcmark-gfm-extensions-dev with sh "
           "scripts/setup.sh, then meson setup --reconfigure "
           "-Dhtml=enabled build)";
#endif
}

#if HAVE_CMARK_GFM

/* The page's style: tables that scroll sideways rather than overflow,
 * charts that shrink with the window. */
static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;max-width:1200px;"
    "margin:0 auto;padding:0 16px 40px;color:#1b1f24;background:#fff}\n"
    "h1{font-size:1.7em}h2{border-bottom:1px solid #d0d7de;"
    "padding-bottom:3px;margin-top:1.6em}\n"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px;"
    "display:block;overflow-x:auto;max-width:100%}\n"
    "th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;"
    "vertical-align:top}\n"
    "th{background:#f6f8fa}tbody tr:nth-child(even) td{background:#fafbfc}\n"
    "table.tb-sortable th{cursor:pointer;user-select:none}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}"
    "th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "code{font-size:12px;background:#f1f3f5;padding:1px 3px;"
    "border-radius:3px}pre{background:#f6f8fa;padding:8px;"
    "overflow-x:auto}pre code{background:none}\n"
    "svg.tb-chart{max-width:100%;height:auto;display:block;"
    "margin:8px 0}\n"
    ".tb-bar{position:sticky;top:0;background:#fff;padding:6px 0;"
    "border-bottom:1px solid #d0d7de;z-index:2}\n"
    "#tb-filter{width:30em;max-width:70%;padding:4px 6px}"
    "#tb-count{color:#57606a;margin-left:10px}\n"
    "details.tb-case{border:1px solid #d0d7de;margin:3px 0;"
    "padding:2px 8px}details.tb-case summary{cursor:pointer}\n"
    ".tb-case-body{display:flex;gap:18px;flex-wrap:wrap;"
    "align-items:flex-start;padding:4px 0}\n"
    "dl.tb-kv{display:grid;grid-template-columns:auto 1fr;"
    "gap:1px 14px;margin:0;flex:1 1 420px}dl.tb-kv dt{color:#57606a}dl.tb-kv dd{margin:0}\n"
    "[hidden]{display:none!important}\n"
    "nav.tb-toc{columns:3 16em;font-size:13px;margin:10px 0;"
    "padding:6px 10px;background:#f6f8fa;border:1px solid #d0d7de}"
    "nav.tb-toc a{display:block;color:#0550ae;text-decoration:none}\n";

/* Sorting: a click on a header sorts its table's body by that column,
 * a second click reverses; a cell that starts with a number sorts by
 * its value with the unit's scale (time units, SI and binary prefixes:
 * "1.2 ms" < "30 ms" < "1.5 s"), before text; empty cells go last.
 * Filtering: rows of every table and the case details whose text holds
 * the box's text (any case) stay, the others are hidden.  The class
 * tb-sortable on a table says its handlers are in place.  Contents: a
 * link to each section, put before the first. */
static const char script[] =
    "(function () {\n"
    "'use strict';\n"
    "var TIME = {ns: 1e-9, us: 1e-6, '\\u00b5s': 1e-6, ms: 1e-3, s: 1,\n"
    "            min: 60, h: 3600};\n"
    "var SI = {n: 1e-9, u: 1e-6, '\\u00b5': 1e-6, m: 1e-3, k: 1e3, K: 1e3,\n"
    "          M: 1e6, G: 1e9, T: 1e12, P: 1e15};\n"
    "var BIN = {K: 1024, M: 1048576, G: 1073741824, T: 1099511627776};\n"
    "var NUM = /^([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)\\s*"
    "([A-Za-z\\u00b5%]*)/;\n"
    "function value(text) {\n"
    "  var m = NUM.exec(text.trim());\n"
    "  if (!m) return null;\n"
    "  var v = parseFloat(m[1]), u = m[2], p = u.charAt(0);\n"
    "  if (Object.prototype.hasOwnProperty.call(TIME, u)) return v * TIME[u];\n"
    "  if (u.length >= 2 && u.charAt(1) === 'i' && BIN[p]) return v * BIN[p];\n"
    "  if (SI[p] && (u.length === 1 || /[A-Z]/.test(u.charAt(1))))\n"
    "    return v * SI[p];\n"
    "  return v;\n"
    "}\n"
    "function order(a, b) {\n"
    "  if (a.e !== b.e) return a.e ? 1 : -1;\n"
    "  if ((a.v === null) !== (b.v === null)) return a.v === null ? 1 : -1;\n"
    "  if (a.v !== null && a.v !== b.v) return a.v < b.v ? -1 : 1;\n"
    "  return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;\n"
    "}\n"
    "function sortBy(table, th, col) {\n"
    "  var body = table.tBodies[0];\n"
    "  if (!body) return;\n"
    "  var down = th.getAttribute('aria-sort') === 'ascending';\n"
    "  var rows = Array.prototype.map.call(body.rows, function (r, i) {\n"
    "    var c = r.cells[col], t = c ? c.textContent.trim() : '';\n"
    "    return {r: r, i: i, t: t, e: t === '', v: value(t)};\n"
    "  });\n"
    "  rows.sort(function (a, b) {\n"
    "    var o = order(a, b);\n"
    "    if (down && !a.e && !b.e) o = -o;\n"
    "    return o || a.i - b.i;\n"
    "  });\n"
    "  rows.forEach(function (x) { body.appendChild(x.r); });\n"
    "  Array.prototype.forEach.call(th.parentNode.cells, function (h) {\n"
    "    h.removeAttribute('aria-sort');\n"
    "  });\n"
    "  th.setAttribute('aria-sort', down ? 'descending' : 'ascending');\n"
    "}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table'),\n"
    "  function (table) {\n"
    "    var head = table.tHead && table.tHead.rows[0];\n"
    "    if (!head) return;\n"
    "    Array.prototype.forEach.call(head.cells, function (th, col) {\n"
    "      th.title = 'Sort by this column';\n"
    "      th.addEventListener('click', function () {\n"
    "        sortBy(table, th, col);\n"
    "      });\n"
    "    });\n"
    "    table.classList.add('tb-sortable');\n"
    "  });\n"
    "var h2s = document.querySelectorAll('main h2');\n"
    "if (h2s.length) {\n"
    "  var nav = document.createElement('nav');\n"
    "  nav.className = 'tb-toc';\n"
    "  nav.setAttribute('aria-label', 'Sections');\n"
    "  Array.prototype.forEach.call(h2s, function (h, i) {\n"
    "    if (!h.id) h.id = 'section-' + (i + 1);\n"
    "    var a = document.createElement('a');\n"
    "    a.href = '#' + h.id;\n"
    "    a.textContent = h.textContent;\n"
    "    nav.appendChild(a);\n"
    "  });\n"
    "  h2s[0].parentNode.insertBefore(nav, h2s[0]);\n"
    "}\n"
    "var box = document.getElementById('tb-filter');\n"
    "var count = document.getElementById('tb-count');\n"
    "var cases = document.querySelectorAll('details.tb-case');\n"
    "function filter() {\n"
    "  var q = box.value.trim().toLowerCase(), shown = 0;\n"
    "  Array.prototype.forEach.call(document.querySelectorAll('tbody tr'),\n"
    "    function (r) {\n"
    "      r.hidden = q !== '' &&\n"
    "        r.textContent.toLowerCase().indexOf(q) < 0;\n"
    "    });\n"
    "  Array.prototype.forEach.call(cases, function (d) {\n"
    "    d.hidden = q !== '' &&\n"
    "      d.getAttribute('data-id').toLowerCase().indexOf(q) < 0;\n"
    "    if (!d.hidden) shown++;\n"
    "  });\n"
    "  count.textContent = q === '' ? cases.length + ' cases' :\n"
    "    shown + ' of ' + cases.length + ' cases match';\n"
    "}\n"
    "if (box && count) {\n"
    "  box.addEventListener('input', filter);\n"
    "  filter();\n"
    "}\n"
    "})();\n";

/* Append svg (gnuplot's file) to b without its XML prolog, with every
 * id and reference to one prefixed by "cN-" (N = chart) so that the
 * page's charts keep apart, and the class tb-chart on its root. */
static void put_svg(tb_strbuf *b, const char *svg, int n)
{
    const char *p = strstr(svg, "<svg");
    if (!p) {
        tb_strbuf_add(b, "(chart %d: not an SVG file)", n);
        return;
    }
    tb_strbuf_add(b, "<svg class=\"tb-chart\"");
    p += 4;
    static const char *const refs[] = {"id='", "id=\"", "href='#",
                                       "href=\"#", "url(#"};
    while (*p) {
        const char *next = NULL;
        size_t len = 0;
        for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
            const char *q = strstr(p, refs[i]);
            if (q && (!next || q < next)) {
                next = q;
                len = strlen(refs[i]);
            }
        }
        if (!next) {
            tb_strbuf_add(b, "%s", p);
            break;
        }
        tb_strbuf_put(b, p, (size_t)(next - p) + len);
        tb_strbuf_add(b, "c%d-", n);
        p = next + len;
    }
    while (b->n && (b->p[b->n - 1] == '\n' || b->p[b->n - 1] == ' '))
        b->p[--b->n] = '\0';
}

/* The rendered chart named NAME when url is "REL/NAME.png", else NULL. */
static const tb_chart *chart_of(const tb_html_opts *o, const char *url)
{
    size_t rl = strlen(o->chart_rel), ul = strlen(url);
    if (!o->charts || !o->chart_dir || ul < rl + 5 ||
        strncmp(url, o->chart_rel, rl) || url[rl] != '/' ||
        strcmp(url + ul - 4, ".png"))
        return NULL;
    const char *name = url + rl + 1;
    size_t nl = ul - rl - 5;
    for (int i = 0; i < o->charts->n; i++) {
        const tb_chart *c = &o->charts->v[i];
        if (c->rendered && strlen(c->name) == nl &&
            !strncmp(c->name, name, nl))
            return c;
    }
    return NULL;
}

/* Does url name a scheme ("http:", "javascript:") or another host
 * ("//host")?  The page links only inside the repository. */
static bool foreign_url(const char *url)
{
    if (url[0] == '/' && url[1] == '/')
        return true;
    for (const char *p = url; *p && *p != '/' && *p != '?' && *p != '#';
         p++)
        if (*p == ':')
            return true;
    return false;
}

/* Replace node by a new node of type with literal text (NULL: move
 * node's children in its place).  Returns 0 or TB_ENOMEM. */
static int replace(cmark_node *node, cmark_node_type type, const char *text)
{
    if (text) {
        cmark_node *t = cmark_node_new(type);
        if (!t || !cmark_node_set_literal(t, text) ||
            !cmark_node_insert_before(node, t)) {
            cmark_node_free(t);
            return TB_ENOMEM;
        }
    } else {
        cmark_node *ch;
        while ((ch = cmark_node_first_child(node)))
            if (!cmark_node_insert_before(node, ch))
                return TB_ENOMEM;
    }
    cmark_node_free(node); /* unlinks it */
    return 0;
}

/* The alt text of image node im (its text children), into b. */
static void alt_text(cmark_node *im, tb_strbuf *b)
{
    for (cmark_node *c = cmark_node_first_child(im); c;
         c = cmark_node_next(c)) {
        const char *t = cmark_node_get_literal(c);
        if (t)
            tb_strbuf_add(b, "%s", t);
    }
}

/* One node that the page changes (collected first: the tree changes
 * under an iterator). */
static int fix_node(cmark_node *node, const tb_html_opts *o, int *n_chart,
                    char *err, size_t errlen)
{
    cmark_node_type t = cmark_node_get_type(node);
    if (t == CMARK_NODE_HTML_INLINE)
        return replace(node, CMARK_NODE_TEXT, cmark_node_get_literal(node));
    if (t == CMARK_NODE_HTML_BLOCK)
        return replace(node, CMARK_NODE_CODE_BLOCK,
                       cmark_node_get_literal(node));
    const char *url = cmark_node_get_url(node);
    if (t == CMARK_NODE_LINK)
        return foreign_url(url ? url : "") ? replace(node, 0, NULL) : 0;
    /* an image: a chart inline, anything else its alt text */
    const tb_chart *ch = chart_of(o, url ? url : "");
    tb_strbuf b = {0};
    int rc = 0;
    if (ch) {
        char path[8192], *svg = NULL;
        snprintf(path, sizeof path, "%s/%s.svg", o->chart_dir, ch->name);
        rc = tb_read_file(path, &svg, NULL, err, errlen);
        if (rc)
            return rc;
        put_svg(&b, svg, ++*n_chart);
        free(svg);
    } else {
        alt_text(node, &b);
    }
    char *text = tb_strbuf_take(&b);
    if (!text)
        return TB_ENOMEM;
    rc = replace(node, ch ? CMARK_NODE_HTML_INLINE : CMARK_NODE_TEXT, text);
    free(text);
    return rc;
}

/* Make the parsed report safe and self-contained (tb_report_html's
 * rules).  0, TB_EIO or TB_ENOMEM. */
static int fix_tree(cmark_node *doc, const tb_html_opts *o, int *n_chart,
                    char *err, size_t errlen)
{
    cmark_node **v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    cmark_iter *it = cmark_iter_new(doc);
    if (!it)
        return TB_ENOMEM;
    cmark_event_type ev;
    while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
        cmark_node *node = cmark_iter_get_node(it);
        cmark_node_type t = cmark_node_get_type(node);
        if (ev != CMARK_EVENT_ENTER ||
            (t != CMARK_NODE_HTML_INLINE && t != CMARK_NODE_HTML_BLOCK &&
             t != CMARK_NODE_LINK && t != CMARK_NODE_IMAGE))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cmark_node **nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                rc = TB_ENOMEM;
                break;
            }
            v = nv;
        }
        v[n++] = node;
    }
    cmark_iter_free(it);
    /* innermost last: an image inside a link goes before the link */
    for (size_t i = n; i-- > 0 && !rc;)
        rc = fix_node(v[i], o, n_chart, err, errlen);
    free(v);
    return rc;
}

/* md rendered to HTML (GFM tables), the tree fixed first.  *out heap. */
static int render(const char *md, const tb_html_opts *o, char **out,
                  int *n_chart, char *err, size_t errlen)
{
    *out = NULL;
    cmark_gfm_core_extensions_ensure_registered();
    cmark_parser *p = cmark_parser_new(CMARK_OPT_VALIDATE_UTF8);
    cmark_syntax_extension *table = cmark_find_syntax_extension("table");
    if (!p || !table || !cmark_parser_attach_syntax_extension(p, table)) {
        if (p)
            cmark_parser_free(p);
        snprintf(err, errlen, "cmark-gfm: no table extension");
        return TB_ENOMEM;
    }
    cmark_parser_feed(p, md, strlen(md));
    cmark_node *doc = cmark_parser_finish(p);
    int rc = doc ? fix_tree(doc, o, n_chart, err, errlen) : TB_ENOMEM;
    if (!rc) {
        /* unsafe: the raw HTML left is this file's SVG (fix_tree made
         * the Markdown's own raw HTML text) */
        *out = cmark_render_html(doc, CMARK_OPT_UNSAFE,
                                 cmark_parser_get_syntax_extensions(p));
        if (!*out)
            rc = TB_ENOMEM;
    }
    if (doc)
        cmark_node_free(doc);
    cmark_parser_free(p);
    return rc;
}

int tb_report_html(const tb_rset *s, const char *md, const tb_html_opts *o,
                   char **html, int *n_charts, char *err, size_t errlen)
{
    *html = NULL;
    *n_charts = 0;
    char *body = NULL;
    int rc = render(md, o, &body, n_charts, err, errlen);
    if (rc)
        return rc;
    tb_strbuf b = {0};
    tb_strbuf_add(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                      "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                      "content=\"width=device-width, initial-scale=1\">\n"
                      "<title>tbench performance report</title>\n"
                      "<style>\n%s</style>\n</head>\n<body>\n", css);
    tb_strbuf_add(&b, "<div class=\"tb-bar\"><input id=\"tb-filter\" "
                      "type=\"search\" placeholder=\"Filter table rows "
                      "and case details (id, op, backend...)\" "
                      "aria-label=\"Filter\"><span id=\"tb-count\">"
                      "</span></div>\n<main>\n%s", body);
    /* free() is cmark's default allocator's */
    free(body);
    tb_html_cases(s, &b);
    tb_strbuf_add(&b, "</main>\n<script>\n%s</script>\n</body>\n</html>\n",
                  script);
    *html = tb_strbuf_take(&b);
    return *html ? 0 : TB_ENOMEM;
}

#else /* !HAVE_CMARK_GFM */

int tb_report_html(const tb_rset *s, const char *md, const tb_html_opts *o,
                   char **html, int *n_charts, char *err, size_t errlen)
{
    (void)s;
    (void)md;
    (void)o;
    *html = NULL;
    *n_charts = 0;
    snprintf(err, errlen, "%s", tb_report_html_missing());
    return TB_EUNAVAILABLE;
}

#endif
