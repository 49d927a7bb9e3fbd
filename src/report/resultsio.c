/* Loading and checking result files: see resultsio.h. */
#include "resultsio.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/error.h"
#include "../base/fileio.h"

#define SCHEMA "tbench.results/1"

const char *tb_res_counter_name(int k)
{
    static const char *const names[] = {
#define TB_RES_CTR_NAME(e, s) s,
        TB_RES_COUNTERS(TB_RES_CTR_NAME)
#undef TB_RES_CTR_NAME
    };
    return k >= 0 && k < TB_RES_NCOUNTERS ? names[k] : "?";
}

const char *tb_resfile_resolve(const char *arg, char *buf, size_t len)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t l = strlen(arg);
        snprintf(buf, len, "%s%sresults.json", arg,
                 l && arg[l - 1] == '/' ? "" : "/");
    } else {
        snprintf(buf, len, "%s", arg);
    }
    return buf;
}

/* err = "PATH: " + printf(fmt, ...). Returns code. */
static int fail(char *err, size_t errlen, const char *path, int code,
                const char *fmt, ...)
{
    int k = snprintf(err, errlen, "%s: ", path);
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Line and column (1-based) of offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

bool tb_res_status_known(const char *s)
{
    static const char *const names[] = {
#define TB_RES_STATUS_NAME(e, n) n,
        TB_RES_STATUSES(TB_RES_STATUS_NAME)
#undef TB_RES_STATUS_NAME
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i]))
            return true;
    return false;
}

double tb_json_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble
                                                         : NAN;
}

const char *tb_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *tb_json_num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *tb_json_str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* Member k of o must be absent, null or a finite number: *out = value or
 * NAN.  Returns false when it is something else. */
