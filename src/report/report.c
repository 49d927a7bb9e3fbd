/* Result-file loading for plot/report, and the Markdown report.  See
 * report.h for the contracts; the rules each section applies are stated
 * in the section's own text so a reader of the report can check them. */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "compare.h"
#include "plot.h"
#include "training.h"

/* ---- small helpers ------------------------------------------------------- */

static const cJSON *jget(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Copy n bytes of src into dst (size len) as a NUL-terminated string. */
static void copy_part(char *dst, size_t len, const char *src, size_t n)
{
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ---- loading ------------------------------------------------------------- */

/* Split c's id OP[PARAMS]/SHAPES/DTYPE/BACKEND[AXES] into key, opp,
 * shapes and variant.  An id of another form (the loader only asks for a
 * unique string) stands for itself: key = id, opp = op, no shapes,
 * variant = backend. */
static void split_id(tb_rcase *c)
{
    const char *id = c->id;
    const char *p1 = strchr(id, '/');
    const char *p2 = p1 ? strchr(p1 + 1, '/') : NULL;
    const char *p3 = strrchr(id, '/');
    if (!p1 || !p2 || p3 <= p2 || p1 == id || p3[1] == '\0') {
        snprintf(c->key, sizeof c->key, "%s", id);
        snprintf(c->opp, sizeof c->opp, "%s", c->op);
        c->shapes[0] = '\0';
        snprintf(c->variant, sizeof c->variant, "%s", c->backend);
        return;
    }
    copy_part(c->key, sizeof c->key, id, (size_t)(p3 - id));
    copy_part(c->opp, sizeof c->opp, id, (size_t)(p1 - id));
    copy_part(c->shapes, sizeof c->shapes, p1 + 1, (size_t)(p2 - p1 - 1));
    snprintf(c->variant, sizeof c->variant, "%s", p3 + 1);
}

/* Derive c from the loader's checked record r: nothing here can fail,
 * the optional display fields (MAD, p5, p95, stop reason) are NAN/NULL
 * when absent. */
static void derive_case(tb_rcase *c, const tb_rescase *r)
{
    const cJSON *j = r->json;
    memset(c, 0, sizeof *c);
    c->rc = r;
    c->j = j;
    c->id = r->id;
    c->op = r->op;
    c->dtype = r->dtype;
    c->backend = r->backend;
    c->status = r->status;
    c->message = r->message;
    c->category = tb_json_str(j, "category");
    if (!c->category)
        c->category = "other";
    split_id(c);
    c->items = r->items;
    c->flops = r->flops;
    c->bytes = r->bytes;
    c->reduce_len = tb_json_num(jget(j, "model"), "reduce_len");
    const cJSON *ct = jget(j, "counters");
    c->counters = cJSON_IsObject(ct) ? ct : NULL;
    c->median = c->ci_lo = c->ci_hi = c->ci_rel = NAN;
    c->mad = c->p5 = c->p95 = c->min = NAN;
    c->gb_s = c->gflop_s = c->items_s = NAN;
    c->iters = NAN;
    if (!r->timed)
        return;
    const cJSON *st = jget(j, "stats");
    c->ok = true;
    c->median = r->median_ns;
    c->ci_lo = r->ci_low_ns;
    c->ci_hi = r->ci_high_ns;
    c->ci_rel = r->ci_rel;
    c->min = r->min_ns;
    c->n = (int)r->n;
    c->iters = r->iters_per_sample;
    c->samples = r->samples_ns;
    c->gb_s = r->gb_s;
    c->gflop_s = r->gflop_s;
    c->items_s = r->items_s;
    c->mad = tb_json_num(st, "mad_ns");
    c->p5 = tb_json_num(st, "p5_ns");
    c->p95 = tb_json_num(st, "p95_ns");
    c->stop_reason = tb_json_str(st, "stop_reason");
}

int tb_rset_load(tb_rset *s, const char *path, tb_role role, char *err,
                 size_t errlen)
{
    if (s->n_docs >= TB_RSET_MAX_DOCS) {
        snprintf(err, errlen, "%s: too many result files (at most %d)", path,
                 TB_RSET_MAX_DOCS);
        return TB_ERANGE;
    }
    tb_resfile *f;
    int rc = tb_resfile_load(path, &f, err, errlen);
    if (rc)
        return rc;
    if (s->n + f->n > s->cap) {
        int cap = s->cap ? s->cap : 64;
        while (cap < s->n + f->n)
            cap *= 2;
        tb_rcase *v = realloc(s->cases, (size_t)cap * sizeof *v);
        if (!v) {
            snprintf(err, errlen, "%s: out of memory", f->path);
            tb_resfile_free(f);
            return TB_ENOMEM;
        }
        s->cases = v;
        s->cap = cap;
    }
    for (int i = 0; i < f->n; i++) {
        tb_rcase *c = &s->cases[s->n + i];
        derive_case(c, &f->cases[i]);
        c->doc = s->n_docs;
        c->role = role;
    }
    s->n += f->n;
    s->docs[s->n_docs].file = f;
    s->docs[s->n_docs].role = role;
    s->n_docs++;
    return 0;
}

void tb_rset_free(tb_rset *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_docs; i++)
        tb_resfile_free(s->docs[i].file);
    free(s->cases);
    memset(s, 0, sizeof *s);
}

int tb_rset_compare(const tb_rset *s, double threshold, tb_cmp *out,
                    char *err, size_t errlen)
{
    int main_doc = -1, base_doc = -1;
    memset(out, 0, sizeof *out);
    for (int d = 0; d < s->n_docs; d++) {
        if (s->docs[d].role == TB_ROLE_MAIN && main_doc < 0)
            main_doc = d;
        if (s->docs[d].role == TB_ROLE_BASELINE && base_doc < 0)
            base_doc = d;
    }
    if (main_doc < 0 || base_doc < 0) {
        snprintf(err, errlen, "report: no %s to compare",
                 main_doc < 0 ? "result file" : "baseline");
        return TB_EINVAL;
    }
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    o.threshold = threshold;
    return tb_compare(&s->docs[base_doc].file, 1, &s->docs[main_doc].file,
                      1, &o, out, err, errlen);
}

int tb_rcase_ref_score(const tb_rcase *c)
{
    if (strcmp(c->backend, "cpu") != 0)
        return -1;
    const cJSON *bp = jget(c->j, "backend_params");
    const char *isa = tb_json_str(bp, "isa"), *thr = tb_json_str(bp, "threads");
    bool scalar = isa && !strcmp(isa, "scalar");
    bool one = !thr || !strcmp(thr, "1");
    return scalar && one ? 3 : scalar ? 2 : one ? 1 : -1;
}

const tb_rcase *tb_rset_reference(const tb_rset *s, const char *key,
                                  unsigned mask)
{
    const tb_rcase *best = NULL;
    int best_score = -1;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !(mask & (1u << c->role)) || strcmp(c->key, key))
            continue;
        int sc = tb_rcase_ref_score(c);
        if (sc > best_score) {
            best = c;
            best_score = sc;
        }
    }
    return best;
}

/* ---- number formatting --------------------------------------------------- */

char *tb_report_fmt_time(double ns, double scale, char *buf, size_t len)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    int u = 0;
    double div = 1;
    while (u < 3 && fabs(scale) >= 1000 * div) {
        div *= 1000;
        u++;
    }
    double v = ns / div;
    int prec = fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2;
    snprintf(buf, len, "%.*f %s", prec, v, units[u]);
    return buf;
}

/* 3 significant digits, no exponent for ordinary magnitudes. */
static char *fmt_num(double v, char *buf, size_t len)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, len, "n/a");
    else if (a >= 100 || a == 0 || (a < 1e15 && v == floor(v)))
        snprintf(buf, len, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, len, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, len, "%.2f", v);
    else if (a >= 0.001)
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "%.2e", v);
    return buf;
}

/* Large rates: 12.1 G/s style for items/s and steps/s. */
static char *fmt_rate(double v, char *buf, size_t len)
{
    static const char *const pfx[] = {"", "k", "M", "G", "T"};
    int p = 0;
    while (p < 4 && fabs(v) >= 1000) {
        v /= 1000;
        p++;
    }
    char n[32];
    snprintf(buf, len, "%s%s", fmt_num(v, n, sizeof n), pfx[p]);
    return buf;
}

static char *fmt_bytes(double v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && fabs(v) >= 1024) {
        v /= 1024;
        u++;
    }
    char n[32];
    snprintf(buf, len, "%s %s", u ? fmt_num(v, n, sizeof n) : fmt_num(v, n,
             sizeof n), units[u]);
    return buf;
}

static char *fmt_pct(double frac, char *buf, size_t len)
{
    snprintf(buf, len, "%+.1f%%", 100 * frac);
    return buf;
}

/* ---- text buffer --------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_vadd(sbuf *b, const char *fmt, va_list ap)
{
    if (b->oom)
        return;
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (k < 0) {
        b->oom = true;
        return;
    }
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    b->n += (size_t)k;
}

static void sb(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vadd(b, fmt, ap);
    va_end(ap);
}

/* Text safe inside a Markdown table cell: '|' escaped, line breaks and
 * backticks replaced.  Truncated to fit len. */