static bool opt_num(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = NAN;
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

/* Check and extract the timing part of an "ok" record. */
static int load_timed(tb_rescase *c, int idx, const char *path, char *err,
                      size_t errlen)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(c->json, "stats");
    if (!cJSON_IsObject(st))
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): status is ok but stats is missing",
                    idx, c->id);
    static const char *const need[] = {"n", "iters_per_sample", "median_ns",
                                       "ci_low_ns", "ci_high_ns", "min_ns",
                                       "mean_ns"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, need[i]);
        if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): stats.%s: expected a finite "
                        "number, got %g", idx, c->id, need[i],
                        v->valuedouble);
        if (!cJSON_IsNumber(v))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): stats.%s: expected a number", idx,
                        c->id, need[i]);
    }
    double n = tb_json_num(st, "n");
    c->iters_per_sample = tb_json_num(st, "iters_per_sample");
    c->median_ns = tb_json_num(st, "median_ns");
    c->ci_low_ns = tb_json_num(st, "ci_low_ns");
    c->ci_high_ns = tb_json_num(st, "ci_high_ns");
    c->min_ns = tb_json_num(st, "min_ns");
    c->mean_ns = tb_json_num(st, "mean_ns");
    if (n < 1 || n != floor(n) || n > 1e9)
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats.n: expected an integer >= 1, "
                    "got %g", idx, c->id, n);
    if (c->iters_per_sample < 1)
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats.iters_per_sample: expected >= 1",
                    idx, c->id);
    if (!(c->median_ns > 0))
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats.median_ns: expected a positive "
                    "number, got %g", idx, c->id, c->median_ns);
    if (!(c->ci_low_ns <= c->median_ns && c->median_ns <= c->ci_high_ns))
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats: median_ns is outside "
                    "[ci_low_ns, ci_high_ns]", idx, c->id);
    c->ci_rel = (c->ci_high_ns - c->ci_low_ns) / c->median_ns;

    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(st, "samples_ns");
    if (!cJSON_IsArray(sa))
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats.samples_ns: expected an array",
                    idx, c->id);
    int ns = cJSON_GetArraySize(sa);
    if ((double)ns != n)
        return fail(err, errlen, path, TB_EINVAL,
                    "cases[%d] (%s): stats.n is %g but samples_ns has %d "
                    "values", idx, c->id, n, ns);
    c->n = (size_t)ns;
    c->samples_ns = malloc(c->n * sizeof *c->samples_ns);
    if (!c->samples_ns)
        return fail(err, errlen, path, TB_ENOMEM, "out of memory");
    const cJSON *v;
    size_t i = 0;
    cJSON_ArrayForEach(v, sa)
    {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): stats.samples_ns[%zu]: expected a "
                        "number", idx, c->id, i);
        c->samples_ns[i++] = v->valuedouble;
    }

    /* optional: the median of each round (measure.rounds) */
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(st,
                                                       "round_medians_ns");
    if (rm && !cJSON_IsNull(rm)) {
        int nr = cJSON_GetArraySize(rm);
        if (!cJSON_IsArray(rm) || nr < 1)
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): stats.round_medians_ns: expected a "
                        "non-empty array", idx, c->id);
        c->round_medians_ns = malloc((size_t)nr * sizeof(double));
        if (!c->round_medians_ns)
            return fail(err, errlen, path, TB_ENOMEM, "out of memory");
        cJSON_ArrayForEach(v, rm)
        {
            if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) ||
                !isfinite(v->valuedouble))
                return fail(err, errlen, path, TB_EINVAL,
                            "cases[%d] (%s): stats.round_medians_ns[%d]: "
                            "expected a positive number", idx, c->id,
                            c->n_rounds);
            c->round_medians_ns[c->n_rounds++] = v->valuedouble;
        }
    }

    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(c->json, "throughput");
    c->gb_s = c->gflop_s = c->items_s = NAN;
    if (tp && !cJSON_IsNull(tp)) {
        if (!cJSON_IsObject(tp) || !opt_num(tp, "gb_s", &c->gb_s) ||
            !opt_num(tp, "gflop_s", &c->gflop_s) ||
            !opt_num(tp, "items_s", &c->items_s))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): throughput: expected an object of "
                        "numbers or nulls", idx, c->id);
    }
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(c->json, "counters");
    if (ct && !cJSON_IsNull(ct)) {
        if (!cJSON_IsObject(ct))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): counters: expected an object", idx,
                        c->id);
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            if (!opt_num(ct, tb_res_counter_name(k), &c->counters[k]))
                return fail(err, errlen, path, TB_EINVAL,
                            "cases[%d] (%s): counters.%s: expected a number",
                            idx, c->id, tb_res_counter_name(k));
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(c->json,
                                                       "instructions");
    if (in && !cJSON_IsNull(in)) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(in, "source");
        const cJSON *isa = cJSON_GetObjectItemCaseSensitive(in, "isa");
        if (!cJSON_IsObject(in) ||
            !opt_num(in, "per_iter", &c->instructions) ||
            c->instructions < 0 ||
            (src && !cJSON_IsNull(src) && !cJSON_IsString(src)) ||
            (isa && !cJSON_IsNull(isa) && !cJSON_IsString(isa)))
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): instructions: expected an object "
                        "with per_iter a number >= 0 or null, source and "
                        "isa strings or null", idx, c->id);
        c->instr_source = cJSON_IsString(src) ? src->valuestring : NULL;
        c->instr_isa = cJSON_IsString(isa) ? isa->valuestring : NULL;
        if (!isnan(c->instructions) && !c->instr_source)
            return fail(err, errlen, path, TB_EINVAL,
                        "cases[%d] (%s): instructions: a per_iter count "
                        "needs its source", idx, c->id);
    }
    c->timed = true;
    return 0;
}

/* qsort_r comparator: case indices by id. */
static int cmp_by_id(const void *a, const void *b, void *ctx)
{
    const tb_resfile *f = ctx;
    return strcmp(f->cases[*(const int *)a].id,
                  f->cases[*(const int *)b].id);
}

/* Does text[0..len) end inside a string or an unclosed object/array?
 * (cJSON reports where the failing value starts, which does not tell a
 * cut-off file from a damaged one.) */
static bool ends_open(const char *text, size_t len)
{
    long depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth < 0) {
            return false;
        }
    }
    return in_str || depth > 0;
}

/* Parse text into f->doc with a precise message on failure. */
static int parse(tb_resfile *f, const char *text, size_t len, char *err,
                 size_t errlen)
{
    if (memchr(text, '\0', len))
        return fail(err, errlen, f->path, TB_EPARSE,
                    "corrupt: contains a NUL byte at offset %zu",
                    (size_t)((const char *)memchr(text, '\0', len) - text));
    size_t start = 0;
    while (start < len && strchr(" \t\r\n", text[start]))
        start++;
    if (start == len)
        return fail(err, errlen, f->path, TB_EPARSE,
                    len ? "only white space, not a result file"
                        : "empty file, not a result file");
    /* text[len] is a NUL; cJSON wants it counted */
    const char *end = NULL;
    f->doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (f->doc)
        return 0;
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    if (off >= len || ends_open(text, len))
        return fail(err, errlen, f->path, TB_EPARSE,
                    "truncated: the JSON ends after %zu bytes before the "
                    "document is complete", len);
    int line, col;
    line_col(text, off, &line, &col);
    return fail(err, errlen, f->path, TB_EPARSE,
                "corrupt: not valid JSON at line %d, column %d", line, col);
}

int tb_resfile_load(const char *arg, tb_resfile **out, char *err,
                    size_t errlen)
{
    char pbuf[4096];
    const char *path = tb_resfile_resolve(arg, pbuf, sizeof pbuf);
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = tb_read_file(path, &text, &len, err, errlen);
    if (rc)
        return rc;
    rc = tb_resfile_from_text(path, text, len, out, err, errlen);
    free(text);
    return rc;
}

int tb_resfile_from_text(const char *path, const char *text, size_t len,
                         tb_resfile **out, char *err, size_t errlen)
{
    *out = NULL;
    tb_resfile *f = calloc(1, sizeof *f);
    int rc;
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return fail(err, errlen, path, TB_ENOMEM, "out of memory");
    }
    if ((rc = parse(f, text, len, err, errlen)))
        goto bad;

    rc = TB_EINVAL;
    if (!cJSON_IsObject(f->doc)) {
        fail(err, errlen, path, rc, "not a tbench result file (the JSON "
             "is not an object)");
        goto bad;
    }
    const char *schema = tb_json_str(f->doc, "schema");
    if (!schema) {
        fail(err, errlen, path, rc, "not a tbench result file (no "
             "\"schema\" string; expected \"%s\")", SCHEMA);
        goto bad;
    }
    if (strcmp(schema, SCHEMA)) {
        fail(err, errlen, path, rc, "schema is \"%.100s\", expected \"%s\"",
             schema, SCHEMA);
        goto bad;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(f->doc, "cases");
    if (!cJSON_IsArray(cases)) {
        fail(err, errlen, path, rc, "\"cases\": expected an array");
        goto bad;
    }
    f->complete = cJSON_IsTrue(cJSON_GetObjectItem(f->doc, "complete"));
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(f->doc, "env");
    f->date = tb_json_str(env, "date");
    f->hostname = tb_json_str(env, "hostname");
    f->git_commit = tb_json_str(cJSON_GetObjectItem(env, "build"),
                                "git_commit");
    f->cpu_model = tb_json_str(cJSON_GetObjectItem(env, "cpu"), "model");

    int n = cJSON_GetArraySize(cases);
    f->cases = calloc((size_t)(n ? n : 1), sizeof *f->cases);
    f->by_id = calloc((size_t)(n ? n : 1), sizeof *f->by_id);
    if (!f->cases || !f->by_id) {
        rc = fail(err, errlen, path, TB_ENOMEM, "out of memory");
        goto bad;
    }
    const cJSON *cj;
    cJSON_ArrayForEach(cj, cases)
    {
        int i = f->n;
        tb_rescase *c = &f->cases[i];
        f->n++;
        c->json = cj;
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            c->counters[k] = NAN;
        c->bytes = c->flops = c->items = NAN;
        c->gb_s = c->gflop_s = c->items_s = NAN;
        c->instructions = NAN;
        if (!cJSON_IsObject(cj)) {
            fail(err, errlen, path, rc, "cases[%d]: expected an object", i);
            goto bad;
        }
        c->id = tb_json_str(cj, "id");
        if (!c->id || !c->id[0]) {
            fail(err, errlen, path, rc, "cases[%d]: no \"id\" string", i);
            goto bad;
        }
        static const char *const need[] = {"op", "dtype", "backend",
                                           "status"};
        const char **dst[] = {&c->op, &c->dtype, &c->backend, &c->status};
        for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
            *dst[k] = tb_json_str(cj, need[k]);
            if (!*dst[k] || !*dst[k][0]) {
                fail(err, errlen, path, rc, "cases[%d] (%s): no \"%s\" "
                     "string", i, c->id, need[k]);
                goto bad;
            }
        }
        if (!tb_res_status_known(c->status)) {
#define TB_RES_STATUS_WORD(e, n) " " n
            fail(err, errlen, path, rc, "cases[%d] (%s): unknown status "
                 "\"%.40s\" (expected one of:" TB_RES_STATUSES(
                     TB_RES_STATUS_WORD) ")", i, c->id, c->status);
#undef TB_RES_STATUS_WORD
            goto bad;
        }
        c->message = tb_json_str(cj, "message");
        c->impl = tb_json_str(cj, "impl");
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(cj, "model");
        c->bytes = tb_json_num(md, "bytes");
        c->flops = tb_json_num(md, "flops");
        c->items = tb_json_num(md, "items");
        if (!strcmp(c->status, "ok") &&
            (rc = load_timed(c, i, path, err, errlen)))
            goto bad;
        rc = TB_EINVAL;
        f->by_id[i] = i;
    }
    qsort_r(f->by_id, (size_t)f->n, sizeof *f->by_id, cmp_by_id, f);
    for (int i = 1; i < f->n; i++) {
        int a = f->by_id[i - 1], b = f->by_id[i];
        if (!strcmp(f->cases[a].id, f->cases[b].id)) {
            fail(err, errlen, path, rc, "cases[%d]: id '%s' already used by "
                 "cases[%d]", a > b ? a : b, f->cases[a].id, a < b ? a : b);
            goto bad;
        }
    }
    *out = f;
    return 0;