static const char *cell(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    for (; s && *s && o + 3 < len; s++) {
        char ch = *s;
        if (ch == '|') {
            buf[o++] = '\\';
            buf[o++] = '|';
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            buf[o++] = ' ';
        } else if (ch == '`') {
            buf[o++] = '\'';
        } else {
            buf[o++] = ch;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* ---- shared case logic --------------------------------------------------- */

typedef struct {
    const tb_rset *s;
    const tb_report_opts *o;
    sbuf *b;
    int main_doc; /* index of the MAIN document */
    int base_doc; /* -1 when none */
} ctx;

#define MASK(r) (1u << (r))
#define M_MAIN MASK(TB_ROLE_MAIN)
#define M_WITH MASK(TB_ROLE_WITH)
#define M_BASE MASK(TB_ROLE_BASELINE)

static bool in(const tb_rcase *c, unsigned mask)
{
    return (mask & MASK(c->role)) != 0;
}

/* The size used to order a series: the cost model's work, the measure
 * that "grows" between sizes (FLOPs, else bytes, else elements). */
static double work_of(const tb_rcase *c)
{
    if (c->flops > 0)
        return c->flops;
    if (c->bytes > 0)
        return c->bytes;
    return c->items > 0 ? c->items : 0;
}

static const char *threads_of(const tb_rcase *c)
{
    const char *t = tb_json_str(jget(c->j, "backend_params"), "threads");
    return t ? t : "";
}

/* The column label of a WITH case: its variant without the threads axis
 * ("numpy[form=out]"). */
static void column_label(const tb_rcase *c, char *buf, size_t len)
{
    const cJSON *bp = jget(c->j, "backend_params");
    size_t u = (size_t)snprintf(buf, len, "%s", c->backend);
    bool first = true;
    const cJSON *v;
    cJSON_ArrayForEach(v, bp)
    {
        if (!v->string || !strcmp(v->string, "threads") ||
            !cJSON_IsString(v) || u >= len)
            continue;
        u += (size_t)snprintf(buf + u, len - u, "%s%s=%s", first ? "[" : ",",
                              v->string, v->valuestring);
        first = false;
    }
    if (!first && u < len)
        snprintf(buf + u, len - u, "]");
}

/* Is there an earlier case (index < i) of mask with the same string
 * field?  field selects what to compare. */
enum { F_KEY, F_OPDT, F_SERIES, F_CAT, F_OPVAR, F_VARIANT };

static void field(const tb_rcase *c, int f, char *buf, size_t len)
{
    switch (f) {
    case F_KEY: snprintf(buf, len, "%s", c->key); break;
    case F_OPDT: snprintf(buf, len, "%s/%s", c->op, c->dtype); break;
    case F_SERIES:
        snprintf(buf, len, "%d|%s/%s/%s", c->doc, c->opp, c->dtype,
                 c->variant);
        break;
    case F_CAT: snprintf(buf, len, "%s", c->category); break;
    case F_OPVAR: /* NumPy/PyTorch: thread counts share a row */
        if (c->role == TB_ROLE_WITH) {
            char l[128];
            column_label(c, l, sizeof l);
            snprintf(buf, len, "%d|%s/%s", c->doc, c->op, l);
        } else {
            snprintf(buf, len, "%d|%s/%s", c->doc, c->op, c->variant);
        }
        break;
    default: snprintf(buf, len, "%d|%s", c->doc, c->variant); break;
    }
}

static bool seen_before(const tb_rset *s, int i, unsigned mask, int f,
                        bool ok_only)
{
    char a[800], b[800];
    field(&s->cases[i], f, a, sizeof a);
    for (int k = 0; k < i; k++) {
        const tb_rcase *c = &s->cases[k];
        if (!in(c, mask) || (ok_only && !c->ok))
            continue;
        field(c, f, b, sizeof b);
        if (!strcmp(a, b))
            return true;
    }
    return false;
}

static bool same(const tb_rcase *a, const tb_rcase *b, int f)
{
    char x[800], y[800];
    field(a, f, x, sizeof x);
    field(b, f, y, sizeof y);
    return !strcmp(x, y);
}

/* Indices of the ok cases of mask with the same field f as case i,
 * sorted by work (then file order).  Returns the count; *out is heap. */
static int collect_sorted(const tb_rset *s, int i, unsigned mask, int f,
                          int **out)
{
    int *v = malloc((size_t)s->n * sizeof *v);
    int n = 0;
    if (!v) {
        *out = NULL;
        return 0;
    }
    for (int k = 0; k < s->n; k++) {
        const tb_rcase *c = &s->cases[k];
        if (c->ok && in(c, mask) && same(c, &s->cases[i], f))
            v[n++] = k;
    }
    for (int a = 1; a < n; a++) { /* insertion sort: stable, n small */
        int x = v[a], b = a - 1;
        while (b >= 0 && work_of(&s->cases[v[b]]) > work_of(&s->cases[x])) {
            v[b + 1] = v[b];
            b--;
        }
        v[b + 1] = x;
    }
    *out = v;
    return n;
}

static const tb_chart *find_chart(const ctx *x, tb_chart_kind kind,
                                  const char *group)
{
    const tb_chart_list *l = x->o->charts;
    for (int i = 0; l && i < l->n; i++)
        if (l->v[i].kind == kind && l->v[i].rendered &&
            (!group || !strcmp(l->v[i].group, group)))
            return &l->v[i];
    return NULL;
}

static void chart_link(const ctx *x, const tb_chart *ch)
{
    if (!ch)
        return;
    sb(x->b, "![%s](%s/%s.png)\n\n", ch->title,
       x->o->chart_dir ? x->o->chart_dir : ".", ch->name);
}

static const cJSON *doc_env(const ctx *x, int doc)
{
    return jget(x->s->docs[doc].file->doc, "env");
}

/* ---- sections: reproduce, build, environment ----------------------------- */

static void sec_reproduce(const ctx *x)
{
    const cJSON *doc = x->s->docs[x->main_doc].file->doc;
    const cJSON *env = jget(doc, "env");
    const cJSON *build = jget(env, "build");
    const char *commit = tb_json_str(build, "git_commit");
    const char *bt = tb_json_str(build, "build_type");
    const char *cargs = tb_json_str(build, "c_args");
    const char *san = tb_json_str(build, "sanitize");
    sbuf *b = x->b;
    sb(b, "## How to reproduce\n\n");
    if (commit)
        sb(b, "- tbench commit: `%s` (`env.build.git_commit`)%s\n", commit,
           strstr(commit, "dirty")
               ? "; the working tree had uncommitted changes, so this "
                 "commit alone does not rebuild the exact binary"
               : "");
    const cJSON *cf;
    cJSON_ArrayForEach(cf, jget(doc, "config"))
    {
        /* cJSON reads numbers as doubles: above 2^53 the file's digits
         * (exact) are not what we would print */
        double seed = tb_json_num(cf, "seed");
        char sd[64] = "?";
        if (seed >= 0 && seed <= 9007199254740992.0)
            snprintf(sd, sizeof sd, "%.0f", seed);
        else if (seed > 0)
            snprintf(sd, sizeof sd, "above 2^53, exactly as in `config`");
        sb(b, "- config: `%s` (matrix `%s`, seed %s)\n",
           tb_json_str(cf, "path") ? tb_json_str(cf, "path") : "?",
           tb_json_str(cf, "name") ? tb_json_str(cf, "name") : "?", sd);
    }
    const char *date = tb_json_str(env, "date");
    const cJSON *sum = jget(doc, "summary");
    if (date)
        sb(b, "- run started: %s (UTC)\n", date);
    if (cJSON_IsObject(sum)) {
        /* crashed and timeout only when the run had such cases */
        double cr = tb_json_num(sum, "crashed"), to = tb_json_num(sum,
                                                                  "timeout");
        char more[96] = "";
        if (cr > 0 || to > 0)
            snprintf(more, sizeof more, ", crashed %.0f, timeout %.0f",
                     cr > 0 ? cr : 0, to > 0 ? to : 0);
        sb(b, "- cases: %.0f (ok %.0f, unsupported %.0f, unavailable %.0f, "
              "failed-check %.0f, error %.0f%s)%s\n",
           tb_json_num(sum, "cases"), tb_json_num(sum, "ok"),
           tb_json_num(sum, "unsupported"), tb_json_num(sum, "unavailable"),
           tb_json_num(sum, "failed-check"), tb_json_num(sum, "error"), more,
           cJSON_IsFalse(jget(doc, "complete"))
               ? "; the run did not complete (interrupted): only the "
                 "finished cases are here"
               : "");
    }
    sb(b, "\n```sh\n");
    if (commit && strcmp(commit, "unknown") != 0) {
        char c[128];
        snprintf(c, sizeof c, "%s", commit);
        char *d = strstr(c, "-dirty");
        if (d)
            *d = '\0';
        sb(b, "git checkout %s\n", c);
    }
    sb(b, "meson setup build");
    if (bt)
        sb(b, " -Dbuildtype=%s", bt);
    if (san && strcmp(san, "none") != 0)
        sb(b, " -Db_sanitize=%s", san);
    if (cargs && cargs[0])
        sb(b, " -Dc_args='%s'", cargs);
    sb(b, " && ninja -C build\n");
    const cJSON *pk = jget(doc, "peaks");
    if (cJSON_IsObject(pk)) /* the run copied cached peaks: measure them */
        sb(b, "build/tbench peak%s\n",
           cJSON_IsTrue(jget(pk, "quick")) ? " --quick" : "");
    sb(b, "build/tbench run");
    cJSON_ArrayForEach(cf, jget(doc, "config"))
        sb(b, " %s", tb_json_str(cf, "path") ? tb_json_str(cf, "path") : "?");
    /* the plugins it loaded, each under the name its cases carry */
    const cJSON *plg;
    cJSON_ArrayForEach(plg, jget(jget(doc, "env"), "plugins"))
        if (tb_json_str(plg, "path") && tb_json_str(plg, "name"))
            sb(b, " --plugin %s:%s", tb_json_str(plg, "path"),
               tb_json_str(plg, "name"));
    /* run into the folder the report reads its result file from, so the
     * recipe runs as written */
    char dir[1024] = "";
    const char *main_path = x->s->n_docs ? x->s->docs[x->main_doc].file->path
                                         : NULL;
    if (main_path) {
        snprintf(dir, sizeof dir, "%s", main_path);
        size_t l = strlen(dir);
        if (l > 13 && !strcmp(dir + l - 13, "/results.json"))
            dir[l - 13] = '\0';
        else if (!strcmp(dir, "results.json"))
            snprintf(dir, sizeof dir, ".");
        else
            dir[0] = '\0'; /* a file of another name: copied there below */
    }
    if (dir[0])
        sb(b, " -o %s\n", dir);
    else
        sb(b, " -o results/run && cp results/run/results.json %s\n",
           main_path ? main_path : "results.json");
    for (int d = 0; d < x->s->n_docs; d++) {
        const char *cmd = tb_json_str(doc_env(x, d), "command");
        if (x->s->docs[d].role == TB_ROLE_WITH && cmd)
            sb(b, "%s\n", cmd);
    }
    const char *rcmd = x->o->command ? x->o->command : "tbench report";
    /* the binary the recipe built */
    sb(b, "%s%s\n```\n\n", strncmp(rcmd, "tbench ", 7) ? "" : "build/",
       rcmd);
    sb(b, "The result file does not record command-line options such as "
          "`--filter` or `--backend`; the case list below is what the run "
          "measured.\n\n");
}

/* One JSON value as table text. */
static const char *value_text(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        return cell(v->valuestring[0] ? v->valuestring : "(empty)", buf, len);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "yes" : "no";
    if (cJSON_IsNull(v))
        return "not recorded";
    if (cJSON_IsNumber(v)) {
        snprintf(buf, len, "%.10g", v->valuedouble);
        return buf;
    }
    if (cJSON_IsObject(v)) { /* "k: v, k: v", one level deep */
        size_t u = 0;
        const cJSON *m;
        buf[0] = '\0';
        cJSON_ArrayForEach(m, v)
        {
            char one[300];
            const char *t = cJSON_IsObject(m) || cJSON_IsArray(m)
                                ? "..."
                                : value_text(m, one, sizeof one);
            if (u < len)
                u += (size_t)snprintf(buf + u, len - u, "%s%s: %s",
                                      u ? ", " : "", m->string, t);
        }
        return buf;
    }
    char *t = cJSON_PrintUnformatted(v);
    cell(t ? t : "?", buf, len);
    free(t);
    return buf;
}

static void sec_build(const ctx *x)
{
    const cJSON *build = jget(doc_env(x, x->main_doc), "build");
    if (!cJSON_IsObject(build) || !build->child)
        return;
    sb(x->b, "## Build configuration\n\n"
             "As recorded by the binary that ran (`env.build`).\n\n"
             "| Setting | Value |\n|---|---|\n");
    const cJSON *v;
    cJSON_ArrayForEach(v, build)
    {
        char buf[600];
        sb(x->b, "| %s | %s |\n", v->string, value_text(v, buf, sizeof buf));
    }
    sb(x->b, "\n");
}

static void caches_text(const cJSON *caches, sbuf *b)
{
    const cJSON *c;
    bool first = true;
    cJSON_ArrayForEach(c, caches)
    {
        char sz[32];
        const char *type = tb_json_str(c, "type");
        const char *shared = tb_json_str(c, "shared_cpus");
        sb(b, "%sL%.0f%s %s", first ? "" : ", ", tb_json_num(c, "level"),
           !type ? "" : !strcmp(type, "Data") ? "d"
                      : !strcmp(type, "Instruction") ? "i" : "",
           fmt_bytes(tb_json_num(c, "size_bytes"), sz, sizeof sz));
        if (shared && strchr(shared, '-'))
            sb(b, " (shared by CPUs %s)", shared);
        first = false;
    }
}

static void env_rows(const ctx *x, const cJSON *env)
{
    sbuf *b = x->b;
    const cJSON *cpu = jget(env, "cpu");
    char t[600], u[64], w[64];
    if (cJSON_IsObject(cpu)) {
        const char *model = tb_json_str(cpu, "model");
        const char *vendor = tb_json_str(cpu, "vendor");
        if (model)
            sb(b, "| CPU | %s%s%s%s |\n", cell(model, t, sizeof t),
               vendor ? " (" : "", vendor ? vendor : "", vendor ? ")" : "");
        double lc = tb_json_num(cpu, "logical_cpus");
        double pc = tb_json_num(cpu, "physical_cores");
        if (!isnan(lc)) {
            sb(b, "| Cores | %.0f logical CPUs", lc);
            if (!isnan(pc))
                sb(b, ", %.0f physical cores", pc);
            sb(b, " |\n");
        }
        const cJSON *isa = jget(cpu, "isa");
        if (cJSON_IsArray(isa) && isa->child) {
            const cJSON *f;
            sb(b, "| ISA extensions |");
            cJSON_ArrayForEach(f, isa)
                if (cJSON_IsString(f))
                    sb(b, " %s", f->valuestring);
            sb(b, " |\n");
        }
        double mhz = tb_json_num(cpu, "mhz");
        if (!isnan(mhz))
            sb(b, "| Nominal clock | %.0f MHz (as /proc/cpuinfo reports it; "
                  "not measured) |\n", mhz);
        const cJSON *caches = jget(cpu, "caches");
        if (cJSON_IsArray(caches) && caches->child) {
            sb(b, "| Caches | ");
            caches_text(caches, b);
            sb(b, " |\n");
        }
        const cJSON *gov = jget(cpu, "governor");
        if (gov)
            sb(b, "| Frequency governor | %s |\n",
               cJSON_IsString(gov) ? gov->valuestring : "not readable");
    }
    const cJSON *mem = jget(env, "memory");
    if (cJSON_IsObject(mem))
        sb(b, "| Memory | %s total, %s available at the start |\n",
           fmt_bytes(tb_json_num(mem, "total_bytes"), u, sizeof u),
           fmt_bytes(tb_json_num(mem, "available_bytes"), w, sizeof w));
    const cJSON *os = jget(env, "os");
    if (cJSON_IsObject(os))
        sb(b, "| OS | %s, kernel %s, %s |\n",
           tb_json_str(os, "name") ? tb_json_str(os, "name") : "?",
           tb_json_str(os, "kernel") ? tb_json_str(os, "kernel") : "?",
           tb_json_str(os, "machine") ? tb_json_str(os, "machine") : "?");
    if (tb_json_str(env, "hostname"))
        sb(b, "| Host | %s |\n", cell(tb_json_str(env, "hostname"), t, sizeof t));
    if (tb_json_str(env, "date"))
        sb(b, "| Started (UTC) | %s |\n", tb_json_str(env, "date"));
    const cJSON *la = jget(env, "loadavg");
    if (cJSON_GetArraySize(la) == 3)
        sb(b, "| Load average at the start | %.2f, %.2f, %.2f |\n",
           cJSON_GetArrayItem(la, 0)->valuedouble,
           cJSON_GetArrayItem(la, 1)->valuedouble,
           cJSON_GetArrayItem(la, 2)->valuedouble);
    const cJSON *clk = jget(env, "clock");
    if (cJSON_IsObject(clk))
        sb(b, "| Clock | %s, resolution %.0f ns |\n",
           tb_json_str(clk, "source") ? tb_json_str(clk, "source") : "?",
           tb_json_num(clk, "resolution_ns"));
    const cJSON *libs = jget(env, "libraries");
    if (cJSON_IsObject(libs) && libs->child) {
        const cJSON *l;
        bool first = true;
        sb(b, "| Libraries | ");
        cJSON_ArrayForEach(l, libs)
        {
            sb(b, "%s%s %s", first ? "" : ", ", l->string,
               value_text(l, t, sizeof t));
            first = false;
        }
        sb(b, " |\n");
    }
    /* Anything else the run recorded (GPU, driver, peaks...), verbatim. */
    static const char *const known[] = {
        "cpu", "memory", "os", "hostname", "date", "loadavg", "clock",
        "libraries", "build", "warnings", "command"};
    const cJSON *v;
    cJSON_ArrayForEach(v, env)
    {
        bool k = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            k = k || !strcmp(v->string, known[i]);
        if (!k)
            sb(b, "| %s | %s |\n", cell(v->string, u, sizeof u),
               value_text(v, t, sizeof t));
    }
}

/* The machine peaks (schema tbench.peaks/1, docs/FORMAT.md) as a table:
 * best and median of the repetitions, per kernel/level or ISA/dtype and
 * thread count. */
static void peaks_table(sbuf *b, const cJSON *pk)
{
    const cJSON *bw = jget(pk, "bandwidth"), *fl = jget(pk, "flops");
    if (cJSON_GetArraySize(bw) + cJSON_GetArraySize(fl) == 0)
        return;
    sb(b, "### Measured machine peaks\n\n"
          "From the run's `peaks` (measured by `tbench peak`%s%s): the best "
          "and the median of the repetitions. The roofline fractions in the "
          "tables divide by these.\n\n"
          "| Peak | Threads | Best | Median |\n|---|---|---|---|\n",
       tb_json_str(pk, "date") ? " on " : "",
       tb_json_str(pk, "date") ? tb_json_str(pk, "date") : "");
    const cJSON *e;
    char v1[32], v2[32], ws[32];
    cJSON_ArrayForEach(e, bw)
    {
        const char *k = tb_json_str(e, "kernel"), *l = tb_json_str(e, "level");
        sb(b, "| %s bandwidth, %s (working set %s) | %.0f | %s GB/s | %s "
              "GB/s |\n",
           k ? k : "?", l ? l : "?",
           fmt_bytes(tb_json_num(e, "working_set_bytes"), ws, sizeof ws),
           tb_json_num(e, "threads"),
           fmt_num(tb_json_num(e, "best_gb_s"), v1, sizeof v1),
           fmt_num(tb_json_num(e, "median_gb_s"), v2, sizeof v2));
    }
    cJSON_ArrayForEach(e, fl)
    {
        const char *i = tb_json_str(e, "isa"), *d = tb_json_str(e, "dtype");
        sb(b, "| FMA %s %s | %.0f | %s GFLOP/s | %s GFLOP/s |\n",
           i ? i : "?", d ? d : "?", tb_json_num(e, "threads"),
           fmt_num(tb_json_num(e, "best_gflop_s"), v1, sizeof v1),
           fmt_num(tb_json_num(e, "median_gflop_s"), v2, sizeof v2));
    }
    sb(b, "\n");
}

/* The GPU's peaks beside its vendor figures (peaks.gpu), or why there
 * are none; nothing for peaks measured before they had a "gpu". */
static void gpu_peaks_table(sbuf *b, const cJSON *g)
{
    if (!cJSON_IsObject(g))
        return;
    const char *be = tb_json_str(g, "backend");
    if (!cJSON_IsTrue(jget(g, "available"))) {
        const char *why = tb_json_str(g, "reason");
        sb(b, "No GPU peaks: %s was unavailable when they were measured "
              "(%s).\n\n", be ? be : "?", why ? why : "no reason given");
        return;
    }
    const cJSON *d = jget(g, "device");
    const char *name = tb_json_str(d, "name");
    const char *cc = tb_json_str(d, "compute_capability");
    sb(b, "### Measured GPU peaks\n\n"
          "%s device 0: %s (compute capability %s, %.0f SMs), by the "
          "module's own kernels (`peaks.gpu`), beside the vendor figures "
          "(memory clock x bus width x 2; SMs x FMA lanes x clock x 2). "
          "The GPU cases' roofline fractions divide by the best.\n\n"
          "| Peak | Best | Median | Vendor | Best / vendor |\n"
          "|---|---|---|---|---|\n",
       be ? be : "?", name ? name : "?", cc ? cc : "?",
       tb_json_num(d, "sm_count"));
    static const char *const kinds[2][3] = {
        {"bandwidth", "gb_s", "GB/s"}, {"flops", "gflop_s", "GFLOP/s"}};
    for (int k = 0; k < 2; k++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, jget(g, kinds[k][0]))
        {
            char key[32], v1[32], v2[32], v3[32];
            const char *what = tb_json_str(e, k ? "dtype" : "kernel");
            snprintf(key, sizeof key, "best_%s", kinds[k][1]);
            double best = tb_json_num(e, key);
            snprintf(key, sizeof key, "median_%s", kinds[k][1]);
            double med = tb_json_num(e, key);
            snprintf(key, sizeof key, "vendor_%s", kinds[k][1]);
            double ven = tb_json_num(e, key);
            sb(b, "| GPU %s %s | %s %s | %s | %s | ", what ? what : "?",
               k ? "FMA" : "bandwidth", fmt_num(best, v1, sizeof v1),
               kinds[k][2], isnan(med) ? "" : fmt_num(med, v2, sizeof v2),
               isnan(ven) ? "unknown" : fmt_num(ven, v3, sizeof v3));
            if (isnan(ven) || !(ven > 0))
                sb(b, " |\n");
            else
                sb(b, "%.0f%% |\n", 100 * best / ven);
        }
    }
    const char *why = tb_json_str(g, "reason");
    sb(b, "\n%s%s%s", why ? "Note: " : "", why ? why : "", why ? "\n\n" : "");
}

static void sec_environment(const ctx *x)
{
    const cJSON *env = doc_env(x, x->main_doc);
    if (!cJSON_IsObject(env))
        return;
    sb(x->b, "## Environment\n\nCaptured automatically at the start of the "
             "run (`env`).\n\n| | |\n|---|---|\n");
    env_rows(x, env);
    sb(x->b, "\n");
    const cJSON *peaks = jget(x->s->docs[x->main_doc].file->doc, "peaks");
    if (cJSON_IsObject(peaks)) {
        peaks_table(x->b, peaks);
        gpu_peaks_table(x->b, jget(peaks, "gpu"));
    }
    const cJSON *w = jget(env, "warnings");
    if (cJSON_IsArray(w) && w->child) {
        const cJSON *s;
        sb(x->b, "### Noise warnings\n\ntbench found these at the start of "
                 "the run; read the numbers with them in mind:\n\n");
        cJSON_ArrayForEach(s, w)
            if (cJSON_IsString(s))
                sb(x->b, "- %s\n", s->valuestring);
        sb(x->b, "\n");
    }
}

/* ---- significance: the test compare uses ----------------------------------- */

/* Is a faster (+1) or slower (-1) than b by compare's test on one run a
 * side (tbench compare's defaults: two-sided Mann-Whitney U p < alpha on
 * the samples and a ratio of medians beyond the threshold), or neither
 * (0)?  *p gets the p-value (NAN when not tested). */
static int significance(const tb_rcase *a, const tb_rcase *b, double *p)
{
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    *p = NAN;
    if (!a->samples || !b->samples || a->n < 1 || b->n < 1 ||
        !(a->median > 0) || !(b->median > 0))
        return 0;
    tb_mwu t;
    if (tb_mann_whitney(a->samples, (size_t)a->n, b->samples, (size_t)b->n,
                        &t))
        return 0;
    *p = t.p;
    double r = a->median / b->median;
    if (t.p >= o.alpha || fabs(r - 1) <= o.threshold)
        return 0;
    return r < 1 ? 1 : -1;
}

static const char *fmt_p(double p, char *buf, size_t len)
{
    if (isnan(p))
        snprintf(buf, len, "not tested");
    else if (p < 1e-4)
        snprintf(buf, len, "p < 0.0001");
    else
        snprintf(buf, len, "p = %.2g", p);
    return buf;
}

/* ---- summary: fastest per op and size ------------------------------------ */

static void sec_summary(const ctx *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool any = false, multi = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask))
            continue;
        any = true;
        for (int k = 0; k < s->n && !multi; k++)
            multi = k != i && s->cases[k].ok && in(&s->cases[k], mask) &&
                    !strcmp(s->cases[k].key, c->key);
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "## Summary: fastest backend per op and size\n\n"
          "For each op, shape and dtype, the backend with the lowest median "
          "time%s.%s\n\n",
       x->s->n_docs > 1 ? " among all files of this report" : "",
       multi ? " \"Next\" is the second fastest and how much slower it is "
               "(ratio of medians). \"Winner\" says whether the fastest "
               "beats the next by the test `tbench compare` uses "
               "(Mann-Whitney U on the samples, p below 0.01, and more than "
               "the 2% threshold); where it does not, there is no winner: "
               "the difference is within the noise of this run." : "");
    sb(b, "| Op | Shapes | Dtype | Fastest | Median |%s\n|---|---|---|---|---|%s\n",
       multi ? " Next | Next is slower by | Winner |" : "",
       multi ? "---|---|---|" : "");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask) || seen_before(s, i, mask, F_KEY, true))
            continue;
        const tb_rcase *best = NULL, *next = NULL;
        for (int k = 0; k < s->n; k++) {
            const tb_rcase *d = &s->cases[k];
            if (!d->ok || !in(d, mask) || strcmp(d->key, c->key))
                continue;
            if (!best || d->median < best->median) {
                next = best;
                best = d;
            } else if (!next || d->median < next->median) {
                next = d;
            }
        }
        char m[32], nm[32], r[32];
        sb(b, "| %s | %s | %s | %s | %s |", c->opp, c->shapes, c->dtype,
           best->variant, tb_report_fmt_time(best->median, best->median, m,
                                             sizeof m));
        if (multi) {
            if (next) {
                double p;
                char pt[32];
                int sig = significance(best, next, &p);
                sb(b, " %s (%s) | %sx | %s (%s) |", next->variant,
                   tb_report_fmt_time(next->median, next->median, nm,
                                      sizeof nm),
                   fmt_num(next->median / best->median, r, sizeof r),
                   sig > 0 ? "yes" : "no winner", fmt_p(p, pt, sizeof pt));
            } else {
                sb(b, " only one backend ran | | |");
            }
        }
        sb(b, "\n");
    }
    sb(b, "\n");
}

/* ---- per-category sections ----------------------------------------------- */

enum { K_RATE, K_FLOPS, K_STEPS, K_TIME };

static const struct {
    const char *title;
    const char *cats; /* comma-separated category names */
    int kind;
} sections[] = {
    {"Element-wise", "elementwise", K_RATE},
    {"Activations", "activation", K_RATE},
    {"Reductions", "reduction", K_RATE},
    {"Matrix multiplication", "matmul,gemm,bmm", K_FLOPS},
    {"Transpose and layout", "layout,transpose", K_RATE},
    {"NN ops: softmax, convolution, pooling, normalization",
     "softmax,conv,convolution,pool,pooling,norm,normalization,nn,loss,"
     "attention",
     K_RATE},
    {"Fused ops", "fused,unfused", K_RATE},
    {"Creation", "creation", K_RATE},
    {"In-place forms", "inplace", K_RATE},
    {"Optimizers", "optimizer,optim", K_STEPS},
    {"Linear algebra", "linalg,lapack,decomposition,solve", K_FLOPS},
    {"API overhead", "overhead,api", K_TIME},
    {"Backward ops (gradients)", "backward", K_RATE},
    {"Training workloads: model steps, hooks, API layers, pool", "workload",
     K_TIME},
};
#define N_SECTIONS ((int)(sizeof sections / sizeof sections[0]))

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, name, n))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static int section_of(const char *cat)
{
    for (int i = 0; i < N_SECTIONS; i++)
        if (in_list(sections[i].cats, cat))
            return i;
    return -1;
}