bad:
    tb_resfile_free(f);
    return rc;
}

void tb_resfile_free(tb_resfile *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n; i++) {
        free(f->cases[i].samples_ns);
        free(f->cases[i].round_medians_ns);
    }
    free(f->cases);
    free(f->by_id);
    cJSON_Delete(f->doc);
    free(f->path);
    free(f);
}

const tb_rescase *tb_resfile_find(const tb_resfile *f, const char *id)
{
    int lo = 0, hi = f->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const tb_rescase *c = &f->cases[f->by_id[mid]];
        int d = strcmp(id, c->id);
        if (!d)
            return c;
        if (d < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return NULL;
}

typedef struct {
    const char *id;
    size_t order;
} idref;

static int cmp_idref(const void *pa, const void *pb)
{
    const idref *a = pa, *b = pb;
    int d = strcmp(a->id, b->id);
    return d ? d : (a->order > b->order) - (a->order < b->order);
}

static int cmp_order(const void *pa, const void *pb)
{
    const idref *a = pa, *b = pb;
    return (a->order > b->order) - (a->order < b->order);
}

int tb_resfile_union_ids(tb_resfile *const *f, int k, const char ***ids,
                         int *n)
{
    size_t total = 0, m = 0, u = 0;
    for (int j = 0; j < k; j++)
        total += (size_t)f[j]->n;
    idref *r = malloc((total ? total : 1) * sizeof *r);
    const char **out = malloc((total ? total : 1) * sizeof *out);
    if (!r || !out) {
        free(r);
        free(out);
        return TB_ENOMEM;
    }
    for (int j = 0; j < k; j++)
        for (int i = 0; i < f[j]->n; i++, m++)
            r[m] = (idref){f[j]->cases[i].id, m};
    /* sort by id (then order), keep the first of each id, restore order */
    qsort(r, total, sizeof *r, cmp_idref);
    for (size_t i = 0; i < total; i++)
        if (!u || strcmp(r[i].id, r[u - 1].id))
            r[u++] = r[i];
    qsort(r, u, sizeof *r, cmp_order);
    for (size_t i = 0; i < u; i++)
        out[i] = r[i].id;
    free(r);
    *ids = out;
    *n = (int)u;
    return 0;
}

bool tb_resfile_shares_id(const tb_resfile *f, tb_resfile *const *g, int k)
{
    for (int i = 0; i < f->n; i++)
        for (int j = 0; j < k; j++)
            if (g[j] != f && tb_resfile_find(g[j], f->cases[i].id))
                return true;
    return false;
}