/* The fraction of peak a case records, if it records one. */
static double case_peak_fraction(const tb_rcase *c)
{
    const cJSON *r = jget(c->j, "roofline");
    double f = cJSON_IsNumber(r) ? r->valuedouble : tb_json_num(r, "fraction");
    if (isnan(f))
        f = tb_json_num(jget(c->j, "throughput"), "peak_fraction");
    return f;
}

/* The attainable time per call the case's roofline records (NAN when it
 * has none) and what bounds it: "copy, L3" for memory (the bandwidth
 * kernel and cache level), "avx512 FMA" for compute. */
static double case_bound(const tb_rcase *c, char *what, size_t len)
{
    const cJSON *r = jget(c->j, "roofline");
    double t = cJSON_IsObject(r) ? tb_json_num(r, "min_time_ns") : NAN;
    if (isnan(t) || t <= 0)
        return NAN;
    const char *bound = tb_json_str(r, "bound");
    const char *k = tb_json_str(r, "bw_kernel"), *lv = tb_json_str(r, "level");
    const char *isa = tb_json_str(r, "isa");
    if (bound && !strcmp(bound, "compute"))
        snprintf(what, len, "%s FMA", isa ? isa : "?");
    else
        snprintf(what, len, "%s, %s", k ? k : "?", lv ? lv : "?");
    return t;
}

/* Why a case can run faster than its roofline allows, from what the
 * run recorded: peaks measured under load, or a working set that fits a
 * faster level than the one the fraction assumed (virtual machines
 * often report cache sizes that are not the hardware's). */
static void over_peak_note(const ctx *x, int over)
{
    const cJSON *pk = jget(x->s->docs[x->main_doc].file->doc, "peaks");
    double load = tb_json_num(pk, "load_avg_1m");
    double cpus = tb_json_num(jget(doc_env(x, x->main_doc),
                                   "cpu"),
                              "logical_cpus");
    sb(x->b, "%d case%s above 100%% of %s roofline: a measurement cannot "
             "beat what the hardware allows, so the roof was too low.",
       over, over == 1 ? " runs" : "s run", over == 1 ? "its" : "their");
    if (!isnan(load) && !isnan(cpus) && load > cpus / 2)
        sb(x->b, " The peaks were measured while the 1-minute load average "
                 "was %.2f on %.0f logical CPUs (`peaks.load_avg_1m`), so "
                 "they are low; run `tbench peak` again on a quiet machine.",
           load, cpus);
    sb(x->b, " The fraction holds the case to the bandwidth of the cache "
             "level its working set should fit (`roofline.level`), from the "
             "cache sizes the CPU reports; a virtual machine's reported "
             "sizes are often not the hardware's, and a working set that "
             "stays in a faster level than that beats the roof.\n\n");
}

/* The record's gpu_clock says the GPU throttled during the case. */
static bool gpu_throttled(const tb_rcase *c)
{
    return cJSON_IsTrue(jget(jget(c->j, "gpu_clock"), "throttled"));
}

/* Which cases of the table ran on a GPU that held its clock down, why,
 * and how far (gpu_clock). */
static void throttle_note(const ctx *x, int sect, const char *cat)
{
    const tb_rset *s = x->s;
    sb(x->b, "**GPU throttled**: NVML reported a power or thermal limit "
             "holding the SM clock down while these cases were timed "
             "(`gpu_clock`), so they ran slower than the GPU can; cool the "
             "GPU or check its power limit, and run them again.\n\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN) || !gpu_throttled(c) ||
            (sect >= 0 ? section_of(c->category) != sect
                       : strcmp(c->category, cat) != 0))
            continue;
        const cJSON *k = jget(c->j, "gpu_clock");
        sb(x->b, "- `%s`: SM clock %.0f-%.0f MHz;", c->id,
           tb_json_num(k, "sm_mhz_min"), tb_json_num(k, "sm_mhz_max"));
        const cJSON *w;
        int n = 0;
        cJSON_ArrayForEach(w, jget(k, "throttle_reasons"))
            if (cJSON_IsString(w))
                sb(x->b, "%s %s", n++ ? "," : "", w->valuestring);
        sb(x->b, "\n");
    }
    sb(x->b, "\n");
}

/* Rows of one category table: cases of MAIN in sect (or, for sect < 0,
 * with category cat).  Charts of the ops follow the table. */
static void category_table(const ctx *x, int sect, const char *cat,
                           const char *title)
{
    const tb_rset *s = x->s;
    int kind = sect >= 0 ? sections[sect].kind : K_RATE;
    bool any = false, gb = false, gf = false, pf = false, bd = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN))
            continue;
        if (sect >= 0 ? section_of(c->category) != sect
                      : strcmp(c->category, cat) != 0)
            continue;
        any = true;
        gb = gb || !isnan(c->gb_s);
        gf = gf || !isnan(c->gflop_s);
        pf = pf || !isnan(case_peak_fraction(c));
        char w[64];
        bd = bd || !isnan(case_bound(c, w, sizeof w));
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "## %s\n\n", title);
    sb(b, "Median time per call with its 95%% bootstrap confidence "
          "interval%s%s%s%s.\n\n",
       kind == K_STEPS ? "; steps/s is calls per second (1 / median)" : "",
       gb || gf ? "; rates are the op's cost model (bytes moved, FLOPs) "
                  "divided by the median"
                : "",
       pf ? "; \"of peak\" is the case's roofline fraction: the time the "
            "measured machine peaks allow for its FLOPs and bytes, divided "
            "by the median"
          : "",
       bd ? "; \"time / bound\" is its inverse, the median over that "
            "attainable time, with the bound itself and what sets it (the "
            "bandwidth kernel and cache level of a memory bound: a copy, a "
            "read or an add of the op's bytes; or the FMA peak of a "
            "compute bound)"
          : "");
    sb(b, "| Op | Shapes | Dtype | Backend | Median | 95%% CI |%s%s%s%s%s "
          "Samples | Stopped by |\n|---|---|---|---|---|---|",
       kind == K_STEPS ? " Steps/s |" : "", gb && kind != K_TIME ? " GB/s |" : "",
       gf && kind != K_TIME ? " GFLOP/s |" : "",
       pf ? " Of peak |" : "", bd ? " Time / bound |" : "");
    int extra = (kind == K_STEPS) + (gb && kind != K_TIME) +
                (gf && kind != K_TIME) + pf + bd;
    for (int e = 0; e < extra; e++)
        sb(b, "---|");
    sb(b, "---|---|\n");
    int over = 0;      /* cases above their roofline */
    int throttled = 0; /* cases timed while their GPU throttled */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN))
            continue;
        if (sect >= 0 ? section_of(c->category) != sect
                      : strcmp(c->category, cat) != 0)
            continue;
        char m[32], lo[32], hi[32], v[32];
        sb(b, "| %s | %s | %s | %s | %s | %s – %s |", c->opp, c->shapes,
           c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, m, sizeof m),
           tb_report_fmt_time(c->ci_lo, c->median, lo, sizeof lo),
           tb_report_fmt_time(c->ci_hi, c->median, hi, sizeof hi));
        if (kind == K_STEPS)
            sb(b, " %s |", fmt_rate(1e9 / c->median, v, sizeof v));
        if (gb && kind != K_TIME)
            sb(b, " %s |", isnan(c->gb_s) ? "" : fmt_num(c->gb_s, v, sizeof v));
        if (gf && kind != K_TIME)
            sb(b, " %s |",
               isnan(c->gflop_s) ? "" : fmt_num(c->gflop_s, v, sizeof v));
        if (pf) {
            double f = case_peak_fraction(c);
            if (isnan(f))
                sb(b, " |");
            else if (f > 1) {
                sb(b, " %.0f%% (above 100%%: see below) |", 100 * f);
                over++;
            } else
                sb(b, " %.0f%% |", 100 * f);
        }
        if (bd) {
            char w[64], t[32];
            double bt = case_bound(c, w, sizeof w);
            if (isnan(bt))
                sb(b, " |");
            else
                sb(b, " %.2fx of %s (%s) |", c->median / bt,
                   tb_report_fmt_time(bt, bt, t, sizeof t), w);
        }
        bool thr = gpu_throttled(c);
        sb(b, " %d x %.0f | %s%s |\n", c->n, c->iters,
           c->stop_reason ? c->stop_reason : "?",
           thr ? "; **GPU throttled**" : "");
        throttled += thr;
    }
    sb(b, "\n");
    if (over)
        over_peak_note(x, over);
    if (throttled)
        throttle_note(x, sect, cat);
    /* charts of this section's ops, in order */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN) ||
            (sect >= 0 ? section_of(c->category) != sect
                       : strcmp(c->category, cat) != 0) ||
            seen_before(s, i, M_MAIN, F_OPDT, true))
            continue;
        char g[160];
        snprintf(g, sizeof g, "%s/%s", c->op, c->dtype);
        chart_link(x, find_chart(x, TB_CHART_TIME, g));
        chart_link(x, find_chart(x, TB_CHART_THROUGHPUT, g));
    }
}

static void sec_categories(const ctx *x)
{
    for (int k = 0; k < N_SECTIONS; k++)
        category_table(x, k, NULL, sections[k].title);
    const tb_rset *s = x->s;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN) || section_of(c->category) >= 0 ||
            seen_before(s, i, M_MAIN, F_CAT, true))
            continue;
        char t[200];
        snprintf(t, sizeof t, "Other ops: %s", c->category);
        category_table(x, -1, c->category, t);
    }
}

/* ---- backend speedups and crossovers ------------------------------------- */

/* Speedup of c over ref, and whether compare's test separates them
 * (+1 c faster, -1 slower, 0 not significant). */
static double speedup(const tb_rcase *ref, const tb_rcase *c, int *sig)
{
    double p;
    *sig = significance(c, ref, &p);
    return ref->median / c->median;
}

static void guideline(const ctx *x, int i)
{
    const tb_rset *s = x->s;
    int *v;
    int n = collect_sorted(s, i, M_MAIN, F_SERIES, &v);
    double sp[256];
    int sg[256];
    const tb_rcase *cs[256];
    const tb_rcase *ref0 = NULL;
    int m = 0;
    for (int k = 0; k < n && m < 256; k++) {
        const tb_rcase *c = &s->cases[v[k]];
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        if (!ref || ref == c)
            continue;
        cs[m] = c;
        sp[m] = speedup(ref, c, &sg[m]);
        m++;
        ref0 = ref;
    }
    free(v);
    if (m == 0)
        return;
    const tb_rcase *c0 = cs[0];
    char a[32], z[32];
    double lo = sp[0], hi = sp[0];
    for (int k = 1; k < m; k++) {
        lo = sp[k] < lo ? sp[k] : lo;
        hi = sp[k] > hi ? sp[k] : hi;
    }
    fmt_num(lo, a, sizeof a);
    fmt_num(hi, z, sizeof z);
    /* first index from which it is significantly faster at every larger
     * size (compare's test) */
    int from = m, n_same = 0, n_slow = 0;
    while (from > 0 && sg[from - 1] > 0)
        from--;
    for (int k = 0; k < m; k++) {
        n_same += sg[k] == 0;
        n_slow += sg[k] < 0;
    }
    sb(x->b, "- %s %s, %s vs %s: ", c0->opp, c0->dtype, c0->variant,
       ref0->variant);
    if (n_same == m)
        sb(x->b, "no significant difference at %s (%s-%sx): either "
                 "will do.\n",
           m == 1 ? "the one measured size" : "any measured size", a, z);
    else if (from == 0 && m == 1)
        sb(x->b, "faster at the one measured size (%sx).\n",
           fmt_num(lo, a, sizeof a));
    else if (from == 0 && !strcmp(a, z))
        sb(x->b, "faster at every measured size (%sx).\n", a);
    else if (from == 0)
        sb(x->b, "faster at every measured size (%s-%sx).\n", a, z);
    else if (m == 1)
        sb(x->b, "slower at the one measured size (%sx): use %s.\n",
           fmt_num(lo, a, sizeof a), ref0->variant);
    else if (n_slow == m)
        sb(x->b, "slower at every measured size (%s-%sx): use %s.\n",
           fmt_num(lo, a, sizeof a), fmt_num(hi, z, sizeof z),
           ref0->variant);
    else if (from == m)
        sb(x->b, "no consistent winner: significantly faster at some sizes, "
                 "not at the largest (%s-%sx).\n",
           fmt_num(lo, a, sizeof a), fmt_num(hi, z, sizeof z));
    else
        sb(x->b, "crossover between %s (%sx) and %s (%sx): use %s below "
                 "%.0f elements and %s from there on.\n",
           cs[from - 1]->shapes, fmt_num(sp[from - 1], a, sizeof a),
           cs[from]->shapes, fmt_num(sp[from], z, sizeof z), ref0->variant,
           cs[from]->items, cs[from]->variant);
}

static void sec_speedups(const ctx *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN; /* NumPy/PyTorch have their own section */
    bool any = false;
    for (int i = 0; i < s->n && !any; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask))
            continue;
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        any = ref && ref != c;
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "## Backend speedups\n\n"
          "Speedup = median time of the reference backend / median time of "
          "the backend, per op, shape and dtype (higher is faster). The "
          "reference is backend `cpu` with `isa=scalar` when the run has it, "
          "else `cpu` with `threads=1`. \"Significant\" is the test "
          "`tbench compare` uses: Mann-Whitney U on the two cases' samples "
          "with p below 0.01, and a ratio of medians beyond its 2%% "
          "threshold.\n\n"
          "| Op | Shapes | Dtype | Backend | Median | Reference | Speedup | "
          "Significant |\n|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask))
            continue;
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        if (!ref || ref == c)
            continue;
        int sig;
        char m[32], r[32], sp[32];
        double x_ = speedup(ref, c, &sig);
        sb(b, "| %s | %s | %s | %s | %s | %s (%s) | %sx | %s |\n", c->opp,
           c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, m, sizeof m),
           ref->variant, tb_report_fmt_time(ref->median, ref->median, r,
                                            sizeof r),
           fmt_num(x_, sp, sizeof sp),
           sig > 0 ? "faster" : sig < 0 ? "slower" : "no");
    }
    sb(b, "\n### Selection guidelines (measured)\n\n"
          "Per op and backend, over the measured sizes in order of work; a "
          "crossover is the size from which the backend is significantly "
          "faster than the reference (the test above) at every larger "
          "measured size. Differences the test does not find are not "
          "called wins.\n\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask) || seen_before(s, i, mask, F_SERIES, true))
            continue;
        guideline(x, i);
    }
    sb(b, "\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask) || seen_before(s, i, mask, F_OPDT, true))
            continue;
        char g[160];
        snprintf(g, sizeof g, "%s/%s", c->op, c->dtype);
        chart_link(x, find_chart(x, TB_CHART_SPEEDUP, g));
    }
}

/* ---- with and without transfers ------------------------------------------ */

/* A case whose data started and ended on the host (config "transfers":
 * its id, and so its variant, ends in "@transfers"). */
#define TRANSFERS_MARK "@transfers"

static bool is_transfers(const tb_rcase *c)
{
    size_t n = strlen(c->variant), k = strlen(TRANSFERS_MARK);
    return n > k && !strcmp(c->variant + n - k, TRANSFERS_MARK);
}

/* The resident twin of a transfers case t: the ok case of t's document
 * with t's key and t's variant without the mark, or NULL. */
static const tb_rcase *resident_twin(const tb_rset *s, const tb_rcase *t)
{
    size_t n = strlen(t->variant) - strlen(TRANSFERS_MARK);
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *d = &s->cases[i];
        if (d->ok && d->doc == t->doc && !strcmp(d->key, t->key) &&
            strlen(d->variant) == n && !strncmp(d->variant, t->variant, n))
            return d;
    }
    return NULL;
}

/* The crossover section split by the transfers axis: per op, shape and
 * device variant, the resident time and the time with the data starting
 * and ending on the host, each against the reference backend. */
static void sec_transfers(const ctx *x)
{
    const tb_rset *s = x->s;
    bool any = false;
    for (int i = 0; i < s->n && !any; i++) {
        const tb_rcase *c = &s->cases[i];
        any = c->ok && in(c, M_MAIN) && is_transfers(c) &&
              resident_twin(s, c);
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "### With and without transfers (measured)\n\n"
          "Cases run twice on a device backend: with the data resident on "
          "the device (uploaded once, outside the timing) and with "
          "`\"transfers\": true` (every call uploads its inputs from host "
          "memory and downloads its outputs: the data starts and ends on "
          "the host; ids ending in `@transfers`). Speedups are against the "
          "reference backend above; transfer cost is the difference of "
          "the two medians as a share of the time with transfers. The "
          "selection guidelines above give each variant's crossover: the "
          "`@transfers` line says from which size the device wins when "
          "the data lives on the host.\n\n"
          "| Op | Shapes | Dtype | Backend | Resident | Speedup | "
          "With transfers | Speedup | Transfer cost |\n"
          "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN) || !is_transfers(c) ||
            seen_before(s, i, M_MAIN, F_SERIES, true))
            continue;
        int *v;
        int n = collect_sorted(s, i, M_MAIN, F_SERIES, &v);
        for (int k = 0; k < n; k++) {
            const tb_rcase *t = &s->cases[v[k]];
            const tb_rcase *r = resident_twin(s, t);
            if (!r)
                continue;
            const tb_rcase *ref = tb_rset_reference(s, t->key, M_MAIN);
            char mr[32], mt[32], sr[32] = "-", st[32] = "-";
            if (ref && ref != r && ref != t) {
                char a[32];
                snprintf(sr, sizeof sr, "%sx",
                         fmt_num(ref->median / r->median, a, sizeof a));
                snprintf(st, sizeof st, "%sx",
                         fmt_num(ref->median / t->median, a, sizeof a));
            }
            sb(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f%% |\n",
               t->opp, t->shapes, t->dtype, r->variant,
               tb_report_fmt_time(r->median, r->median, mr, sizeof mr), sr,
               tb_report_fmt_time(t->median, t->median, mt, sizeof mt), st,
               t->median > 0 ? 100 * (t->median - r->median) / t->median
                             : 0.0);
        }
        free(v);
    }
    sb(b, "\n");
}

/* ---- counters ------------------------------------------------------------ */

typedef struct {
    double lo, hi;
    bool any;
} range;

static void range_add(range *r, double v)
{
    if (isnan(v))
        return;
    if (!r->any || v < r->lo)
        r->lo = v;
    if (!r->any || v > r->hi)
        r->hi = v;
    r->any = true;
}

static const char *range_text(const range *r, bool bytes, char *buf,
                              size_t len)
{
    char a[32], z[32];
    if (!r->any)
        return "";
    if (bytes) {
        fmt_bytes(r->lo, a, sizeof a);
        fmt_bytes(r->hi, z, sizeof z);
    } else {
        fmt_num(r->lo, a, sizeof a);
        fmt_num(r->hi, z, sizeof z);
    }
    if (!strcmp(a, z))
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s – %s", a, z);
    return buf;
}

static void sec_counters(const ctx *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool any = false, dev = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask) || !c->counters)
            continue;
        any = true;
        dev = dev || tb_json_num(c->counters, "memcpy_count") > 0 ||
              tb_json_num(c->counters, "device_allocs") > 0;
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "## Kernel launches and allocations per op\n\n"
          "Per call (iteration), counted over the whole sampling phase; a "
          "range covers the op's shapes, parameters and dtypes (and, for "
          "NumPy and PyTorch, thread counts). Kernel "
          "launches are what the backend counted (for the Python libraries: "
          "library calls per iteration); allocations come from the tracked "
          "allocator; peak extra is what the op held at its peak beyond its "
          "inputs and outputs.\n\n"
          "| Op | Backend | Kernel launches | Allocations | Allocated bytes | "
          "Peak extra |%s\n|---|---|---|---|---|---|%s\n",
       dev ? " Copies | Device allocations |" : "", dev ? "---|---|" : "");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, mask) || !c->counters ||
            seen_before(s, i, mask, F_OPVAR, true))
            continue;
        range r[6];
        memset(r, 0, sizeof r);
        for (int k = i; k < s->n; k++) {
            const tb_rcase *d = &s->cases[k];
            if (!d->ok || !d->counters || !same(c, d, F_OPVAR))
                continue;
            range_add(&r[0], tb_json_num(d->counters, "kernel_launches"));
            range_add(&r[1], tb_json_num(d->counters, "allocs"));
            range_add(&r[2], tb_json_num(d->counters, "alloc_bytes"));
            range_add(&r[3], tb_json_num(d->counters, "peak_extra_bytes"));
            range_add(&r[4], tb_json_num(d->counters, "memcpy_count"));
            range_add(&r[5], tb_json_num(d->counters, "device_allocs"));
        }
        char t[6][80], lab[256];
        if (c->role == TB_ROLE_WITH)
            column_label(c, lab, sizeof lab);
        else
            snprintf(lab, sizeof lab, "%s", c->variant);
        sb(b, "| %s | %s | %s | %s | %s | %s |", c->op, lab,
           range_text(&r[0], false, t[0], sizeof t[0]),
           range_text(&r[1], false, t[1], sizeof t[1]),
           range_text(&r[2], true, t[2], sizeof t[2]),
           range_text(&r[3], true, t[3], sizeof t[3]));
        if (dev)
            sb(b, " %s | %s |", range_text(&r[4], false, t[4], sizeof t[4]),
               range_text(&r[5], false, t[5], sizeof t[5]));
        sb(b, "\n");
    }
    sb(b, "\n");
}

/* ---- fused vs unfused ---------------------------------------------------- */

/* The ok case of key (OP/SHAPES/DTYPE) with c's document and variant. */
static const tb_rcase *find_key(const tb_rset *s, const tb_rcase *c,
                                const char *key)
{
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *d = &s->cases[i];
        if (d->ok && d->doc == c->doc && !strcmp(d->variant, c->variant) &&
            !strcmp(d->key, key))
            return d;
    }
    return NULL;
}

/* "AxB" of the case's first output shape. */
static void out_shape(const tb_rcase *c, char *buf, size_t len)
{
    const cJSON *o = cJSON_GetArrayItem(jget(c->j, "out_shapes"), 0);
    const cJSON *d;
    size_t u = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(d, o)
        if (u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s%.0f", u ? "x" : "",
                                  d->valuedouble);
}

/* The unfused sequence of a fused case as keys of the ops it replaces:
 * add_relu(a, b) = add(a, b) + relu(out); linear(x, W, b) = matmul(x, W)
 * + add(out, b) + relu(out).  Returns the count (0: no known split). */
static int unfused_keys(const tb_rcase *c, char keys[3][600])
{
    char out[128];
    out_shape(c, out, sizeof out);
    if (!strcmp(c->op, "add_relu")) {
        snprintf(keys[0], 600, "add/%s/%s", c->shapes, c->dtype);
        snprintf(keys[1], 600, "relu/%s/%s", out, c->dtype);
        return 2;
    }
    if (!strcmp(c->op, "linear")) {
        const char *last = strrchr(c->shapes, ',');
        if (!last)
            return 0;
        snprintf(keys[0], 600, "matmul/%.*s/%s", (int)(last - c->shapes),
                 c->shapes, c->dtype);
        snprintf(keys[1], 600, "add/%s%s/%s", out, last, c->dtype);
        snprintf(keys[2], 600, "relu/%s/%s", out, c->dtype);
        return 3;
    }
    return 0;
}

/* A counter per iteration of an ok case ("-" when not recorded). */
static char *counter_text(const tb_rcase *c, const char *name, char *buf,
                          size_t len)
{
    const cJSON *v = c->counters ? jget(c->counters, name) : NULL;
    if (cJSON_IsNumber(v))
        snprintf(buf, len, "%.3g", v->valuedouble);
    else
        snprintf(buf, len, "-");
    return buf;
}

/* Kernel launches per call that fusion saved, from CUPTI (the cupti
 * object of docs/FORMAT.md): "5 of 6 (83%)" when both cases have counts,
 * else "not measured: REASON" (the first side without them). */
static char *launches_saved(const tb_rcase *fused, const tb_rcase *unf,
                            char *buf, size_t len)
{
    const tb_rescase *side[2] = {fused->rc, unf->rc};
    for (int i = 0; i < 2; i++) {
        if (side[i]->cupti_state == TB_RES_CUPTI_VALID)
            continue;
        const char *why = side[i]->cupti_state == TB_RES_CUPTI_NULL
                              ? side[i]->cupti_reason
                              : "the result file has no CUPTI counts";
        snprintf(buf, len, "not measured: %s", why);
        for (char *p = buf; *p; p++)
            if (*p == '|' || *p == '\n') /* keep the table intact */
                *p = '/';
        return buf;
    }
    double f = fused->rc->cupti_ctr[TB_RES_CUPTI_LAUNCHES];
    double u = unf->rc->cupti_ctr[TB_RES_CUPTI_LAUNCHES];
    if (u > 0)
        snprintf(buf, len, "%.3g of %.3g (%.0f%%)", u - f, u,
                 100 * (u - f) / u);
    else
        snprintf(buf, len, "%.3g of %.3g", u - f, u);
    return buf;
}

/* The fused op of an unfused composition's case: "add_relu_unfused/..."
 * -> "add_relu/..." (same params, shapes and dtype). */
static const tb_rcase *fused_of(const tb_rset *s, const tb_rcase *c)
{
    const char *u = strstr(c->key, "_unfused");
    if (!u || strcmp(c->category ? c->category : "", "unfused"))
        return NULL;
    char key[600];
    snprintf(key, sizeof key, "%.*s%s", (int)(u - c->key), c->key,
             u + strlen("_unfused"));
    return find_key(s, c, key);
}

static void sec_fused(const ctx *x)
{
    const tb_rset *s = x->s;
    bool header = false;
    /* 1. The compositions timed as one unit (ops *_unfused): a kernel
     * and a new tensor per step, beside the fused kernel. */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *u = &s->cases[i];
        const tb_rcase *c = u->ok && in(u, M_MAIN | M_WITH)
                                ? fused_of(s, u)
                                : NULL;
        if (!c)
            continue;
        if (!header) {
            sb(x->b, "## Fused vs unfused\n\n"
                     "A fused op against its composition timed as one "
                     "unit (`*_unfused`: one kernel and one new "
                     "intermediate tensor per step, as an eager framework "
                     "runs it), on the same backend; launches and "
                     "allocations are per call, as counted (the "
                     "backend's count); launches saved are the kernels "
                     "the device ran, from CUPTI (`cupti` in the result "
                     "file).\n\n"
                     "| Op | Shapes | Dtype | Backend | Fused | Unfused "
                     "| Launches (fused / unfused) | Allocations (fused / "
                     "unfused) | Fused speedup | Launches saved "
                     "(CUPTI) |\n"
                     "|---|---|---|---|---|---|---|---|---|---|\n");
            header = true;
        }
        char f[32], g[32], r[32], l1[16], l2[16], a1[16], a2[16],
            sv[300];
        sb(x->b, "| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | "
                 "%sx | %s |\n",
           c->opp, c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, f, sizeof f),
           tb_report_fmt_time(u->median, c->median, g, sizeof g),
           counter_text(c, "kernel_launches", l1, sizeof l1),
           counter_text(u, "kernel_launches", l2, sizeof l2),
           counter_text(c, "allocs", a1, sizeof a1),
           counter_text(u, "allocs", a2, sizeof a2),
           fmt_num(u->median / c->median, r, sizeof r),
           launches_saved(c, u, sv, sizeof sv));
    }
    if (header)
        sb(x->b, "\n");
    bool header2 = false;
    /* 2. Against the separate ops' cases, where the run has them. */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        char keys[3][600];
        int nk = c->ok && in(c, M_MAIN | M_WITH) ? unfused_keys(c, keys) : 0;
        const tb_rcase *part[3];
        double sum = 0;
        int k = 0;
        for (; k < nk; k++) {
            part[k] = find_key(s, c, keys[k]);
            if (!part[k])
                break;
            sum += part[k]->median;
        }
        if (nk == 0 || k < nk)
            continue;
        if (!header2) {
            sb(x->b, "%s"
                     "A fused op against the ops it replaces, run one after "
                     "the other on the same backend (sum of their medians; "
                     "the intermediate results go through memory): "
                     "add_relu = add + relu, linear = matmul + add + relu."
                     "\n\n| Op | Shapes | Dtype | Backend | Fused | Unfused "
                     "| Unfused ops | Fused speedup |\n"
                     "|---|---|---|---|---|---|---|---|\n",
               header ? "" : "## Fused vs unfused\n\n");
            header2 = true;
        }
        char f[32], g[32], r[32];
        sb(x->b, "| %s | %s | %s | %s | %s | %s | ", c->opp, c->shapes,
           c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, f, sizeof f),
           tb_report_fmt_time(sum, c->median, g, sizeof g));
        for (k = 0; k < nk; k++) {
            char m[32];
            sb(x->b, "%s%s %s", k ? " + " : "", part[k]->op,
               tb_report_fmt_time(part[k]->median, c->median, m, sizeof m));
        }
        sb(x->b, " | %sx |\n", fmt_num(sum / c->median, r, sizeof r));
    }
    if (header2)
        sb(x->b, "\n");
}

/* ---- scaling anomalies --------------------------------------------------- */

/* "minor_faults 0 → 12, invol_ctx_switches 0 → 0.5" for the counters
 * that can explain a slow size, where either side is not zero. */
static void recorded_causes(const tb_rcase *a, const tb_rcase *z, char *buf,
                            size_t len)
{
    static const char *const names[] = {"minor_faults", "major_faults",
                                        "vol_ctx_switches",
                                        "invol_ctx_switches",
                                        "cpu_migrations"};
    size_t u = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        double va = tb_json_num(a->counters, names[k]),
               vz = tb_json_num(z->counters, names[k]);
        if ((isnan(va) || va == 0) && (isnan(vz) || vz == 0))
            continue;
        char fa[32], fz[32];
        if (u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s%s %s → %s",
                                  u ? ", " : "", names[k],
                                  fmt_num(va, fa, sizeof fa),
                                  fmt_num(vz, fz, sizeof fz));
    }
    if (!u)
        snprintf(buf, len, "none of them recorded");
}

static void sec_scaling(const ctx *x)
{
    const tb_rset *s = x->s;
    double lim = x->o->anomaly > 0 ? x->o->anomaly : 3;
    int pairs = 0, flagged = 0;
    double worst = 0;
    sbuf rows = {0};
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_MAIN) || seen_before(s, i, M_MAIN, F_SERIES,
                                                     true))
            continue;
        int *v;
        int n = collect_sorted(s, i, M_MAIN, F_SERIES, &v);
        for (int k = 1; k < n; k++) {
            const tb_rcase *a = &s->cases[v[k - 1]], *z = &s->cases[v[k]];
            double rw = work_of(z) / work_of(a), rt = z->median / a->median;
            if (!(rw > 1) || !(a->median > 0))
                continue;
            pairs++;
            if (rt / rw > worst)
                worst = rt / rw;
            if (!(rt > lim * rw))
                continue;
            flagged++;
            char w1[32], t1[32], why[512];
            recorded_causes(a, z, why, sizeof why);
            sb(&rows, "| %s | %s | %s | %s | %s | %sx | %sx | %s |\n",
               a->opp, a->dtype, a->variant, a->shapes, z->shapes,
               fmt_num(rw, w1, sizeof w1), fmt_num(rt, t1, sizeof t1), why);
        }
        free(v);
    }
    if (pairs == 0 || rows.oom) {
        free(rows.p);
        return;
    }
    char l[32], w[32];
    sb(x->b, "## Scaling anomalies\n\n"
             "Between consecutive measured sizes of the same op, parameters, "
             "dtype and backend, a case is flagged when its time grows more "
             "than %s times faster than its work (FLOPs, else bytes of the "
             "cost model). Next to it, what the run recorded per call that "
             "can explain it: page faults, context switches (voluntary: the "
             "thread waited; involuntary: it was preempted) and CPU "
             "migrations, at the smaller size → the larger, where either is "
             "not zero.\n\n",
       fmt_num(lim, l, sizeof l));
    if (flagged)
        sb(x->b, "| Op | Dtype | Backend | From | To | Work grew | Time grew "
                 "| Recorded per call |\n"
                 "|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    else
        sb(x->b, "None of the %d pairs of consecutive sizes: time grew at "
                 "most %sx as fast as work.\n\n",
           pairs, fmt_num(worst, w, sizeof w));
    free(rows.p);
}

/* ---- threads slower than one --------------------------------------------- */

/* variant with its "threads=N" replaced by "threads=1" in buf; false
 * when it has no threads axis or already is threads=1. */
static bool one_thread_variant(const char *v, char *buf, size_t len)
{
    const char *t = strstr(v, "threads=");
    if (!t)
        return false;
    const char *n = t + 8;
    size_t d = strspn(n, "0123456789");
    if (d == 0 || (d == 1 && n[0] == '1'))
        return false;
    snprintf(buf, len, "%.*s1%s", (int)(n - v), v, n + d);
    return true;
}

/* Cases whose threads=N run is significantly slower than the same case
 * at threads=1 (compare's test), with the context switches per call the
 * run recorded on both sides: the usual cause on a loaded machine is a
 * thread that waits for a core. */
static void sec_threads(const ctx *x)
{
    const tb_rset *s = x->s;
    sbuf rows = {0};
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        char v1[256];
        if (!c->ok || !in(c, M_MAIN) ||
            !one_thread_variant(c->variant, v1, sizeof v1))
            continue;
        const tb_rcase *one = NULL;
        for (int k = 0; k < s->n && !one; k++) {
            const tb_rcase *d = &s->cases[k];
            if (d->ok && d->doc == c->doc && !strcmp(d->key, c->key) &&
                !strcmp(d->variant, v1))
                one = d;
        }
        double p;
        if (!one || significance(c, one, &p) >= 0)
            continue;
        char a[32], b[32], r[32], w1[32], w2[32], i1[32], i2[32];
        sb(&rows, "| %s | %s | %s | %s | %s | %s | %sx | %s → %s | %s → %s "
                  "|\n",
           c->opp, c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(one->median, one->median, a, sizeof a),
           tb_report_fmt_time(c->median, c->median, b, sizeof b),
           fmt_num(c->median / one->median, r, sizeof r),
           fmt_num(tb_json_num(one->counters, "vol_ctx_switches"), w1,
                   sizeof w1),
           fmt_num(tb_json_num(c->counters, "vol_ctx_switches"), w2,
                   sizeof w2),
           fmt_num(tb_json_num(one->counters, "invol_ctx_switches"), i1,
                   sizeof i1),
           fmt_num(tb_json_num(c->counters, "invol_ctx_switches"), i2,
                   sizeof i2));
        n++;
    }
    if (n && !rows.oom)
        sb(x->b, "## More threads, slower\n\n"
                 "Cases that ran significantly slower (the test `tbench "
                 "compare` uses) with several threads than with one, and "
                 "the context switches per call recorded for each: "
                 "voluntary ones mean a thread waited (for a core or for "
                 "the others), involuntary ones that it was preempted. On "
                 "a machine where other work holds a core, a second thread "
                 "costs more than it brings.\n\n"
                 "| Op | Shapes | Dtype | Backend | 1 thread | This | "
                 "Slower by | Voluntary switches/call (1 → this) | "
                 "Involuntary (1 → this) |\n"
                 "|---|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    free(rows.p);
}

/* ---- noise ---------------------------------------------------------------- */

static void sec_noise(const ctx *x)
{
    const tb_rset *s = x->s;
    int want = x->o->n_noisy > 0 ? x->o->n_noisy : 8;
    int *idx = malloc((size_t)(s->n ? s->n : 1) * sizeof *idx);
    int n = 0;
    if (!idx)
        return;
    for (int i = 0; i < s->n; i++)
        if (s->cases[i].ok && in(&s->cases[i], M_MAIN) &&
            s->cases[i].median > 0)
            idx[n++] = i;
    if (n == 0) {
        free(idx);
        return;
    }
    /* descending MAD/median, stable */
    for (int a = 1; a < n; a++) {
        int v = idx[a], b = a - 1;
        double kv = s->cases[v].mad / s->cases[v].median;
        while (b >= 0 && s->cases[idx[b]].mad / s->cases[idx[b]].median < kv) {
            idx[b + 1] = idx[b];
            b--;
        }
        idx[b + 1] = v;
    }
    if (n > want)
        n = want;
    sb(x->b, "## Noisiest cases\n\n"
             "The %d case%s with the largest spread of samples (MAD / "
             "median). Outliers are Tukey's (beyond 1.5 IQR; severe beyond "
             "3 IQR).\n\n"
             "| Case | Median | MAD / median | 95%% CI width | p5 – p95 | "
             "Outliers low / high (severe) | Stopped by |\n"
             "|---|---|---|---|---|---|---|\n",
       n, n == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        const tb_rcase *c = &s->cases[idx[k]];
        const cJSON *o = jget(jget(c->j, "stats"), "outliers");
        char m[32], p5[32], p95[32];
        sb(x->b, "| `%s` | %s | %.1f%% | %.1f%% | %s – %s | %.0f / %.0f "
                 "(%.0f / %.0f) | %s |\n",
           c->id, tb_report_fmt_time(c->median, c->median, m, sizeof m),
           100 * c->mad / c->median, 100 * c->ci_rel,
           tb_report_fmt_time(c->p5, c->median, p5, sizeof p5),
           tb_report_fmt_time(c->p95, c->median, p95, sizeof p95),
           tb_json_num(o, "low_mild") + tb_json_num(o, "low_severe"),
           tb_json_num(o, "high_mild") + tb_json_num(o, "high_severe"),
           tb_json_num(o, "low_severe"), tb_json_num(o, "high_severe"),
           c->stop_reason ? c->stop_reason : "?");
    }
    sb(x->b, "\n");
    free(idx);
    chart_link(x, find_chart(x, TB_CHART_NOISE, NULL));
}

/* ---- cases that did not run ---------------------------------------------- */

/* The meaning of the other statuses that cases of mask have. */
static void not_run_more(const ctx *x, unsigned mask)
{
    static const struct {
        const char *status, *meaning;
    } more[] = {
        {"error", "the kernel or the backend failed"},
        {"crashed", "the worker process running the case died (the message "
                    "names the signal and the phase: check, warmup or "
                    "sampling)"},
        {"timeout", "the case passed its time limit and its worker was "
                    "killed"},
        {"skipped", "the case was not run"},
    };
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
        bool have = false;
        for (int i = 0; i < x->s->n && !have; i++)
            have = in(&x->s->cases[i], mask) &&
                   !strcmp(x->s->cases[i].status, more[k].status);
        if (have)
            sb(x->b, "; `%s`: %s", more[k].status, more[k].meaning);
    }
}

static void sec_not_run(const ctx *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool header = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (c->ok || !in(c, mask))
            continue;
        /* group by document, backend variant, status and message */
        bool dup = false;
        for (int k = 0; k < i && !dup; k++) {
            const tb_rcase *d = &s->cases[k];
            dup = !d->ok && in(d, mask) && d->doc == c->doc &&
                  !strcmp(d->variant, c->variant) &&
                  !strcmp(d->status, c->status) &&
                  !strcmp(d->message ? d->message : "",
                          c->message ? c->message : "");
        }
        if (dup)
            continue;
        int count = 0;
        for (int k = i; k < s->n; k++) {
            const tb_rcase *d = &s->cases[k];
            count += !d->ok && in(d, mask) && d->doc == c->doc &&
                     !strcmp(d->variant, c->variant) &&
                     !strcmp(d->status, c->status) &&
                     !strcmp(d->message ? d->message : "",
                             c->message ? c->message : "");
        }
        if (!header) {
            sb(x->b, "## Cases that did not run\n\n"
                     "Not timed, so absent from every table above: "
                     "`failed-check` failed its correctness check against "
                     "the reference; `unsupported` means the backend has no "
                     "kernel for it; `unavailable` means the backend cannot "
                     "run on this machine");
            not_run_more(x, mask);
            sb(x->b, ".\n\n"
                     "| Backend | Status | Cases | First case | Message |\n"
                     "|---|---|---|---|---|\n");
            header = true;
        }
        char m[600];
        sb(x->b, "| %s | %s | %d | `%s` | %s |\n", c->variant, c->status,
           count, c->id, cell(c->message ? c->message : "", m, sizeof m));
    }
    if (header)
        sb(x->b, "\n");
}

/* ---- baseline -------------------------------------------------------------- */

/* Is this compare verdict one that `tbench compare` fails on? */
static bool verdict_bad(const tb_cmp_case *k)
{
    return k->time == TB_TIME_REGRESSED || k->schg == TB_SCHG_FAILURE ||
           (k->time == TB_TIME_UNCHANGED && k->ctr_regressed);
}

/* A side of a case in the baseline table: its median, or its status. */
static const char *side_text(const char *status, double median,
                             double scale, char *buf, size_t len)
{
    if (strcmp(status, "ok"))
        return status;
    return tb_report_fmt_time(median, scale, buf, len);
}

static void sec_baseline(const ctx *x)
{
    const tb_cmp *cmp = x->o->baseline;
    if (!cmp || x->base_doc < 0)
        return;
    sbuf *b = x->b;
    sbuf rows = {0};
    for (int i = 0; i < cmp->n; i++) {
        const tb_cmp_case *k = &cmp->cases[i];
        if (k->presence != TB_CMP_BOTH ||
            (k->time == TB_TIME_NA && k->schg == TB_SCHG_SAME))
            continue; /* in one file only, or not run in either */
        const char *v = tb_cmp_case_verdict(k);
        const char *em = verdict_bad(k) ? "**" : "";
        char m1[32], m2[32];
        if (k->time == TB_TIME_NA) {
            const tb_rescase *o = tb_resfile_find(cmp->old_files[0], k->id);
            const tb_rescase *c = tb_resfile_find(cmp->new_files[0], k->id);
            sb(&rows, "| `%s` | %s | %s | | | | | %s%s%s |\n", k->id,
               side_text(o->status, o->median_ns, o->median_ns, m1,
                         sizeof m1),
               side_text(c->status, c->median_ns, c->median_ns, m2,
                         sizeof m2),
               em, v, em);
            continue;
        }
        char ch[32], l[32], h[32], fl[32], p[32];
        if (k->p < 0.001)
            snprintf(p, sizeof p, "%.0e", k->p);
        else
            snprintf(p, sizeof p, "%.3f", k->p);
        snprintf(fl, sizeof fl, "%.1f%%", 100 * k->floor);
        sb(&rows, "| `%s` | %s | %s | %s | %s … %s | %s | %s | %s%s%s |\n",
           k->id,
           tb_report_fmt_time(k->old_median, k->old_median, m1, sizeof m1),
           tb_report_fmt_time(k->new_median, k->old_median, m2, sizeof m2),
           fmt_pct(k->change, ch, sizeof ch), fmt_pct(k->ci_lo, l, sizeof l),
           fmt_pct(k->ci_hi, h, sizeof h), p, fl, em, v, em);
    }
    const char *commit = cmp->old_files[0]->git_commit;
    char t[32];
    snprintf(t, sizeof t, "%g", 100 * cmp->opts.threshold);
    sb(b, "## Comparison with the baseline\n\n"
          "Baseline: `%s`%s%s%s. The verdicts are those of `tbench compare "
          "%s %s --threshold %s` (docs/FORMAT.md, \"compare\"): change = "
          "current median / baseline median - 1, with a 95%% bootstrap CI "
          "of that ratio; p is a two-sided Mann-Whitney test on the raw "
          "samples; the floor is the largest of the threshold (%s%%) and "
          "the runs' own noise. Regressed (improved) only when the change "
          "is beyond the floor, p < %g and the CI lies above (below) 0; "
          "`failure` when a case that ran no longer does or newly fails "
          "(`failed-check`, `error`, `crashed`, `timeout`); `counters` "
          "when an exact per-iteration counter grew.\n\n",
       cmp->old_files[0]->path, commit ? " (commit " : "",
       commit ? commit : "", commit ? ")" : "", cmp->old_files[0]->path,
       cmp->new_files[0]->path, t, t, cmp->opts.alpha);
    sb(b, "%d regressed, %d improved, %d unchanged; %d status failure%s, "
          "%d counter regression%s; %d case%s only in the current run, %d "
          "only in the baseline.\n\n",
       cmp->n_regressed, cmp->n_improved, cmp->n_unchanged, cmp->n_failures,
       cmp->n_failures == 1 ? "" : "s", cmp->n_ctr_regressed,
       cmp->n_ctr_regressed == 1 ? "" : "s", cmp->n_added,
       cmp->n_added == 1 ? "" : "s", cmp->n_removed);
    if (rows.n)
        sb(b, "| Case | Baseline | Current | Change | 95%% CI | p | Floor | "
              "Verdict |\n|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    free(rows.p);
    chart_link(x, find_chart(x, TB_CHART_CHANGE, NULL));
}

/* ---- side by side with NumPy / PyTorch ------------------------------------ */

#define MAX_COLS 16

static void sec_with(const ctx *x)
{
    const tb_rset *s = x->s;
    char cols[MAX_COLS][128];
    int ncol = 0;
    bool any = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in(c, M_WITH))
            continue;
        any = true;
        if (!c->ok)
            continue;
        char l[128];
        column_label(c, l, sizeof l);
        int k = 0;
        while (k < ncol && strcmp(cols[k], l))
            k++;
        if (k == ncol && ncol < MAX_COLS)
            snprintf(cols[ncol++], sizeof cols[0], "%s", l);
    }
    if (!any)
        return;
    sbuf *b = x->b;
    sb(b, "## Side by side with NumPy and PyTorch\n\n");
    for (int d = 0; d < s->n_docs; d++) {
        if (s->docs[d].role != TB_ROLE_WITH)
            continue;
        const cJSON *env = doc_env(x, d);
        char t[600];
        sb(b, "From `%s`", s->docs[d].file->path);
        const cJSON *libs = jget(env, "libraries");
        if (cJSON_IsObject(libs) && libs->child) {
            const cJSON *l;
            bool first = true;
            sb(b, " (");
            cJSON_ArrayForEach(l, libs)
            {
                if (cJSON_IsNull(l))
                    continue;
                sb(b, "%s%s %s", first ? "" : ", ", l->string,
                   value_text(l, t, sizeof t));
                first = false;
            }
            sb(b, ")");
        }
        sb(b, ".\n");
        const cJSON *ov = jget(env, "python_overhead");
        if (cJSON_IsObject(ov)) {
            const cJSON *v;
            sb(b, "\nPer-call overhead of the Python layer, measured by the "
                  "script%s%s%s; the library times below include it, which "
                  "matters at small sizes:\n\n| Call | Median |\n|---|---|\n",
               tb_json_str(ov, "method") ? " (" : "",
               tb_json_str(ov, "method") ? tb_json_str(ov, "method") : "",
               tb_json_str(ov, "method") ? ")" : "");
            cJSON_ArrayForEach(v, ov)
            {
                if (!cJSON_IsNumber(v))
                    continue;
                char m[32], name[128];
                snprintf(name, sizeof name, "%s", v->string);
                size_t nl = strlen(name);
                if (nl > 3 && !strcmp(name + nl - 3, "_ns"))
                    name[nl - 3] = '\0';
                for (char *q = name; *q; q++)
                    if (*q == '_')
                        *q = ' ';
                sb(b, "| %s | %s |\n", name,
                   tb_report_fmt_time(v->valuedouble, v->valuedouble, m,
                                      sizeof m));
            }
        }
        sb(b, "\n");
    }
    /* backends of WITH files that did not run */
    bool bullets = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in(c, M_WITH) || strcmp(c->status, "unavailable"))
            continue;
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = in(&s->cases[k], M_WITH) &&
                  !strcmp(s->cases[k].status, "unavailable") &&
                  !strcmp(s->cases[k].backend, c->backend);
        if (!dup) {
            char m[600];
            sb(b, "- `%s` is unavailable: %s\n", c->backend,
               cell(c->message ? c->message : "no reason given", m,
                    sizeof m));
            bullets = true;
        }
    }
    if (bullets)
        sb(b, "\n");
    if (ncol == 0)
        return;
    sb(b, "Each row pairs a thread count of the library with the fastest "
          "tbench backend that ran with as many threads (or, when tbench "
          "did not run that count, the fastest at any count). \"tbench speedup\" = fastest library median / tbench "
          "median (above 1: tbench is faster).\n\n"
          "| Op | Shapes | Dtype | Threads | tbench | tbench median |");
    for (int k = 0; k < ncol; k++)
        sb(b, " %s |", cols[k]);
    sb(b, " tbench speedup |\n|---|---|---|---|---|---|");
    for (int k = 0; k < ncol; k++)
        sb(b, "---|");
    sb(b, "---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !in(c, M_WITH))
            continue;
        /* one row per (key, threads): first occurrence only */
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = s->cases[k].ok && in(&s->cases[k], M_WITH) &&
                  !strcmp(s->cases[k].key, c->key) &&
                  !strcmp(threads_of(&s->cases[k]), threads_of(c));
        if (dup)
            continue;
        const tb_rcase *tb = NULL, *any_tb = NULL;
        for (int k = 0; k < s->n; k++) {
            const tb_rcase *d = &s->cases[k];
            if (!d->ok || !in(d, M_MAIN) || strcmp(d->key, c->key))
                continue;
            if (!any_tb || d->median < any_tb->median)
                any_tb = d;
            const char *dt = tb_json_str(jget(d->j, "backend_params"), "threads");
            if ((!dt || !strcmp(dt, threads_of(c))) &&
                (!tb || d->median < tb->median))
                tb = d;
        }
        if (!tb)
            tb = any_tb;
        if (!tb)
            continue;
        char m[32];
        sb(b, "| %s | %s | %s | %s | %s | %s |", c->opp, c->shapes, c->dtype,
           threads_of(c)[0] ? threads_of(c) : "-", tb->variant,
           tb_report_fmt_time(tb->median, tb->median, m, sizeof m));
        double best = NAN;
        for (int col = 0; col < ncol; col++) {
            const tb_rcase *w = NULL;
            for (int k = 0; k < s->n && !w; k++) {
                const tb_rcase *d = &s->cases[k];
                char l[128];
                if (!d->ok || !in(d, M_WITH) || strcmp(d->key, c->key) ||
                    strcmp(threads_of(d), threads_of(c)))
                    continue;
                column_label(d, l, sizeof l);
                if (!strcmp(l, cols[col]))
                    w = d;
            }
            if (w) {
                sb(b, " %s |", tb_report_fmt_time(w->median, tb->median, m,
                                                  sizeof m));
                if (isnan(best) || w->median < best)
                    best = w->median;
            } else {
                sb(b, " |");
            }
        }
        sb(b, " %sx |\n", fmt_num(best / tb->median, m, sizeof m));
    }
    sb(b, "\n");
}

/* ---- training workloads (training.c) ------------------------------------- */

static void sec_training(const ctx *x)
{
    char *md = NULL;
    if (tb_report_training(x->s, x->o->charts, x->o->chart_dir, &md)) {
        x->b->oom = true;
        return;
    }
    sb(x->b, "%s", md);
    free(md);
}

/* ---- the whole report ----------------------------------------------------- */

int tb_report_markdown(const tb_rset *s, const tb_report_opts *o, char **md)
{
    *md = NULL;
    ctx x = {s, o, NULL, -1, -1};
    for (int d = 0; d < s->n_docs; d++) {
        if (s->docs[d].role == TB_ROLE_MAIN && x.main_doc < 0)
            x.main_doc = d;
        if (s->docs[d].role == TB_ROLE_BASELINE && x.base_doc < 0)
            x.base_doc = d;
    }
    if (x.main_doc < 0)
        return TB_EINVAL;
    sbuf b = {0};
    x.b = &b;
    sb(&b, "# tbench performance report\n\n");
    sb(&b, "Generated by `%s`", o->command ? o->command : "tbench report");
    if (o->generated_by)
        sb(&b, ", run by `%s`", o->generated_by);
    sb(&b, " from `%s`. Do not edit this file by hand: run that command "
           "again.\n\n",
       s->docs[x.main_doc].file->path);
    sb(&b, "Every figure here is read from the result files named in it and "
           "was measured on the machine described under Environment; "
           "nothing is estimated or extrapolated. Times are medians of "
           "per-call samples; intervals are 95%% bootstrap confidence "
           "intervals of the median.\n\n");
    sec_reproduce(&x);
    sec_build(&x);
    sec_environment(&x);
    sec_summary(&x);
    sec_categories(&x);
    sec_speedups(&x);
    sec_transfers(&x);
    sec_counters(&x);
    sec_fused(&x);
    sec_scaling(&x);
    sec_threads(&x);
    sec_baseline(&x);
    sec_with(&x);
    sec_training(&x);
    sec_noise(&x);
    sec_not_run(&x);
    if (b.oom) {
        free(b.p);
        return TB_ENOMEM;
    }
    /* one trailing newline */
    while (b.n > 1 && b.p[b.n - 1] == '\n' && b.p[b.n - 2] == '\n')
        b.p[--b.n] = '\0';
    *md = b.p;
    return 0;
}
